import { assert, assertEquals, assertRejects } from "../../_helpers/assert.ts";
import {
  checkRev,
  createGitEngine,
  normalizePath,
  parseLsTree,
  type ProcessRunner,
  relativeInside,
  splitBatch,
} from "../../../core/git/mod.ts";
import { ChronicleError } from "../../../core/model/mod.ts";

const enc = new TextEncoder();

/** A runner that records every argument vector and answers from a table of handlers. */
function fakeRunner(
  answer: (args: readonly string[]) => { code?: number; out?: string; err?: string },
) {
  const calls: { program: string; args: readonly string[]; stdin?: string }[] = [];
  const run: ProcessRunner = (program, args, options = {}) => {
    calls.push({
      program,
      args,
      stdin: options.stdin ? new TextDecoder().decode(options.stdin) : undefined,
    });
    const a = answer(args);
    return Promise.resolve({
      code: a.code ?? 0,
      signal: null,
      stdout: enc.encode(a.out ?? ""),
      stderr: enc.encode(a.err ?? ""),
      truncated: false,
      timedOut: false,
    });
  };
  return { run, calls };
}

/** The git subcommand of an argument vector (after -C <repo> and the -c options). */
function sub(args: readonly string[]): string {
  let i = 2;
  while (args[i] === "--no-optional-locks" || args[i] === "-c") i += args[i] === "-c" ? 2 : 1;
  return args[i];
}

Deno.test("normalizePath() and relativeInside() keep paths inside their folder", async (t) => {
  const cases: { name: string; root: string; path: string; expected: string | null }[] = [
    { name: "a relative path stays as it is", root: "/r", path: "src/a.ts", expected: "src/a.ts" },
    { name: "dots collapse", root: "/r", path: "./src/../src/a.ts", expected: "src/a.ts" },
    { name: "an absolute path inside", root: "/r", path: "/r/src/a.ts", expected: "src/a.ts" },
    { name: "the root itself is empty", root: "/r", path: "/r", expected: "" },
    { name: "climbing out is refused", root: "/r", path: "../../etc/x", expected: null },
    { name: "climbing out midway is refused", root: "/r", path: "a/../../x", expected: null },
    {
      name: "a sibling with a common prefix is outside",
      root: "/r",
      path: "/rx/a",
      expected: null,
    },
    {
      name: "an absolute path elsewhere is refused",
      root: "/r",
      path: "/etc/passwd",
      expected: null,
    },
    {
      name: "an absolute path climbing out is refused",
      root: "/r",
      path: "/r/../etc",
      expected: null,
    },
    { name: "a NUL byte is refused", root: "/r", path: "a\0b", expected: null },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      if (c.expected === null) {
        let err: unknown;
        try {
          relativeInside(c.root, c.path);
        } catch (e) {
          err = e;
        }
        assert(err instanceof ChronicleError && err.code === "outside", `expected refusal`);
      } else assertEquals(relativeInside(c.root, c.path), c.expected);
    });
  }
  assertEquals(normalizePath("/a//b/./c/../d"), "/a/b/d");
  assertEquals(normalizePath("/../x"), "/x");
  assertEquals(normalizePath("a/.."), ".");
});

Deno.test("checkRev() refuses options, ranges and odd characters", () => {
  for (const ok of ["HEAD", "main", "a1b2c3d", "HEAD~2", "v1.0", "refs/heads/x", "HEAD^{commit}"]) {
    assertEquals(checkRev(ok), ok);
  }
  for (const bad of ["--output=/tmp/x", "-n", "a..b", "a b", "", "x;rm", "$(id)"]) {
    let threw = false;
    try {
      checkRev(bad);
    } catch (e) {
      threw = e instanceof RangeError;
    }
    assert(threw, `expected ${bad} to be refused`);
  }
});

Deno.test("every git call is an argument vector with -C first and -- before paths", async () => {
  const { run, calls } = fakeRunner((args) => {
    switch (sub(args)) {
      case "rev-parse":
        return { out: "/repo\n/repo/.git\n/repo/.git\nfalse\n" };
      case "ls-tree":
        return { out: "100644 blob aaaa       3\tsrc/a b.ts\0" };
      case "log":
        return { out: "abc\x1fdef\x1f100\x1f90\x1fDev\x1fsubject with \x1f inside\0" };
      default:
        return { out: "hi" };
    }
  });
  const git = createGitEngine(run, { env: { PATH: "/usr/bin" } });
  await git.tree("/repo", "HEAD", { path: "/repo/src" });
  await git.fileAt("/repo", "abc", "src/a b.ts");
  const c = await git.commitAt("/repo", Date.UTC(2026, 10, 30));
  assertEquals(c?.subject, "subject with \x1f inside");
  assertEquals(c?.committedMs, 100_000);
  for (const call of calls) {
    assertEquals(call.program, "git");
    assertEquals(call.args.slice(0, 2), ["-C", "/repo"]);
  }
  const lsTree = calls.find((c) => sub(c.args) === "ls-tree")!.args;
  assertEquals(lsTree.slice(-2), ["--", "src"]);
  const log = calls.find((c) => sub(c.args) === "log")!.args;
  assert(log.includes("--before=2026-11-30T00:00:00.000Z"));
  assertEquals(log.slice(-3), ["--end-of-options", "HEAD", "--"]);
  const cat = calls.find((c) => sub(c.args) === "cat-file")!.args;
  assertEquals(cat.slice(-2), ["blob", "abc:src/a b.ts"]);
});

Deno.test("a path outside the repository is refused before git runs", async () => {
  const { run, calls } = fakeRunner(() => ({ out: "/repo\n" }));
  const git = createGitEngine(run);
  for (const p of ["../../etc/passwd", "/etc/passwd", "/repo/../etc"]) {
    await assertRejects(() => git.fileAt("/repo", "HEAD", p), ChronicleError);
  }
  assert(calls.every((c) => sub(c.args) === "rev-parse"), "only the root was asked for");
});

Deno.test("git's failures become not_found, not_a_repo and io errors with the folder named", async (t) => {
  const cases = [
    { err: "fatal: cannot change to '/gone': No such file or directory", code: "not_found" },
    {
      err: "fatal: not a git repository (or any of the parent directories): .git",
      code: "not_a_repo",
    },
    { err: "fatal: something else", code: "io" },
  ];
  for (const c of cases) {
    await t.step(c.code, async () => {
      const { run } = fakeRunner(() => ({ code: 128, err: c.err }));
      const err = await assertRejects(() => createGitEngine(run).repo("/gone"), ChronicleError);
      assertEquals((err as ChronicleError).code, c.code);
      assert(err.message.includes("/gone"), err.message);
    });
  }
});

Deno.test("parseLsTree() keeps modes, submodules and paths with spaces, quotes and newlines", () => {
  const out = parseLsTree(
    "100644 blob aa 12\ta b\x00120000 blob bb 1\tlink\x00160000 commit cc       -\tsub\x00" +
      '100755 blob dd 0\t$(rm -rf ~)"q"\nx\0',
  );
  assertEquals(out.map((e) => [e.mode, e.type, e.size, e.path]), [
    ["100644", "blob", 12, "a b"],
    ["120000", "blob", 1, "link"],
    ["160000", "commit", null, "sub"],
    ["100755", "blob", 0, '$(rm -rf ~)"q"\nx'],
  ]);
});

Deno.test("splitBatch() splits cat-file --batch output by the sizes it states", () => {
  const parts = splitBatch(enc.encode("aa blob 3\nab\n\nbb blob 0\n\ncc blob 2\nxy\n"));
  assertEquals(parts.map((p) => new TextDecoder().decode(p)), ["ab\n", "", "xy"]);
});
