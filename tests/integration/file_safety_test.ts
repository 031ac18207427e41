/**
 * `verify`, `import` of an export and `export` never follow a symlink or open a FIFO or device
 * in the tree they check or write, through the real CLI: an exported session whose payload, or
 * whose session.json, is a FIFO (opening one blocks until a writer comes) or a symlink to
 * /dev/zero. Each command must finish (a FIFO is never opened) and say what is wrong.
 * (The guard and `scan` on a FIFO: tests/integration/guard_test.ts.)
 */
import { assert, assertEquals, assertMatch } from "../_helpers/assert.ts";
import { userMachine } from "../_helpers/chronicle_cli.ts";
import { sessionDirName } from "../../core/artifacts/mod.ts";

async function mkfifo(path: string): Promise<void> {
  const r = await new Deno.Command("mkfifo", { args: [path] }).output();
  assertEquals(r.code, 0, `mkfifo ${path}`);
}

/** Fails the test instead of hanging when a command opens a FIFO. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} hung (a FIFO was opened?)`)), ms);
    }),
  ]);
}

Deno.test("verify, import and export of a tree holding FIFOs and device links finish and refuse them", async (t) => {
  await using m = await userMachine(["claude/s6-subagent"]);
  assertEquals((await m.run(["import"])).code, 0);
  const id = JSON.parse((await m.run(["sessions", "--json"])).stdout).sessions[0].id as string;
  const out = `${m.root}/out`;
  const exported = await m.run(["export", id, "--format", "canonical", "--out", out]);
  assertEquals(exported.code, 0, exported.stderr);
  const dir = `${out}/sessions/${sessionDirName(id)}`;
  const payloads = [...Deno.readDirSync(`${dir}/payloads`)].map((e) => e.name).sort();
  assert(payloads.length >= 2);
  const keep = `${m.root}/keep`;
  await Deno.mkdir(keep);
  for (const name of payloads) await Deno.copyFile(`${dir}/payloads/${name}`, `${keep}/${name}`);
  await Deno.copyFile(`${dir}/session.json`, `${keep}/session.json`);

  const cases: { name: string; plant: () => Promise<void>; problem: RegExp }[] = [
    {
      name: "a payload that is a FIFO",
      plant: async () => {
        await Deno.remove(`${dir}/payloads/${payloads[0]}`);
        await mkfifo(`${dir}/payloads/${payloads[0]}`);
      },
      problem: /not a regular file/,
    },
    {
      name: "a payload that is a symlink to /dev/zero",
      plant: async () => {
        await Deno.remove(`${dir}/payloads/${payloads[1]}`);
        await Deno.symlink("/dev/zero", `${dir}/payloads/${payloads[1]}`);
      },
      problem: /not a regular file/,
    },
    {
      name: "session.json that is a FIFO",
      plant: async () => {
        await Deno.remove(`${dir}/session.json`);
        await mkfifo(`${dir}/session.json`);
      },
      problem: /session\.json/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      await c.plant();
      try {
        const verify = await within(30_000, "verify", m.run(["verify", out]));
        assertEquals(verify.code, 1, verify.stdout + verify.stderr);
        assertMatch(verify.stdout, /FAIL/);
        assertMatch(verify.stdout, c.problem);
        const imported = await within(30_000, "import", m.run(["import", "--canonical", out]));
        assertEquals(imported.code, 1, imported.stdout + imported.stderr);
        assertMatch(imported.stdout + imported.stderr, c.problem);
        // exporting again over the planted tree writes regular files, through nothing planted
        const again = await within(
          30_000,
          "export",
          m.run(["export", id, "--format", "canonical", "--out", out]),
        );
        assertEquals(again.code, 0, again.stderr);
        for (const name of [...payloads.map((p) => `payloads/${p}`), "session.json"]) {
          assertEquals((await Deno.lstat(`${dir}/${name}`)).isFile, true, name);
        }
        assertEquals((await m.run(["verify", out])).code, 0);
      } finally {
        for (const name of payloads) {
          await Deno.remove(`${dir}/payloads/${name}`).catch(() => {});
          await Deno.copyFile(`${keep}/${name}`, `${dir}/payloads/${name}`);
        }
        await Deno.remove(`${dir}/session.json`).catch(() => {});
        await Deno.copyFile(`${keep}/session.json`, `${dir}/session.json`);
      }
    });
  }
});
