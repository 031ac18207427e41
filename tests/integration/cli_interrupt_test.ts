/**
 * Ctrl-C (SIGINT) and SIGTERM for `chronicle import`: the first stops it where it is safe and
 * it says what is left (the pass itself: tests/unit/store/interrupt_test.ts), a second exits
 * at once. And what a process writes reaches a pipe whole, however slowly it is read.
 */
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";
import { spawnChronicle, userMachine } from "../_helpers/chronicle_cli.ts";
import { formatSummary, STOPPING } from "../../cli/import.ts";
import { emptySummary } from "../../core/store/mod.ts";

/** Reads a stream's text until it holds `until` (or ends); returns all read so far. */
async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  until: string,
  sofar = "",
): Promise<string> {
  while (!sofar.includes(until)) {
    const { value, done } = await reader.read();
    if (done) break;
    sofar += value;
  }
  return sofar;
}

async function rest(reader: ReadableStreamDefaultReader<string>, sofar: string) {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return sofar;
    sofar += value;
  }
}

Deno.test("Ctrl-C while an import waits for another's lock stops it: nothing imported, that lock kept", async () => {
  await using m = await userMachine(["claude/s1-basic"]);
  await Deno.mkdir(m.data, { mode: 0o700 });
  const lock = `${m.data}/import.lock`;
  const holder = JSON.stringify({ pid: Deno.pid, command: "chronicle serve", started_at: "" });
  await Deno.writeTextFile(lock, holder);
  const child = spawnChronicle(["import"], m.env, { cwd: m.cwd });
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let err = await readUntil(stderr, "to finish...");
  child.kill("SIGINT");
  err = await rest(stderr, err);
  const out = await rest(stdout, "");
  const status = await child.status;
  assertEquals(status.code, 130, err);
  assertEquals(out, "");
  assertEquals(
    err,
    `Waiting for the import already running (pid ${Deno.pid}, chronicle serve) to finish...\n` +
      `${STOPPING}\nStopped before importing anything.\n`,
  );
  assertEquals(await Deno.readTextFile(lock), holder, "the holder's lock is left to it");
  const listed = await m.run(["sessions", "--json"]);
  assertEquals(JSON.parse(listed.stdout).total, 0, listed.stdout);
});

Deno.test("SIGTERM asks for 143, and a second signal exits at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-interrupt-" });
  try {
    const script = `${dir}/stop.ts`;
    const helper = new URL("../../cli/interrupt.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { listenForInterrupt } from ${JSON.stringify(helper)};
const i = listenForInterrupt(
  () => console.log("first", i.code, i.signal.aborted),
  (code) => { console.log("at once", code); Deno.exit(code); },
);
console.log("ready");
setTimeout(() => console.log("not stopped"), 60_000);
`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", `--allow-read=${dir}`, script],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = await readUntil(out, "ready\n");
    child.kill("SIGTERM");
    text = await readUntil(out, "first", text);
    child.kill("SIGINT");
    text = await rest(out, text);
    assertEquals((await child.status).code, 130);
    assertEquals(text, "ready\nfirst 143 true\nat once 130\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stopped import's summary says so, and what is left", () => {
  const left = {
    ...emptySummary(),
    seconds: 2.5,
    unindexed: 1200,
    interrupted: { remaining_paths: ["/h/a.jsonl", "/h/b.jsonl"] },
  };
  const text = formatSummary(left);
  assertStringIncludes(text, "Stopped after 2.50 s: 0 files, 0 operations written.\n");
  assertStringIncludes(text, "  1200 operations not indexed for search yet");
  assertStringIncludes(
    text,
    "\n2 files not read to the end yet; `chronicle import` goes on from there.\n",
  );
  const indexing = formatSummary({ ...left, interrupted: { remaining_paths: [] } });
  assertStringIncludes(indexing, "\nEvery file read; `chronicle import` goes on from there.\n");
  assertEquals(formatSummary({ ...left, interrupted: undefined }).includes("Stopped"), false);
});

Deno.test("chronicle export to a pipe read slowly writes every byte (writeSync may write less than it is given)", async () => {
  await using m = await userMachine();
  const sid = "5a0e5a0e-1111-4222-8333-444455556666";
  await writeClaudeSession(m.home, {
    sessionId: sid,
    cwd: "/work/big",
    // prompts of 45,000 characters: pieces of the document as big as a step's text goes
    turns: Array.from({ length: 30 }, (_, i) => ({
      user: Array.from({ length: 3000 }, (_, k) => `word${k}x${i}`).join(" ").slice(0, 45_000),
    })),
  });
  assertEquals((await m.run(["import"])).code, 0);
  const file = `${m.root}/out.md`;
  assertEquals((await m.run(["export", sid, "--format", "md", "--out", file])).code, 0);
  // a file that cannot be written is named, and nothing is left beside it
  const nowhere = await m.run(["export", sid, "--format", "md", "--out", `${m.root}/no/such/x.md`]);
  assertEquals(nowhere.code, 1);
  assertStringIncludes(
    nowhere.stderr,
    `chronicle: cannot write ${m.root}/no/such/x.md: no such file or folder\n`,
  );
  const want = (await Deno.readTextFile(file)).replace(/^- \*\*Exported:\*\* .*$/m, "");
  // the same export to a pipe whose reader falls behind: a piece meets a pipe with less room
  const child = spawnChronicle(["export", sid, "--format", "md"], m.env, { cwd: m.cwd });
  const reader = child.stdout.getReader();
  const parts: Uint8Array[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value);
    await new Promise((r) => setTimeout(r, 5));
  }
  await child.stderr.cancel();
  assertEquals((await child.status).code, 0);
  const got = new TextDecoder().decode(await new Blob(parts as BlobPart[]).arrayBuffer());
  const piped = got.replace(/^- \*\*Exported:\*\* .*$/m, "");
  assertEquals(piped.length, want.length, "every character reached the pipe");
  assert(piped === want, "the same text as the file");
  assert(want.length > 1_000_000, `${want.length} characters`);
});
