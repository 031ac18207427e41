/**
 * CLI output never writes control characters taken from transcripts or file names, through the
 * real CLI: a Claude Code session run in a folder whose name holds a line break and an escape
 * sequence, with prompts, replies, tool inputs and results full of ESC/CSI/OSC sequences, BEL
 * and C1 controls. `chronicle import`, `sessions`, `show` and `scan --session` print them as
 * visible escapes (import too), and a forged line ("FORGED ...") never starts a line of their output.
 */
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { chronicle } from "../_helpers/chronicle_cli.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";

const EVIL = "\x1b[2J\x1b]0;pwned\x07\x9b31m\nFORGED ok: all clear\r";
/** Any control character but the line break and tab a CLI writes itself. */
// deno-lint-ignore no-control-regex -- the test looks for exactly these characters
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

Deno.test("sessions, show, import and scan escape what transcripts and folder names hold", async () => {
  const home = await Deno.makeTempDir({ prefix: "chronicle-term-test-" });
  const env = { HOME: home, CHRONICLE_HOME: `${home}/data` };
  const id = "7e57a11e-0000-4000-8000-00000000e5c0";
  try {
    await writeClaudeSession(home, {
      sessionId: id,
      cwd: `/work/proj${EVIL}`,
      turns: [
        { user: `fix the bug${EVIL}` },
        { assistant: `done${EVIL}` },
        {
          tool: {
            name: "Bash",
            input: { command: `printf '${EVIL}'`, description: `run${EVIL}` },
            result: `out${EVIL}password = "Hunter2-Blue-Sky"${EVIL}`,
          },
        },
      ],
    });
    const outputs: [string, { code: number; stdout: string; stderr: string }][] = [];
    const run = async (...args: string[]) => {
      const r = await chronicle(args, env);
      outputs.push([args.join(" "), r]);
      return r;
    };
    assertEquals((await run("import")).code, 0);
    const list = await run("sessions");
    assertEquals(list.code, 0, list.stderr);
    assertStringIncludes(list.stdout, "\\x1b[2J");
    const show = await run("show", id.slice(0, 8));
    assertEquals(show.code, 0, show.stderr);
    assertStringIncludes(show.stdout, "\\x1b");
    const scan = await run("scan", "--all");
    assertEquals(scan.code, 1, scan.stdout + scan.stderr);
    for (const [what, r] of outputs) {
      for (const [stream, text] of [["stdout", r.stdout], ["stderr", r.stderr]]) {
        assert(
          !CONTROL.test(text),
          `${what} ${stream} holds a control character: ${JSON.stringify(text)}`,
        );
        for (const line of text.split("\n")) {
          assert(!line.startsWith("FORGED"), `${what} ${stream} printed a forged line`);
        }
      }
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
