/** The git engine against real repositories made in the test (git must be installed). */
import { assert, assertEquals, assertRejects } from "../_helpers/assert.ts";
import { createGitEngine, gitEnv, type TreeEntry } from "../../core/git/mod.ts";
import { ChronicleError } from "../../core/model/mod.ts";
import { denoProcessRunner } from "../../runtime/process_runner.ts";
import { git as sh } from "../_helpers/git.ts";

const dec = new TextDecoder();
const git = createGitEngine(denoProcessRunner, { env: gitEnv(Deno.env.toObject()) });

/** A repository with two commits: 09:00 (a.txt, src/b.txt, link) and 10:00 (a.txt changed, c.txt). */
async function twoCommits() {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-git-" });
  await sh(dir, ["init", "-q", "-b", "main"]);
  await Deno.mkdir(`${dir}/src`);
  await Deno.writeTextFile(`${dir}/a.txt`, "one\n");
  await Deno.writeTextFile(`${dir}/src/b.txt`, "bee\n");
  await Deno.writeTextFile(`${dir}/$(rm -rf ~) "q"\nx`, "odd\n");
  await Deno.symlink("/", `${dir}/root-link`);
  await sh(dir, ["add", "-A"]);
  await sh(dir, ["commit", "-q", "-m", "first"], "2026-11-30T09:00:00Z");
  const first = await sh(dir, ["rev-parse", "HEAD"]);
  await Deno.writeTextFile(`${dir}/a.txt`, "two\n");
  await Deno.writeTextFile(`${dir}/c.txt`, "sea\n");
  await sh(dir, ["add", "-A"]);
  await sh(dir, ["commit", "-q", "-m", "second"], "2026-11-30T10:00:00Z");
  const second = await sh(dir, ["rev-parse", "HEAD"]);
  return { dir, first, second };
}

Deno.test("commitAt() finds the last commit at or before a time, and none before the first", async () => {
  const { dir, first, second } = await twoCommits();
  try {
    assertEquals((await git.commitAt(dir, Date.parse("2026-11-30T09:30:00Z")))?.sha, first);
    assertEquals((await git.commitAt(dir, Date.parse("2026-11-30T10:00:00Z")))?.sha, second);
    assertEquals(await git.commitAt(dir, Date.parse("2026-11-30T08:59:59Z")), null);
    const between = await git.commitsBetween(
      dir,
      Date.parse("2026-11-30T08:00:00Z"),
      Date.parse("2026-11-30T11:00:00Z"),
    );
    assertEquals(between.map((c) => c.subject), ["second", "first"]);
    assertEquals(between[0].parents, [first]);
    assertEquals(between[1].committedMs, Date.parse("2026-11-30T09:00:00Z"));
    assertEquals((await git.commit(dir, "HEAD~1"))?.sha, first);
    assertEquals(await git.commit(dir, "no-such-branch"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tree() and fileAt() read a commit, odd names and symlinks included", async () => {
  const { dir, first, second } = await twoCommits();
  try {
    const tree = await git.tree(dir, first);
    const byPath = new Map(tree.map((e) => [e.path, e]));
    assertEquals(byPath.get("root-link")?.mode, "120000");
    assert(byPath.has('$(rm -rf ~) "q"\nx'), [...byPath.keys()].join(","));
    assertEquals((await git.tree(dir, first, { path: `${dir}/src` })).map((e) => e.path), [
      "src/b.txt",
    ]);
    assertEquals(dec.decode((await git.fileAt(dir, first, "a.txt"))!), "one\n");
    assertEquals(dec.decode((await git.fileAt(dir, second, `${dir}/a.txt`))!), "two\n");
    assertEquals(await git.fileAt(dir, first, "c.txt"), null);
    const at = await git.fileAtTime(dir, Date.parse("2026-11-30T09:10:00Z"), "a.txt");
    assertEquals(at?.commit.sha, first);
    assertEquals(dec.decode(at!.bytes!), "one\n");
    for (const outside of ["../x", "/etc/passwd", `${dir}/../x`]) {
      const e = await assertRejects(() => git.fileAt(dir, first, outside), ChronicleError);
      assertEquals((e as ChronicleError).code, "outside");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("changedFiles() between commits and to the working tree, untracked files included", async () => {
  const { dir, first, second } = await twoCommits();
  try {
    const between = await git.changedFiles(dir, first, second);
    assertEquals(between.map((c) => `${c.status} ${c.path}`).sort(), ["A c.txt", "M a.txt"]);
    await Deno.writeTextFile(`${dir}/new file.txt`, "n\n");
    await Deno.remove(`${dir}/c.txt`);
    const work = await git.changedFiles(dir, second);
    assertEquals(work.map((c) => `${c.status} ${c.path}`).sort(), ["? new file.txt", "D c.txt"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("archive() streams every file of a commit, symlink targets as their bytes", async () => {
  const { dir, first } = await twoCommits();
  try {
    const got: [TreeEntry, string][] = [];
    const r = await git.archive(dir, first, (e, b) => void got.push([e, dec.decode(b)]));
    assertEquals(r.files, 4);
    assertEquals(
      got.map(([e, t]) => `${e.mode} ${e.path}=${t}`).sort(),
      [
        '100644 $(rm -rf ~) "q"\nx=odd\n',
        "100644 a.txt=one\n",
        "100644 src/b.txt=bee\n",
        "120000 root-link=/",
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repo() describes empty repositories, detached heads, shallow clones and worktrees", async () => {
  const empty = await Deno.makeTempDir({ prefix: "chronicle-git-" });
  const { dir, first, second } = await twoCommits();
  const shallow = await Deno.makeTempDir({ prefix: "chronicle-git-" });
  const wt = `${await Deno.makeTempDir({ prefix: "chronicle-git-" })}/wt`;
  try {
    await sh(empty, ["init", "-q", "-b", "main"]);
    const e = await git.repo(empty);
    assertEquals([e.head, e.branch, e.shallow, e.worktree], [null, "main", false, false]);
    assertEquals(await git.commitAt(empty, Date.now()), null);
    assertEquals(await git.commitsBetween(empty, 0, Date.now()), []);

    const main = await git.repo(`${dir}/src`);
    assertEquals([main.root, main.head, main.branch, main.detached], [dir, second, "main", false]);

    await sh(dir, ["checkout", "-q", "--detach", first]);
    const det = await git.repo(dir);
    assertEquals([det.head, det.branch, det.detached], [first, null, true]);
    await sh(dir, ["checkout", "-q", "main"]);

    await sh(shallow, ["clone", "-q", "--depth", "1", `file://${dir}`, "c"]);
    const sc = await git.repo(`${shallow}/c`);
    assertEquals([sc.shallow, sc.head], [true, second]);
    // The commit before the boundary is missing: nothing at 09:30 in the shallow history.
    assertEquals(await git.commitAt(`${shallow}/c`, Date.parse("2026-11-30T09:30:00Z")), null);

    await sh(dir, ["worktree", "add", "-q", "--detach", wt, first]);
    const w = await git.repo(wt);
    assertEquals([w.root, w.worktree, w.head, w.commonDir], [wt, true, first, `${dir}/.git`]);
    assertEquals(dec.decode((await git.fileAt(wt, "HEAD", "a.txt"))!), "one\n");
  } finally {
    for (const d of [empty, dir, shallow, wt.slice(0, -3)]) {
      await Deno.remove(d, { recursive: true }).catch(() => {});
    }
  }
});

Deno.test("repo() says when a folder is not a git repository or no longer exists", async () => {
  const plain = await Deno.makeTempDir({ prefix: "chronicle-git-" });
  try {
    const noGit = createGitEngine(denoProcessRunner, {
      env: {
        ...gitEnv(Deno.env.toObject()),
        GIT_CEILING_DIRECTORIES: plain.replace(/\/[^/]+$/, ""),
      },
    });
    const e1 = await assertRejects(() => noGit.repo(plain), ChronicleError);
    assertEquals((e1 as ChronicleError).code, "not_a_repo");
    const e2 = await assertRejects(() => git.repo(`${plain}/gone`), ChronicleError);
    assertEquals((e2 as ChronicleError).code, "not_found");
    assert(e2.message.includes("no longer exists"), e2.message);
  } finally {
    await Deno.remove(plain, { recursive: true });
  }
});
