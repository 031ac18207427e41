import { assertEquals } from "../../_helpers/assert.ts";
import { scanText } from "../../../core/security/mod.ts";

Deno.test("scanText() finds a mailbox after a colon, and leaves a URL's user:secret@ to db_conn", async (t) => {
  const cases: { name: string; input: string; expected: string[] }[] = [
    { name: "grep output", input: "config.env:3:info@presidio.site", expected: ["email"] },
    { name: "a label without a space", input: "Email:jane.roe@acme-corp.io", expected: ["email"] },
    { name: "mailto", input: "mailto:jane.roe@acme-corp.io", expected: ["email"] },
    {
      name: "a credential URL",
      input: "redis://:p4ssw0rdR3dis@cache.internal:6379/0",
      expected: ["db_conn"],
    },
    {
      name: "a URL with a user and a password",
      input: "https://bob:hunter2x9@git.acme-corp.io/x",
      expected: ["db_conn"],
    },
  ];
  for (const c of cases) {
    await t.step(
      c.name,
      () => assertEquals(scanText(c.input).findings.map((f) => f.rule), c.expected),
    );
  }
});
