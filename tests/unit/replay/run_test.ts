import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { ChronicleError, type PayloadRef } from "../../../core/model/mod.ts";
import {
  type PlanStep,
  type ReplayPlan,
  ReplayRun,
  type SandboxFiles,
  type SeedResult,
  type ShellRunner,
} from "../../../core/replay/mod.ts";
import { HOW_TO_GET_BWRAP } from "../../../runtime/bwrap.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** An in-memory sandbox that refuses what the worker refuses (lexically). */
function memFiles(
  initial: Record<string, string> = {},
): SandboxFiles & { map: Map<string, string> } {
  const map = new Map(Object.entries(initial));
  const check = (p: string) => {
    if (p.startsWith("/") || p.split("/").includes("..")) {
      throw new ChronicleError("outside", `${p} leaves the sandbox`);
    }
  };
  return {
    map,
    root: "/sandbox",
    read: (p) => (check(p), Promise.resolve(map.has(p) ? enc.encode(map.get(p)!) : null)),
    write: (p, b) => (check(p), map.set(p, dec.decode(b)), Promise.resolve()),
    symlink: () => Promise.resolve("refused"),
    remove: (p) => Promise.resolve(map.delete(p)),
    list: () =>
      Promise.resolve(
        [...map.keys()].sort().map((path) => ({ path, type: "file" as const, size: 0 })),
      ),
    close() {},
  };
}

function step(seq: number, s: Partial<PlanStep>): PlanStep {
  return {
    seq,
    op: `op-${seq}`,
    connection: "main",
    kind: "edit",
    target: null,
    reasoning: [],
    recorded: { is_error: false, output: { inline: "ok" } },
    replayable: true,
    blockers: [],
    ...s,
  };
}

/** A plan of these steps, of a session recorded in /p. */
const planOf = (...steps: PlanStep[]): ReplayPlan => ({ session: "s", project: "/p", steps });

const seed: SeedResult = { seeded_from: "abc", repo: "/repo", files: 1, notices: [] };

/** The recorded inputs and results of these plans are inline. */
const payload = (ref: PayloadRef) => ("inline" in ref ? ref.inline : null);

/** A file step's recorded input: the tool call's fields as JSON. */
const input = (fields: Record<string, unknown>): PayloadRef => ({ inline: JSON.stringify(fields) });
const replace = (old: string, next: string) => ({
  action: "replace" as const,
  input: input({ file_path: "x", old_string: old, new_string: next }),
});
const write = (content: string) => ({
  kind: "write" as const,
  action: "write" as const,
  input: input({ file_path: "x", content }),
});

function shell(
  results: Record<string, { code: number; output: string }>,
  ok = true,
): ShellRunner & { ran: string[] } {
  const ran: string[] = [];
  return {
    ran,
    available: () =>
      Promise.resolve(
        ok
          ? { ok: true as const, description: "a fake jail" }
          : { ok: false as const, reason: HOW_TO_GET_BWRAP },
      ),
    run: (command) => {
      ran.push(String(command));
      const r = results[String(command)];
      return Promise.resolve({ ...r, truncated: false, timedOut: false });
    },
  };
}

Deno.test("ReplayRun previews where an edit applies and pauses auto-play at the first divergence", async () => {
  const files = memFiles({ "a.txt": "one\ntwo\n" });
  const plan: ReplayPlan = {
    session: "s",
    project: "/p",
    steps: [
      step(1, { path: "a.txt", ...replace("two", "2") }),
      step(2, { path: "a.txt", ...replace("three", "3") }),
      step(3, { path: "b.txt", ...write("b\n") }),
      step(4, { kind: "exec", command: "true", workdir: "", blockers: ["needs_confirmation"] }),
    ],
  };
  const run = new ReplayRun(plan, seed, { files, shell: shell({}), payload });
  const p = await run.preview(1);
  assertEquals([p.applies, p.lines], [true, [2]]);
  assertMatch(p.diff!, /-two\n\+2/);
  const steps = await run.runAll({ pauseOnDivergence: true });
  assertEquals(steps.map((s) => s.status), ["applied", "diverged", "skipped", "skipped"]);
  assertMatch(
    steps[1].detail,
    /^does not apply: the old text is not in the file; the recording says it applied/,
  );
  assertEquals(steps[2].detail, "paused after step 2");
  assertEquals(files.map.get("a.txt"), "one\n2\n");
  assertEquals(files.map.has("b.txt"), false);
  assertEquals(run.report().divergences, 1);
});

Deno.test("ReplayRun's preview reads the reasoning before a step, blocked or not, and only then", async () => {
  const plan = planOf(
    step(1, {
      path: "a.txt",
      ...write("a\n"),
      reasoning: [{ kind: "thinking", op: "t1" }, { kind: "reply", op: "gone" }],
    }),
    step(2, { replayable: false, detail: "out", reasoning: [{ kind: "reply", op: "r2" }] }),
  );
  const texts: Record<string, string> = { t1: "Write a.", r2: "Then b." };
  const read: string[] = [];
  const reasoning = (op: string) => (read.push(op), texts[op] ?? null);
  const run = new ReplayRun(plan, seed, { files: memFiles(), payload, reasoning });
  assertEquals(read, []); // a plan holds no reasoning text: nothing read until a step is shown
  assertEquals((await run.preview(1)).reasoning, [{ kind: "thinking", text: "Write a." }]);
  const blocked = await run.preview(2);
  assertEquals([blocked.blocked, blocked.reasoning], ["out", [{ kind: "reply", text: "Then b." }]]);
  assertEquals(read, ["t1", "gone", "r2"]);
  // without a reader (the CLI, which shows no reasoning), none
  const bare = new ReplayRun(plan, seed, { files: memFiles(), payload });
  assertEquals((await bare.preview(1)).reasoning, []);
});

Deno.test("ReplayRun runs a shell step only when confirmed and where the jail exists", async () => {
  const plan: ReplayPlan = {
    session: "s",
    project: "/p",
    steps: [step(1, {
      kind: "exec",
      command: "make test",
      workdir: "",
      blockers: ["needs_confirmation"],
      recorded: { is_error: true, output: { inline: "Exit code 2\nboom" } },
    })],
  };
  const fake = shell({ "make test": { code: 2, output: "boom\n" } });
  const run = new ReplayRun(plan, seed, { files: memFiles(), shell: fake, payload });
  assertEquals((await run.execute(1)).status, "skipped");
  assertEquals(fake.ran, []);
  const r = await run.execute(1, { confirm: true });
  assertEquals([r.status, r.exit_code], ["applied", 2]);
  assertMatch(r.detail, /failing as recorded/);
  const other = shell({ "make test": { code: 0, output: "fine\n" } });
  const d = await new ReplayRun(plan, seed, { files: memFiles(), shell: other, payload }).execute(
    1,
    {
      confirm: true,
    },
  );
  assertEquals(d.status, "diverged");
  assertMatch(d.detail, /exit code 0, recorded 2/);
  const none = await new ReplayRun(plan, seed, {
    files: memFiles(),
    shell: shell({}, false),
    payload,
  })
    .execute(1, { confirm: true });
  assertEquals(none.status, "skipped");
  assert(none.detail.includes("apt-get install bubblewrap"), none.detail);
});

Deno.test("a plan holds a step's recorded input and result by reference: each is read as the step runs", async () => {
  const { buildPlan } = await import("../../../core/replay/mod.ts");
  const sha = (c: string) => ({ sha256: c.repeat(64), size: 1 });
  const op = (kind: string, effect: string, request: string, response: string) => ({
    kind,
    effect,
    tool: kind === "exec" ? "Bash" : "Write",
    request: sha(request),
    response: sha(response),
    is_error: false,
    completeness: "complete",
    provenance: { epoch: 0, source_range: { file: "f", lines: [1, 1], bytes: [0, 1] } },
    replay: { replayable: true, blockers: [] },
  });
  const session = {
    session: { id: "s", native_id: "s", source: "claude-code", project: { path: "/p" } },
    timeline: [
      { seq: 0, op: "w", connection: "main", offset_ns: 0 },
      { seq: 1, op: "x", connection: "main", offset_ns: 0 },
    ],
    operations: { w: op("write", "fs_write", "a", "b"), x: op("exec", "process", "c", "d") },
  } as unknown as Parameters<typeof buildPlan>[0];
  const payloads: Record<string, string> = {
    a: JSON.stringify({ file_path: "/p/n.txt", content: "n\n" }),
    b: "File created",
    c: JSON.stringify({ command: "wc -l n.txt" }),
    d: "1 n.txt",
  };
  const planRead: string[] = [];
  const plan = buildPlan(session, (ref) => {
    const c = ref && "sha256" in ref ? ref.sha256[0] : "?";
    planRead.push(c);
    return payloads[c] ?? null;
  });
  // the plan reads the requests only
  assertEquals(planRead, ["a", "c"]);
  assertEquals(plan.steps[1].recorded, { is_error: false, output: sha("d") });
  const runRead: string[] = [];
  const deps = (results: Record<string, { code: number; output: string }>) => ({
    files: memFiles(),
    shell: shell(results),
    payload: (ref: PayloadRef) => {
      const c = "sha256" in ref ? ref.sha256[0] : "?";
      runRead.push(c);
      return Promise.resolve(payloads[c] ?? null);
    },
  });
  const run = new ReplayRun(plan, seed, deps({ "wc -l n.txt": { code: 0, output: "1 n.txt\n" } }));
  // the plan keeps the write's kind of change, not its content: applied, the step reads its
  // input again (and not its result); a shell step not run reads nothing
  assertEquals([plan.steps[0].action, plan.steps[0].input], ["write", sha("a")]);
  assertEquals((await run.runAll()).map((r) => r.status), ["applied", "skipped"]);
  assertEquals(runRead, ["a"]);
  assertEquals((await run.execute(1, { confirm: true })).status, "applied");
  assertEquals(runRead, ["a", "d"]);
  // and compares with what it read
  const other = new ReplayRun(
    plan,
    seed,
    deps({ "wc -l n.txt": { code: 0, output: "2 n.txt\n" } }),
  );
  const d = await other.execute(1, { confirm: true });
  assertEquals(d.status, "diverged");
  assertMatch(d.detail, /"2 n\.txt" is not in it/);
});

Deno.test("a file step whose recorded input can no longer be read fails and says why", async () => {
  const plan = planOf(
    step(1, { path: "a.txt", ...write("a"), input: { sha256: "a".repeat(64), size: 9 } }),
    // an input that no longer holds the change the plan found
    step(2, { path: "b.txt", ...write("b"), input: input({ file_path: "b" }) }),
  );
  const files = memFiles();
  const run = new ReplayRun(plan, seed, { files, payload });
  for (const seq of [1, 2]) {
    const p = await run.preview(seq);
    assertEquals(p.applies, false);
    assertMatch(p.reason!, /recorded input can no longer be read/);
    const r = await run.execute(seq);
    assertEquals(r.status, "failed");
    assertMatch(r.detail, /^its recorded input can no longer be read/);
  }
  assertEquals(files.map.size, 0);
});

Deno.test("a delete step neither reads its recorded input nor needs it", async () => {
  const gone: PayloadRef = { sha256: "d".repeat(64), size: 9 };
  const plan = planOf(
    step(1, { kind: "delete", path: "a.txt", action: "delete", input: gone }),
    step(2, { kind: "delete", path: "b.txt", action: "delete", input: gone }),
  );
  const files = memFiles({ "a.txt": "one\n" });
  const read: PayloadRef[] = [];
  const run = new ReplayRun(plan, seed, {
    files,
    payload: (ref) => (read.push(ref), null),
  });
  const p = await run.preview(1);
  assertEquals([p.applies, p.diff?.includes("-one")], [true, true]);
  assertEquals((await run.execute(1)).detail, "deleted");
  assertEquals([...files.map.keys()], []);
  // a file already gone is the divergence it always was, not an unreadable input
  const r = await run.execute(2);
  assertEquals(r.status, "diverged");
  assertMatch(r.detail, /^does not apply: the file does not exist/);
  assertEquals(read, []);
});

Deno.test("ReplayRun reports a path the sandbox refuses as a failed step", async () => {
  const plan: ReplayPlan = {
    session: "s",
    project: "/p",
    steps: [step(1, { path: "../x", ...write("x") })],
  };
  const r = await new ReplayRun(plan, seed, { files: memFiles(), payload }).execute(1);
  assertEquals(r.status, "failed");
  assertMatch(r.detail, /^refused: \.\.\/x leaves the sandbox/);
});

Deno.test("an apply_patch that moves a file writes the new path and removes the old one", async () => {
  const { buildPlan } = await import("../../../core/replay/mod.ts");
  const patch =
    "*** Begin Patch\n*** Update File: src/old.py\n*** Move to: src/new.py\n@@\n-x = 1\n+x = 2\n*** End Patch";
  const session = {
    schema_version: 1,
    recording: { id: "r", source: "codex", source_paths: [], pipeline_version: "t" },
    session: { id: "codex:m", native_id: "m", source: "codex", project: { path: "/p" } },
    connections: [],
    timeline: [{ seq: 0, op: "a", connection: "main", offset_ns: 0 }],
    operations: {
      a: {
        kind: "edit",
        effect: "fs_write",
        tool: "apply_patch",
        target: "src/old.py",
        request: { inline: patch },
        is_error: false,
        completeness: "complete",
        provenance: { epoch: 0, source_range: { file: "f", lines: [1, 1], bytes: [0, 1] } },
        replay: { replayable: true, blockers: [] },
      },
    },
    completeness: { connections: {}, operations: {} },
    provenance: { epochs: [], loss_windows: [] },
    usage: { by_model: {} },
    issues: [],
    extensions: {},
  } as unknown as Parameters<typeof buildPlan>[0];
  const plan = buildPlan(session, (ref) => (ref && "inline" in ref ? ref.inline : null));
  assertEquals([plan.steps[0].path, plan.steps[0].moveTo], ["src/old.py", "src/new.py"]);
  const files = memFiles({ "src/old.py": "x = 1\n" });
  const r = await new ReplayRun(plan, seed, { files, payload }).execute(0);
  assertEquals(r.status, "applied");
  assertEquals([...files.map.entries()], [["src/new.py", "x = 2\n"]]);
});
