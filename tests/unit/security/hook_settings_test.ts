import { assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import {
  GUARD_MARKER,
  installedGuardCommand,
  planInstall,
  planUninstall,
} from "../../../core/security/mod.ts";

const REAL = await Deno.readTextFile(
  `${FIXTURES}/peers/claude-code-hooks/constructed/settings.json`,
);
const CMD = "/usr/local/bin/chronicle-guard";

Deno.test("planInstall() adds one PreToolUse entry and keeps every other hook", () => {
  const plan = planInstall(REAL, CMD);
  assertEquals(plan.changed, true);
  const before = JSON.parse(REAL);
  const after = JSON.parse(plan.text);
  const added = after.hooks.PreToolUse.pop();
  assertEquals(added, {
    matcher: "*",
    hooks: [{ type: "command", command: `${CMD} ${GUARD_MARKER}`, timeout: 10 }],
  });
  assertEquals(after, before);
  assertEquals(installedGuardCommand(plan.text), `${CMD} ${GUARD_MARKER}`);
});

Deno.test("planInstall() is idempotent and updates a changed command in place", () => {
  const once = planInstall(REAL, CMD).text;
  const twice = planInstall(once, CMD);
  assertEquals([twice.changed, twice.text], [false, once]);
  const moved = planInstall(once, "/opt/guard");
  assertEquals(moved.changed, true);
  const groups = JSON.parse(moved.text).hooks.PreToolUse;
  assertEquals(groups.length, 3);
  assertEquals(groups[2].hooks[0].command, `/opt/guard ${GUARD_MARKER}`);
});

Deno.test("planUninstall() removes exactly the guard entry: the round trip is the identity", () => {
  const installed = planInstall(REAL, CMD).text;
  const removed = planUninstall(installed);
  assertEquals(removed.changed, true);
  assertEquals(JSON.parse(removed.text), JSON.parse(REAL));
  assertEquals(planUninstall(removed.text).changed, false);
  assertEquals(installedGuardCommand(removed.text), null);
});

Deno.test("planUninstall() keeps a user's hook that shares the group with ours", () => {
  const shared = JSON.stringify({
    hooks: {
      PreToolUse: [{
        matcher: "*",
        hooks: [
          { type: "command", command: "mine.sh" },
          { type: "command", command: `x ${GUARD_MARKER}` },
        ],
      }],
    },
    model: "opus",
  });
  assertEquals(JSON.parse(planUninstall(shared).text), {
    hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "mine.sh" }] }] },
    model: "opus",
  });
});

Deno.test("install and uninstall on a missing or empty settings file", () => {
  const created = planInstall(null, CMD);
  assertEquals(Object.keys(JSON.parse(created.text)), ["hooks"]);
  assertEquals(JSON.parse(planUninstall(created.text).text), {});
  assertEquals(planUninstall(null).changed, false);
  assertEquals(planInstall("", CMD).changed, true);
});

Deno.test("malformed settings are reported, never rewritten", async (t) => {
  const table = [
    ['{"hooks": {', "not valid JSON"],
    ["[1, 2]", "not a JSON object"],
    ['{"hooks": []}', '"hooks" is not an object'],
    ['{"hooks": {"PreToolUse": {}}}', '"hooks.PreToolUse" is not a list'],
  ];
  for (const [text, why] of table) {
    await t.step(why, () => {
      for (
        const plan of [
          () => planInstall(text, CMD, "/h/s.json"),
          () => planUninstall(text, "/h/s.json"),
        ]
      ) {
        const e = assertThrows(plan, SyntaxError);
        assertEquals(e.message.startsWith('Cannot read "/h/s.json": '), true);
        assertEquals(e.message.includes(why), true, e.message);
      }
    });
  }
});
