/**
 * Attacks on replay, each a test: targets that leave the project, a symlink to / in the seeded
 * tree, a symlink made by a command and written through, odd file names, a command that tries
 * the network and commands that write outside the sandbox. Nothing outside the sandbox may
 * change: the scratch HOME and the project are hashed before and after.
 */
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { git } from "../../_helpers/git.ts";
import type { CanonicalSession, Operation } from "../../../core/model/mod.ts";
import { sha256Hex } from "../../../core/model/mod.ts";
import { replay } from "./_run.ts";

const ODD = '$(rm -rf ~) "q"\nx';

/** SHA-256 over every path, link target and file of a folder (sorted), .git included. */
async function hashTree(dir: string): Promise<string> {
  const parts: string[] = [];
  const walk = async (d: string, rel: string) => {
    const names: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(d)) names.push(e);
    names.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of names) {
      const p = `${rel}/${e.name}`;
      const full = `${d}/${e.name}`;
      if (e.isSymlink) parts.push(`L ${p} ${await Deno.readLink(full)}`);
      else if (e.isDirectory) {
        parts.push(`D ${p}`);
        await walk(full, p);
      } else parts.push(`F ${p} ${sha256Hex(await Deno.readFile(full))}`);
    }
  };
  await walk(dir, "");
  return sha256Hex(parts.join("\n"));
}

let n = 0;
function op(
  kind: "write" | "edit" | "exec",
  input: unknown,
  extra: Partial<Operation> = {},
): Operation {
  return {
    kind,
    effect: kind === "exec" ? "process" : "fs_write",
    tool: kind === "exec" ? "Bash" : kind === "write" ? "Write" : "Edit",
    target: typeof input === "object" && input && "file_path" in input
      ? String((input as { file_path: string }).file_path)
      : undefined,
    request: { inline: JSON.stringify(input) },
    response: { inline: "ok" },
    is_error: false,
    completeness: "complete",
    provenance: { epoch: 0, source_range: { file: "f", lines: [++n, n], bytes: [0, 1] } },
    replay: kind === "exec"
      ? { replayable: true, blockers: ["needs_confirmation"] }
      : { replayable: true, blockers: [] },
    ...extra,
  };
}

function sessionOf(project: string, ops: Operation[]): CanonicalSession {
  const operations = Object.fromEntries(ops.map((o, i) => [`op-${i}`, o]));
  return {
    schema_version: 1,
    recording: { id: "rec", source: "claude-code", source_paths: [], pipeline_version: "t" },
    session: {
      id: "claude-code:attack",
      native_id: "attack",
      source: "claude-code",
      project: { path: project, git: { branch: "main" } },
      started_at: "2026-11-30T10:00:00.000Z",
      ended_at: "2026-11-30T10:05:00.000Z",
    },
    connections: [],
    timeline: ops.map((_, i) => ({ seq: i, op: `op-${i}`, connection: "main", offset_ns: i })),
    operations,
    completeness: { connections: {}, operations: {} },
    provenance: { epochs: [], loss_windows: [] },
    usage: { by_model: {} },
    issues: [],
    extensions: {},
  };
}

Deno.test("replay keeps every attack inside the sandbox and changes nothing outside it", async () => {
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-attack-" }));
  const home = `${scratch}/home`;
  const project = `${scratch}/proj`;
  await Deno.mkdir(`${home}/.ssh`, { recursive: true });
  await Deno.writeTextFile(`${home}/.ssh/id_test`, "not a real key\n");
  await Deno.writeTextFile(`${home}/.bashrc`, "# rc\n");
  await Deno.mkdir(`${project}/src`, { recursive: true });
  await Deno.writeTextFile(`${project}/src/a.txt`, "alpha\n");
  await Deno.writeTextFile(`${project}/${ODD}`, "odd\n");
  await Deno.symlink("/", `${project}/root-link`);
  await Deno.symlink("src", `${project}/inner-link`);
  await git(project, ["init", "-q", "-b", "main"]);
  await git(project, ["add", "-A"]);
  await git(project, ["commit", "-q", "-m", "seed"]);

  let connections = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    connections++;
    return new Response("hi");
  });
  const port = server.addr.port;

  const session = sessionOf(project, [
    op("edit", { file_path: "../../etc/x", old_string: "a", new_string: "b" }),
    op("write", { file_path: "/etc/chronicle-replay-x", content: "x" }),
    op("write", { file_path: `${scratch}/outside.txt`, content: "x" }),
    op("write", { file_path: `${project}/.git/hooks/post-checkout`, content: "#!/bin/sh\n" }),
    op("edit", { file_path: `${project}/${ODD}`, old_string: "odd", new_string: "even" }),
    op("write", { file_path: `${project}/inner-link/b.txt`, content: "through an inner link\n" }),
    op("exec", { command: "ln -s / escape && echo linked" }, { response: { inline: "linked" } }),
    op("write", { file_path: `${project}/escape${scratch}/pwned.txt`, content: "x" }),
    op("write", { file_path: `${project}/root-link/tmp/pwned.txt`, content: "x" }),
    op("exec", {
      command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`,
    }, { response: { inline: "connected" } }),
    op("exec", {
      command: `echo x > ${scratch}/outside.txt; echo x > ${home}/pwned; ` +
        `touch /etc/chronicle-replay-x; rm -rf "$HOME"/.ssh ~/.bashrc; echo done`,
    }, { response: { inline: "done" } }),
    op("exec", { command: "cat -- *rm*" }, { response: { inline: "even" } }),
  ]);

  const before = { home: await hashTree(home), project: await hashTree(project) };
  const r = await replay(session, (ref) => (ref && "inline" in ref ? ref.inline : null), {
    home,
    lastToTouch: false,
  });
  try {
    const by = (seq: number) => r.steps.find((s) => s.seq === seq)!;
    for (const seq of [0, 1, 2, 3]) {
      assertEquals(by(seq).status, "blocked", `${seq}: ${by(seq).detail}`);
      assert(r.plan.steps[seq].blockers.includes("out_of_scope"));
    }
    assertMatch(by(0).detail, /leaves the project/);
    assertMatch(by(3).detail, /\.git folder/);
    // The symlink to / was not seeded; the one pointing inside was.
    assert(
      r.seed.notices.some((x) => /root-link -> \/ leads out of the sandbox/.test(x)),
      r.seed.notices.join("\n"),
    );
    assertEquals(await Deno.readLink(`${r.sandbox}/inner-link`), "src");
    // The odd name was seeded and edited; a command reads it back.
    assertEquals(by(4).status, "applied");
    assertEquals(await Deno.readTextFile(`${r.sandbox}/${ODD}`), "even\n");
    assertEquals(by(11).status, "applied", by(11).detail);
    // Writing through a link inside the sandbox is fine; through one leading out is refused.
    assertEquals(by(5).status, "applied");
    assertEquals(await Deno.readTextFile(`${r.sandbox}/src/b.txt`), "through an inner link\n");
    assertEquals(by(6).status, "applied", by(6).detail);
    assertEquals(by(7).status, "failed");
    assertMatch(by(7).detail, /^refused: escape is a symlink leading out of the sandbox/);
    // root-link was never created, so this makes an ordinary folder inside the sandbox.
    assertEquals(by(8).status, "applied");
    assert((await Deno.lstat(`${r.sandbox}/root-link`)).isDirectory);
    // No network in the jail: the command fails and the server saw nothing.
    assertEquals(by(9).status, "diverged");
    assert(by(9).exit_code !== 0 && !/^connected$/m.test(by(9).output ?? ""), by(9).output);
    assertEquals(connections, 0);
    // Writes outside the sandbox fail or land in the jail's private tmpfs.
    assertEquals(by(10).status, "diverged", by(10).detail);
    assertMatch(by(10).output ?? "", /Read-only file system/);
    assertMatch(by(10).output ?? "", /done/);
    for (
      const p of [
        `${scratch}/outside.txt`,
        `${home}/pwned`,
        "/etc/chronicle-replay-x",
        `${scratch}/pwned.txt`,
        "/tmp/pwned.txt",
      ]
    ) {
      assert(!(await Deno.lstat(p).then(() => true, () => false)), `${p} was written`);
    }
    assertEquals(await hashTree(home), before.home);
    assertEquals(await hashTree(project), before.project);
  } finally {
    r.files.close();
    await server.shutdown();
    await Deno.remove(scratch, { recursive: true });
    await Deno.remove(r.sandbox, { recursive: true });
  }
});

Deno.test("the jail kills a command at its timeout and caps its output", async () => {
  const sandbox = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-jail-" }));
  const { createBwrapShell } = await import("../../../runtime/bwrap.ts");
  const { denoProcessRunner } = await import("../../../runtime/process_runner.ts");
  const jail = createBwrapShell(denoProcessRunner, { timeoutMs: 500, maxOutputBytes: 1000 });
  try {
    assert((await jail.available()).ok);
    const slow = await jail.run("sleep 30; echo late", { sandbox, projectPath: null, workdir: "" });
    assertEquals([slow.timedOut, slow.code], [true, null]);
    assert(!slow.output.includes("late"));
    const loud = await jail.run("yes | head -c 100000", {
      sandbox,
      projectPath: null,
      workdir: "",
    });
    assertEquals([loud.code, loud.truncated, loud.output.length], [0, true, 1000]);
    // The environment is clean: nothing of the test runner's leaks in.
    const env = await jail.run(["env"], { sandbox, projectPath: null, workdir: "" });
    assertEquals(
      env.output.trim().split("\n").map((l) => l.split("=")[0]).sort(),
      ["CHRONICLE_REPLAY", "HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM"], // PWD and SHLVL from bash,
    );
  } finally {
    await Deno.remove(sandbox, { recursive: true });
  }
});
