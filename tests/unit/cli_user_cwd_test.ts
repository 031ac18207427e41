import { assertEquals } from "../_helpers/assert.ts";
import { resolvePathVars, userCwd } from "../../cli/user_cwd.ts";

Deno.test("userCwd() trusts INIT_CWD only when the process runs in the checkout, as deno task runs it", async (t) => {
  const cases = [
    {
      name: "deno task from a project",
      env: { INIT_CWD: "/home/u/proj" },
      cwd: "/opt/chronicle",
      want: "/home/u/proj",
    },
    {
      name: "a stale INIT_CWD elsewhere",
      env: { INIT_CWD: "/home/u/proj" },
      cwd: "/srv/x",
      want: "/srv/x",
    },
    { name: "no INIT_CWD", env: {}, cwd: "/opt/chronicle", want: "/opt/chronicle" },
    {
      name: "a relative INIT_CWD is not trusted",
      env: { INIT_CWD: "proj" },
      cwd: "/opt/chronicle",
      want: "/opt/chronicle",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(userCwd(c.env, c.cwd, "/opt/chronicle/"), c.want));
  }
});

Deno.test("resolvePathVars() makes relative path variables absolute against the user's folder", () => {
  const env = resolvePathVars({
    CHRONICLE_HOME: "data",
    CODEX_HOME: "/abs/codex",
    CLAUDE_CONFIG_DIR: "a,/b, c",
    OTHER: "rel",
  }, "/home/u");
  assertEquals(env, {
    CHRONICLE_HOME: "/home/u/data",
    CODEX_HOME: "/abs/codex",
    CLAUDE_CONFIG_DIR: "/home/u/a,/b,/home/u/c",
    OTHER: "rel",
  });
});
