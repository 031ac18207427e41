import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { makeGuardCommand } from "../../../cli/guard.ts";
import { FakeSecrets } from "./_fake_secrets.ts";
import { memIo } from "./_io.ts";

const fake = new FakeSecrets(21);
const KEY = fake.openai();
const HOOKS = `${FIXTURES}/peers/claude-code-hooks/constructed`;

async function project(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-guard-" });
  await Deno.writeTextFile(`${dir}/.env`, `OPENAI_API_KEY=${KEY}\n`);
  await Deno.writeTextFile(`${dir}/AUTHORS`, "Jane Roe <jane.roe@acme-corp.io>\n");
  return dir;
}

function hookPayload(file: string, tool: string, input: Record<string, unknown>): string {
  const base = JSON.parse(Deno.readTextFileSync(`${HOOKS}/${file}`));
  return JSON.stringify({ ...base, tool_name: tool, tool_input: input });
}

const guard = makeGuardCommand();

Deno.test("chronicle guard --offline blocks a Read of a file holding a key (exit 2)", async () => {
  const dir = await project();
  try {
    const { io, stdout, stderr } = memIo({
      stdin: hookPayload("pretooluse_edit.stdin.json", "Read", { file_path: `${dir}/.env` }),
    });
    assertEquals(await guard(["--offline"], io), 2);
    assertEquals(stdout(), "");
    assertStringIncludes(stderr(), `${dir}/.env`);
    assertStringIncludes(stderr(), "an .env file");
    assert(!stderr().includes(KEY));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("chronicle guard --offline allows a benign Bash and flags-but-allows an e-mail", async () => {
  const dir = await project();
  try {
    const bash = memIo({ stdin: await Deno.readTextFile(`${HOOKS}/pretooluse_bash.stdin.json`) });
    assertEquals(await guard(["--offline"], bash.io), 0);
    assertEquals([bash.stdout(), bash.stderr()], ["", ""]);
    const mail = memIo({
      stdin: hookPayload("pretooluse_bash.stdin.json", "Bash", { command: `cat ${dir}/AUTHORS` }),
    });
    assertEquals(await guard(["--offline"], mail.io), 0);
    assertEquals(mail.stdout(), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("chronicle guard hook: a payload it cannot read exits 1 with one line, never 2", async () => {
  for (const stdin of ["not json", "{}", "[1]"]) {
    const { io, stdout, stderr } = memIo({ stdin });
    assertEquals(await guard(["hook"], io), 1, stdin);
    assertEquals(stdout(), "");
    assertEquals(stderr().trim().split("\n").length, 1);
    assertStringIncludes(stderr(), "NOT checked");
  }
  const stop = memIo({ stdin: await Deno.readTextFile(`${HOOKS}/stop.stdin.json`) });
  assertEquals(await guard(["hook"], stop.io), 0, "other hook events are none of its business");
});

Deno.test("chronicle guard: usage errors exit 1, so a misconfigured hook never blocks every call", async () => {
  for (
    const args of [[], ["hook", "--nope"], ["frobnicate"], ["install", "--command", ""], [
      "status",
      "x",
    ]]
  ) {
    const { io, stderr } = memIo({ stdin: "{}" });
    assertEquals(await guard(args, io), 1, args.join(" "));
    assertStringIncludes(stderr(), "chronicle guard:");
  }
});

Deno.test("chronicle guard hook journals what it blocks in the data folder (0600), with no server", async () => {
  const dir = await project();
  const data = await Deno.makeTempDir({ prefix: "chronicle-data-" });
  try {
    const { io } = memIo({
      env: { HOME: dir, CHRONICLE_HOME: data },
      stdin: hookPayload("pretooluse_edit.stdin.json", "Bash", { command: `cat ${dir}/.env` }),
    });
    assertEquals(await guard(["hook"], io), 2);
    const journal = await Deno.readTextFile(`${data}/interceptions.jsonl`);
    const record = JSON.parse(journal.trim());
    assertEquals([record.tool, record.action, record.file], ["Bash", "block", `${dir}/.env`]);
    assert(!journal.includes(KEY));
    assertEquals((await Deno.stat(`${data}/interceptions.jsonl`)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
});

async function home(settings: string | null) {
  const dir = await Deno.makeTempDir({ prefix: "chronicle-home-" });
  await Deno.mkdir(`${dir}/.claude`);
  if (settings !== null) await Deno.writeTextFile(`${dir}/.claude/settings.json`, settings);
  const env = { HOME: dir, CHRONICLE_HOME: `${dir}/data` };
  return { dir, env, settings: `${dir}/.claude/settings.json` };
}

Deno.test("guard install / uninstall round trip on a real settings.json with other hooks", async () => {
  const original = await Deno.readTextFile(`${HOOKS}/settings.json`);
  const h = await home(original);
  const g = makeGuardCommand({ now: () => new Date("2026-03-04T05:06:07.890Z") });
  try {
    const dry = memIo({ env: h.env });
    assertEquals(await g(["install", "--dry-run", "--command", "/opt/chronicle-guard"], dry.io), 0);
    assertStringIncludes(dry.stdout(), "Dry run: Add the guard hook");
    assertEquals(await Deno.readTextFile(h.settings), original, "a dry run writes nothing");

    const install = memIo({ env: h.env });
    assertEquals(await g(["install", "--command", "/opt/chronicle-guard"], install.io), 0);
    const backup = `${h.env.CHRONICLE_HOME}/backups/settings-20260304T050607890Z.json`;
    assertStringIncludes(install.stdout(), backup);
    assertEquals(await Deno.readTextFile(backup), original);
    assertEquals((await Deno.stat(backup)).mode! & 0o777, 0o600);

    const installed = JSON.parse(await Deno.readTextFile(h.settings));
    const ours = installed.hooks.PreToolUse.pop();
    assertEquals(ours.hooks[0].command, "/opt/chronicle-guard");
    assertEquals(installed, JSON.parse(original), "everything else is kept");

    const again = memIo({ env: h.env });
    assertEquals(await g(["install", "--command", "/opt/chronicle-guard"], again.io), 0);
    assertStringIncludes(again.stdout(), "already");
    assertEquals([...Deno.readDirSync(`${h.env.CHRONICLE_HOME}/backups`)].length, 1);

    const uninstall = memIo({ env: h.env });
    assertEquals(await g(["uninstall", "--command", "/opt/chronicle-guard"], uninstall.io), 0);
    assertEquals(JSON.parse(await Deno.readTextFile(h.settings)), JSON.parse(original));
    const twice = memIo({ env: h.env });
    assertEquals(await g(["uninstall", "--command", "/opt/chronicle-guard"], twice.io), 0);
    assertStringIncludes(twice.stdout(), "No guard hook");
  } finally {
    await Deno.remove(h.dir, { recursive: true });
  }
});

Deno.test("guard install reports a malformed settings.json and leaves it untouched", async () => {
  const broken = '{"hooks": {"PreToolUse": [ }';
  const h = await home(broken);
  try {
    const { io, stderr } = memIo({ env: h.env });
    assertEquals(await makeGuardCommand()(["install", "--command", "x"], io), 1);
    assertStringIncludes(stderr(), "not valid JSON");
    assertStringIncludes(stderr(), "Nothing was changed");
    assertEquals(await Deno.readTextFile(h.settings), broken);
  } finally {
    await Deno.remove(h.dir, { recursive: true });
  }
});

Deno.test("guard install creates settings.json when there is none", async () => {
  const h = await home(null);
  try {
    const { io } = memIo({ env: h.env });
    assertEquals(await makeGuardCommand()(["install", "--command", "g"], io), 0);
    const s = JSON.parse(await Deno.readTextFile(h.settings));
    assertEquals(s.hooks.PreToolUse[0].hooks[0].command, "g");
  } finally {
    await Deno.remove(h.dir, { recursive: true });
  }
});

Deno.test("guard install writes through a symlinked settings.json and refuses read-only or odd ones", async () => {
  const h = await home(null);
  try {
    const real = `${h.dir}/dotfiles-settings.json`;
    await Deno.writeTextFile(real, '{\n  // mine\n  "model": "opus"\n}\n');
    await Deno.symlink(real, h.settings);
    const { io } = memIo({ env: h.env });
    assertEquals(await makeGuardCommand()(["install", "--command", "g"], io), 0);
    assertEquals((await Deno.lstat(h.settings)).isSymlink, true, "the link is kept");
    const text = await Deno.readTextFile(real);
    assertStringIncludes(text, "// mine");
    assertStringIncludes(text, '"command": "g"');

    await Deno.chmod(real, 0o444);
    const ro = memIo({ env: h.env });
    assertEquals(await makeGuardCommand()(["uninstall", "--command", "g"], ro.io), 1);
    assertStringIncludes(ro.stderr(), "read-only");
    assertEquals(await Deno.readTextFile(real), text);

    await Deno.remove(h.settings);
    await Deno.mkdir(h.settings);
    const dir = memIo({ env: h.env });
    assertEquals(await makeGuardCommand()(["install", "--command", "g"], dir.io), 1);
    assertStringIncludes(dir.stderr(), "not a regular file");
  } finally {
    await Deno.remove(h.dir, { recursive: true });
  }
});

Deno.test("guard install upgrades what an earlier install wrote, status says it is old, uninstall removes it; a user's marker hook stays", async () => {
  const legacy = "/opt/chronicle/chronicle guard hook # chronicle-guard";
  const mine = "my-checker --strict # chronicle-guard";
  const settings = (commands: string[]) =>
    JSON.stringify(
      {
        model: "opus",
        hooks: {
          PreToolUse: commands.map((command) => ({
            matcher: "*",
            hooks: [{ type: "command", command, timeout: 10 }],
          })),
        },
      },
      null,
      2,
    ) + "\n";
  const h = await home(settings([mine, legacy]));
  const g = makeGuardCommand({ expectedCommand: () => Promise.resolve("/opt/new-guard") });
  try {
    const status = memIo({ env: h.env });
    assertEquals(await g(["status"], status.io), 1, "an old install is not a working one");
    assertStringIncludes(status.stdout(), "earlier Chronicle guard hook");
    assertStringIncludes(status.stdout(), legacy);

    const install = memIo({ env: h.env });
    assertEquals(await g(["install", "--command", "/opt/new-guard"], install.io), 0);
    assertStringIncludes(install.stdout(), "Upgrade");
    assertEquals(await Deno.readTextFile(h.settings), settings([mine, "/opt/new-guard"]));

    await Deno.writeTextFile(h.settings, settings([legacy, mine]));
    const uninstall = memIo({ env: h.env });
    assertEquals(await g(["uninstall", "--command", "/opt/new-guard"], uninstall.io), 0);
    assertEquals(await Deno.readTextFile(h.settings), settings([mine]));
    const again = memIo({ env: h.env });
    assertEquals(await g(["uninstall", "--command", "/opt/new-guard"], again.io), 0);
    assertStringIncludes(again.stdout(), "No guard hook");
    assertEquals(await Deno.readTextFile(h.settings), settings([mine]), "the user's hook stays");
  } finally {
    await Deno.remove(h.dir, { recursive: true });
  }
});
