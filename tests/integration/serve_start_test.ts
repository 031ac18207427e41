/**
 * A first start that never waits, through `deno run main.ts serve` with the task's permission
 * flags: the server answers before the first import has finished, and a busy port is reported
 * before anything is imported.
 */
import { ChronicleStore } from "../../core/store/mod.ts";
import { assert, assertEquals, assertMatch } from "../_helpers/assert.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FLAGS = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.chronicle.command
  .replace(/^deno run /, "").replace(/ main\.ts$/, "").split(" ");
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

function serve(home: string, args: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, `${ROOT}main.ts`, "serve", ...args],
    env: { PATH: Deno.env.get("PATH") ?? "", DENO_DIR, HOME: home, CHRONICLE_HOME: `${home}/data` },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function history(sessions: number): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "chronicle-start-test-" });
  for (let i = 0; i < sessions; i++) {
    await writeClaudeSession(home, {
      sessionId: `5747${String(i).padStart(4, "0")}-0000-4000-8000-000000000000`,
      cwd: `/work/p${i % 5}`,
      start: Date.parse("2026-01-01T00:00:00Z") + i * 3_600_000,
      turns: Array.from({ length: 40 }, (_, k) => ({
        tool: { name: "Bash", input: { command: `make ${k}` }, result: `ok ${k} `.repeat(200) },
      })),
    });
  }
  return home;
}

Deno.test("serve answers at once and fills the list in while the first import runs", async () => {
  const home = await history(40);
  const child = serve(home, ["--port", "0"]);
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  try {
    while (!/Imported /.test(seen)) {
      const { value, done } = await out.read();
      if (done) throw new Error(`serve stopped: ${seen}`);
      seen += value;
    }
    const lines = seen.split("\n");
    const served = lines.findIndex((l) => l.startsWith("Chronicle is serving"));
    const imported = lines.findIndex((l) => l.startsWith("Imported "));
    assert(served >= 0 && served < imported, `served before imported: ${seen}`);
    assertMatch(seen, /Imported 40 new or changed files \(40 sessions\)/);
    const url = seen.match(/http:\/\/127\.0\.0\.1:\d+\//)![0];
    const token = (await Deno.readTextFile(`${home}/data/token`)).trim();
    const auth = { headers: { "x-chronicle-token": token } };
    const list = await (await fetch(`${url}api/sessions?sort=started_at`, auth)).json();
    assertEquals(list.total, 40);
    const live = await (await fetch(`${url}api/live`, auth)).json();
    assertEquals(live.import.state, "idle");
    assertEquals(live.import.files_done, 40);
    assertEquals(live.import.percent, 100);
  } finally {
    child.kill("SIGTERM");
    assertEquals((await child.status).code, 0);
    await out.cancel();
    await child.stderr.cancel();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a busy port is reported before anything is imported", async () => {
  const home = await history(3);
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const child = serve(home, ["--port", String(taken.addr.port)]);
    const { code, stderr, stdout } = await child.output();
    assertEquals(code, 1);
    assertMatch(new TextDecoder().decode(stderr), /port is in use/);
    assertEquals(new TextDecoder().decode(stdout), "");
    const store = ChronicleStore.open(`${home}/data/chronicle.db`);
    try {
      assertEquals(store.listSessions().total, 0, "nothing was imported");
    } finally {
      store.close();
    }
  } finally {
    taken.close();
    await Deno.remove(home, { recursive: true });
  }
});
