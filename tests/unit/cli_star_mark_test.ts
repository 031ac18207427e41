/** How the terminal marks a starred session: ★ on a terminal (yellow unless NO_COLOR), * in a pipe. */
import { assertEquals } from "../_helpers/assert.ts";
import { type CliIo, colorOn, starMark } from "../../cli/io.ts";
import { titleLine } from "../../cli/sessions.ts";

const io = (isTerminal: boolean, env: Record<string, string> = {}): CliIo => ({
  stdout: () => {},
  stderr: () => {},
  stdin: () => Promise.resolve(new Uint8Array()),
  env,
  cwd: "/",
  isTerminal,
});

Deno.test("starMark(): ★ in colour on a terminal, plain ★ with NO_COLOR, * in a pipe", async (t) => {
  const cases = [
    { name: "terminal", io: io(true), mark: "\x1b[33m★\x1b[0m", color: true },
    { name: "terminal, NO_COLOR=1", io: io(true, { NO_COLOR: "1" }), mark: "★", color: false },
    {
      name: "terminal, NO_COLOR empty",
      io: io(true, { NO_COLOR: "" }),
      mark: "\x1b[33m★\x1b[0m",
      color: true,
    },
    { name: "pipe", io: io(false), mark: "*", color: false },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      assertEquals(starMark(c.io), c.mark);
      assertEquals(colorOn(c.io), c.color);
    });
  }
});

Deno.test("titleLine(): the user's name first, escaped for the terminal, after the star", () => {
  const s = {
    title: "Agent's",
    user_title: "Mine\u202e\x1b",
    first_prompt: "fix it",
    starred: true,
  };
  assertEquals(titleLine(s, 70, io(false)), "* Mine\\u202e\\x1b");
  assertEquals(titleLine({ ...s, user_title: null, starred: false }, 70, io(true)), "Agent's");
  assertEquals(
    titleLine({ title: null, user_title: null, first_prompt: null }, 70, io(false)),
    "(untitled)",
  );
});
