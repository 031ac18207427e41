/** Shell command lines: what they read, search, list and change; and path spellings. */
import {
  displayPath,
  namesInResult,
  normalizePath,
  type ShellEffect,
  shellEffects,
} from "../../../core/causality/mod.ts";
import { assertEquals } from "../../_helpers/assert.ts";

const CWD = "/p";

/** Effects as compact tuples: [role, paths, change?, pattern?]. */
function brief(effects: ShellEffect[]) {
  return effects.map((e) => {
    const out: unknown[] = [e.role, e.paths];
    if (e.change) out.push(e.change);
    if (e.pattern !== undefined) out.push(e.pattern);
    return out;
  });
}

Deno.test("normalizePath() gives one spelling to one file", async (t) => {
  const cases: { name: string; path: string; base?: string; expected: string }[] = [
    {
      name: "a relative path against the base",
      path: "src/a.ts",
      base: "/p",
      expected: "/p/src/a.ts",
    },
    { name: "./ and doubled slashes", path: ".//src/./a.ts", base: "/p/", expected: "/p/src/a.ts" },
    { name: ".. climbs", path: "../q/a.ts", base: "/p/sub", expected: "/p/q/a.ts" },
    { name: ".. never above the root", path: "/../../a", expected: "/a" },
    { name: "an absolute path ignores the base", path: "/x/y", base: "/p", expected: "/x/y" },
    { name: "a trailing slash", path: "/p/src/", expected: "/p/src" },
    { name: "a file URI", path: "file:///p/my%20dir/a.ts", expected: "/p/my dir/a.ts" },
    { name: "a Windows path", path: "C:\\Users\\me\\a.ts", expected: "C:/Users/me/a.ts" },
    { name: "a Windows file URI", path: "file:///C:/w/a.ts", expected: "C:/w/a.ts" },
    {
      name: "a relative path without a base stays relative",
      path: "./a/../b.ts",
      expected: "b.ts",
    },
    { name: "the home folder is kept as written", path: "~/x/../y", base: "/p", expected: "~/y" },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(normalizePath(c.path, c.base), c.expected));
  }
});

Deno.test("displayPath() shows project files relative to the project", () => {
  assertEquals(displayPath("/p/src/a.ts", "/p"), "src/a.ts");
  assertEquals(displayPath("/p", "/p/"), ".");
  assertEquals(displayPath("/elsewhere/a.ts", "/p"), "/elsewhere/a.ts");
  assertEquals(displayPath("/pp/a.ts", "/p"), "/pp/a.ts");
});

Deno.test("shellEffects() reads what each command's words show", async (t) => {
  const cases: { name: string; line: string; expected: unknown[] }[] = [
    { name: "cat", line: "cat a.txt b.txt", expected: [["read", ["/p/a.txt", "/p/b.txt"]]] },
    {
      name: "sed -n prints a file",
      line: "sed -n '1,200p' README.md",
      expected: [["read", ["/p/README.md"]]],
    },
    {
      name: "head with a count",
      line: "head -n 20 src/x.py",
      expected: [["read", ["/p/src/x.py"]]],
    },
    {
      name: "a pipeline reads its first file",
      line: "cat x | grep -c y",
      expected: [["read", ["/p/x"]], ["search", ["/p"], "y"]],
    },
    {
      name: "grep with options, a pattern and paths",
      line: "grep -rnE -- 'TODO' src docs",
      expected: [["search", ["/p/src", "/p/docs"], "TODO"]],
    },
    {
      name: "grep -e names the pattern",
      line: "grep -n -e foo a.c",
      expected: [["search", ["/p/a.c"], "foo"]],
    },
    {
      name: "rg without a path searches the folder",
      line: "rg -n 'fn main'",
      expected: [["search", ["/p"], "fn main"]],
    },
    {
      name: "git grep",
      line: "git grep -n needle -- lib",
      expected: [["search", ["/p/lib"], "needle"]],
    },
    {
      name: "find -name is a search",
      line: "find . -name '*.ts'",
      expected: [["search", ["/p"], "*.ts"]],
    },
    {
      name: "find without a name test is a listing",
      line: "find src -type f",
      expected: [["list", ["/p/src"]]],
    },
    { name: "ls", line: "ls -la src", expected: [["list", ["/p/src"]]] },
    { name: "ls alone lists the folder", line: "ls", expected: [["list", ["/p"]]] },
    {
      name: "cd moves later commands",
      line: "cd sub && cat a",
      expected: [["read", ["/p/sub/a"]]],
    },
    {
      name: "rm deletes",
      line: "rm -rf build/out.js",
      expected: [["change", ["/p/build/out.js"], "delete"]],
    },
    {
      name: "mv deletes the source and writes the target",
      line: "mv a.txt b.txt",
      expected: [["change", ["/p/a.txt"], "delete"], ["change", ["/p/b.txt"], "write"]],
    },
    {
      name: "cp reads and writes",
      line: "cp a b",
      expected: [["read", ["/p/a"]], ["change", ["/p/b"], "write"]],
    },
    {
      name: "sed -i edits in place",
      line: "sed -i 's/a/b/' x.py",
      expected: [["change", ["/p/x.py"], "edit"]],
    },
    {
      name: "BSD sed -i ''",
      line: "sed -i '' -e 's/a/b/' x.py",
      expected: [["change", ["/p/x.py"], "edit"]],
    },
    {
      name: "> writes, >> appends",
      line: "echo a > f && echo b >> g",
      expected: [["change", ["/p/f"], "write"], ["change", ["/p/g"], "edit"]],
    },
    {
      name: "2>/dev/null and 2>&1 are not files",
      line: "cat a 2>/dev/null 2>&1",
      expected: [["read", ["/p/a"]]],
    },
    {
      name: "tee writes",
      line: "echo x | tee out.log",
      expected: [["change", ["/p/out.log"], "write"]],
    },
    { name: "touch creates", line: "touch new.md", expected: [["change", ["/p/new.md"], "write"]] },
    {
      name: "git rm and git checkout --",
      line: "git rm old.c; git checkout -- a.c",
      expected: [["change", ["/p/old.c"], "delete"], ["change", ["/p/a.c"], "edit"]],
    },
    {
      name: "bash -c is followed",
      line: "bash -lc 'cat inner.txt'",
      expected: [["read", ["/p/inner.txt"]]],
    },
    {
      name: "wrappers and assignments are skipped",
      line: "FOO=1 sudo -E cat /etc/hosts",
      expected: [["read", ["/etc/hosts"]]],
    },
    { name: "a script claims nothing", line: "python3 tests/test_calc.py", expected: [] },
    { name: "a build claims nothing", line: "npm run build && git status --short", expected: [] },
    {
      name: "a quoted ; is not a separator",
      line: "grep 'a;b' f",
      expected: [["search", ["/p/f"], "a;b"]],
    },
    {
      name: "a command substitution runs as its own command; its output is no file name",
      line: "cat $(ls *.md)",
      expected: [["list", ["/p/*.md"]]],
    },
    {
      name: "a here-string is data, not a file",
      line: "grep x <<< 'f.txt'",
      expected: [["search", ["/p"], "x"]],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(brief(shellEffects(c.line, CWD)), c.expected));
  }
});

Deno.test("shellEffects() knows the content a here-document or echo writes", () => {
  const [e] = shellEffects("cat > notes.md <<'EOF'\n# Notes\n$HOME stays\nEOF\n", CWD);
  assertEquals([e.role, e.paths, e.change, e.content], [
    "change",
    ["/p/notes.md"],
    "write",
    "# Notes\n$HOME stays\n",
  ]);
  const [unquoted] = shellEffects("cat > a <<EOF\nx $HOME\nEOF", CWD);
  assertEquals(unquoted.content, undefined, "an unquoted here-document expands variables");
  const [plain] = shellEffects("cat <<EOF > b\nplain\nEOF", CWD);
  assertEquals(plain.content, "plain\n");
  assertEquals(shellEffects("echo hello world > c", CWD)[0].content, "hello world\n");
  assertEquals(shellEffects("echo -n x > c", CWD)[0].content, undefined);
  assertEquals(shellEffects("echo a >> c", CWD)[0].content, undefined);
});

Deno.test("namesInResult() finds the paths a search or listing names", async (t) => {
  const cases: { name: string; text: string; listing?: boolean; expected: string[] }[] = [
    {
      name: "grep -n hits",
      text: "./src/a.py:3:# TODO\nsrc/b.py:10:x",
      expected: ["./src/a.py", "src/b.py"],
    },
    { name: "grep without line numbers", text: "src/a.py:import os", expected: ["src/a.py"] },
    {
      name: "grep's complaints are not hits",
      text: "grep: ./.git/x: binary file matches",
      expected: [],
    },
    {
      name: "bare paths (globs, find)",
      text: "/p/a.ts\n./b/c.md\n",
      expected: ["/p/a.ts", "./b/c.md"],
    },
    {
      name: "Gemini's File: lines",
      text: "Found 2 matches\n---\nFile: src/a.py\nL3: x\n---",
      expected: ["src/a.py"],
    },
    {
      name: "prose is not a path",
      text: "No files found\nWall time: 0.0000 seconds",
      expected: [],
    },
    {
      name: "a listing's entries",
      text: "a.py\nb.py\n",
      listing: true,
      expected: ["a.py", "b.py"],
    },
    {
      name: "ls -l entries, links and totals",
      text:
        "total 8\ndrwxr-xr-x 2 u g 4096 Nov 30 09:47 .\n-rw-r--r-- 1 u g 52 Nov 30 09:47 README.md\nlrwxrwxrwx 1 u g 5 Nov 30 09:47 l -> x",
      listing: true,
      expected: ["README.md", "l"],
    },
  ];
  for (const c of cases) {
    await t.step(
      c.name,
      () =>
        assertEquals(namesInResult(c.text, { listing: c.listing }).map((n) => n.name), c.expected),
    );
  }
  await t.step("ls -R headings say where the names are", () => {
    const got = namesInResult("docs:\nfaq.md\n\nsrc:\napp.py", { listing: true });
    assertEquals(got.map((n) => [n.under, n.name]), [["docs", "faq.md"], ["src", "app.py"]]);
  });
});
