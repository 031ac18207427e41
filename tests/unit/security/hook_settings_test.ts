import { assertEquals, assertStringIncludes, assertThrows } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { hasGuardHook, planInstall, planUninstall } from "../../../core/security/mod.ts";

const REAL = await Deno.readTextFile(
  `${FIXTURES}/peers/claude-code-hooks/constructed/settings.json`,
);
const CMD = "/home/u/.chronicle/guard/chronicle-guard";

Deno.test("planInstall() adds one PreToolUse entry and keeps every other hook", () => {
  const plan = planInstall(REAL, CMD);
  assertEquals(plan.changed, true);
  const before = JSON.parse(REAL);
  const after = JSON.parse(plan.text);
  const added = after.hooks.PreToolUse.pop();
  assertEquals(added, { matcher: "*", hooks: [{ type: "command", command: CMD, timeout: 10 }] });
  assertEquals(after, before);
  assertEquals(hasGuardHook(plan.text, CMD), true);
});

Deno.test("planInstall() is idempotent; uninstall of it is the identity on the text", () => {
  const once = planInstall(REAL, CMD).text;
  const twice = planInstall(once, CMD);
  assertEquals([twice.changed, twice.text], [false, once]);
  const removed = planUninstall(once, CMD);
  assertEquals(removed.changed, true);
  assertEquals(JSON.parse(removed.text), JSON.parse(REAL));
  assertEquals(hasGuardHook(removed.text, CMD), false);
});

Deno.test("the installer edits in place: comments, formatting, big integers and key order are kept", () => {
  const text = `{
    // my settings
    "zeta": 1,
    "cleanupPeriodDays": 12345678901234567890,
    "hooks": {
        "PreToolUse": [
            { "matcher": "Bash", "hooks": [ { "type": "command", "command": "my-linter" } ] }
        ]
    },
    "alpha": true /* trailing */
}
`;
  const plan = planInstall(text, CMD);
  assertStringIncludes(plan.text, "// my settings");
  assertStringIncludes(plan.text, "12345678901234567890");
  assertStringIncludes(
    plan.text,
    '{ "matcher": "Bash", "hooks": [ { "type": "command", "command": "my-linter" } ] }',
  );
  assertStringIncludes(plan.text, "/* trailing */");
  assertEquals(plan.text.indexOf('"zeta"') < plan.text.indexOf('"alpha"'), true);
  const back = planUninstall(plan.text, CMD);
  assertEquals(back.text, text, "the round trip gives back the very text");
});

Deno.test("our entry is recognised exactly: a user's hook holding our marker or path is never ours", () => {
  const text = JSON.stringify(
    {
      hooks: {
        PreToolUse: [{
          matcher: "*",
          hooks: [
            { type: "command", command: `${CMD} --verbose # chronicle-guard` },
            { type: "command", command: `echo ${CMD}` },
          ],
        }],
      },
    },
    null,
    2,
  );
  assertEquals(hasGuardHook(text, CMD), false);
  assertEquals(planUninstall(text, CMD).changed, false);
  const installed = planInstall(text, CMD);
  const back = planUninstall(installed.text, CMD);
  assertEquals(back.text, text, "uninstall takes out ours and nothing else");
});

Deno.test("planUninstall() keeps a user's hook that shares the group with ours", () => {
  const text = JSON.stringify({
    hooks: {
      PreToolUse: [{
        matcher: "*",
        hooks: [{ type: "command", command: "mine" }, { type: "command", command: CMD }],
      }],
    },
  });
  const out = JSON.parse(planUninstall(text, CMD).text);
  assertEquals(out.hooks.PreToolUse, [{
    matcher: "*",
    hooks: [{ type: "command", command: "mine" }],
  }]);
});

Deno.test("install and uninstall on a missing or empty settings file", () => {
  for (const empty of [null, "", "  \n"]) {
    const plan = planInstall(empty, CMD);
    assertEquals(JSON.parse(plan.text).hooks.PreToolUse[0].hooks[0].command, CMD);
    assertEquals(planUninstall(empty, CMD).changed, false);
  }
});

Deno.test("malformed settings are reported, never rewritten", async (t) => {
  const cases: [string, string][] = [
    ["not valid JSON", '{"hooks": '],
    ["not a JSON object", "[1, 2]"],
    ['"hooks" is not an object', '{"hooks": []}'],
    ['"hooks.PreToolUse" is not a list', '{"hooks": {"PreToolUse": {}}}'],
  ];
  for (const [why, text] of cases) {
    await t.step(why, () => {
      const e = assertThrows(() => planInstall(text, CMD), SyntaxError);
      assertStringIncludes((e as Error).message, why);
      assertThrows(() => planUninstall(text, CMD), SyntaxError);
    });
  }
});
