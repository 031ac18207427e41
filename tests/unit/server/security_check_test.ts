/** The security check off the main thread: the worker gives the same report as in process. */
import assert from "node:assert/strict";
import type { ChronicleStore } from "../../../core/store/mod.ts";
import { createCheckWorker } from "../../../server/check_runner.ts";
import { checkSession } from "../../../server/security_check.ts";
import { createSecurityService } from "../../../server/security_service.ts";
import { fixtureStore } from "./_helpers.ts";
import { FakeSecrets } from "../security/_fake_secrets.ts";

const store: ChronicleStore = await fixtureStore(["claude/s1-basic", "codex/s2-errors"]);

Deno.test("a check in the worker reports exactly what a check in process does", async () => {
  const worker = createCheckWorker();
  try {
    const inline = createSecurityService({ store });
    const offThread = createSecurityService({ store, runCheck: worker.run });
    inline.addRule({ name: "greeting", pattern: "hello*", action: "redact" });
    assert.deepEqual(await offThread.check({}), await inline.check({}));
  } finally {
    worker.close();
  }
});

Deno.test("a session whose check runs out of its budget is reported unfinished, never clean", () => {
  const id = store.listSessions({}).items[0].id;
  const session = store.loadSession(id)!;
  const fake = new FakeSecrets(3);
  session.operations[Object.keys(session.operations)[0]].text = "a".repeat(1 << 20) + fake.github();
  const report = checkSession({
    session,
    payloads: {},
    rules: [{ id: "r", name: "adversarial", pattern: "*a*a*a*b", action: "redact", enabled: true }],
    fallbackTitle: null,
    budgetMs: 0,
  });
  assert.match(report.unfinished ?? "", /ran out of its 0 ms budget/);
  assert.equal(report.total, 0);
});
