/** core/doctor judges what the probes found: one line each, a fix for what needs attention. */
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import {
  buildDoctorReport,
  type DoctorProbes,
  formatAge,
  formatBytes,
} from "../../../core/doctor/mod.ts";
import type { StoreHealth } from "../../../core/store/mod.ts";

const NOW = Date.parse("2026-12-02T12:00:00Z");

const healthy: StoreHealth = {
  quick_check: [],
  sessions: 3,
  operations: 40,
  payloads: { inline: 10, packed: 2, checked: 2, bad: 0, bad_sha256: [] },
};

/** Probes of a machine where everything is fine; each test breaks one thing. */
function fine(): DoctorProbes {
  return {
    agents: () =>
      Promise.resolve([
        {
          id: "claude-code",
          name: "Claude Code",
          looked: [{ path: "/h/.claude/projects", found: true }],
          files: 4,
          newest_ms: NOW - 3 * 3600_000,
        },
        {
          id: "codex",
          name: "Codex CLI",
          looked: [{ path: "/h/.codex/sessions", found: false }],
          files: 0,
          newest_ms: null,
        },
      ]),
    dataFolder: () =>
      Promise.resolve({
        path: "/h/.chronicle",
        exists: true,
        is_dir: true,
        mode: 0o700,
        entries: [{ name: "chronicle.db", mode: 0o600 }, {
          name: "guard/chronicle-guard",
          mode: 0o700,
        }],
      }),
    store: () =>
      Promise.resolve({
        path: "/h/.chronicle/chronicle.db",
        bytes: { db: 4096, wal: 0, packs: 8192, total: 12288 },
        health: healthy,
        issues: 0,
        loss_windows: 0,
      }),
    guard: () =>
      Promise.resolve({
        installed: true,
        working: true,
        detail: "works",
        settings_path: "/h/.claude/settings.json",
        command: "/h/.chronicle/guard/chronicle-guard",
      }),
    tools: () =>
      Promise.resolve([{ name: "git", version: "git version 2.39.5" }, {
        name: "bwrap",
        version: "bubblewrap 0.8.0",
      }]),
    server: () =>
      Promise.resolve({ url: "http://127.0.0.1:4173/", port: 4173, pid: 42, answering: true }),
  };
}

const report = (p: Partial<DoctorProbes>) =>
  buildDoctorReport({ ...fine(), ...p }, { now: () => NOW });

Deno.test("buildDoctorReport() says nothing needs attention on a healthy machine", async () => {
  const r = await report({});
  assertEquals([r.ok, r.attention], [true, 0]);
  assertEquals(r.agents[0].newest_age_s, 3 * 3600);
  const claude = r.checks.find((c) => c.subject === "claude-code")!;
  assertEquals(claude.level, "ok");
  assertEquals(claude.message, "Claude Code: 4 files in /h/.claude/projects, newest 3 h ago");
  assertEquals(r.checks.find((c) => c.subject === "codex")?.level, "info");
  assertEquals(
    r.checks.find((c) => c.area === "server")?.message,
    "Serving http://127.0.0.1:4173/ (port 4173, pid 42)",
  );
});

Deno.test("buildDoctorReport() needs attention, with a one-line fix, for each broken condition", async (t) => {
  const cases: { name: string; probes: Partial<DoctorProbes>; subject: string; fix: RegExp }[] = [
    {
      name: "no agent logs anywhere",
      probes: {
        agents: () =>
          Promise.resolve([{
            id: "codex",
            name: "Codex CLI",
            looked: [],
            files: 0,
            newest_ms: null,
          }]),
      },
      subject: "all",
      fix: /CODEX_HOME/,
    },
    {
      name: "an agent's discovery failed",
      probes: {
        agents: () =>
          Promise.resolve([{
            id: "codex",
            name: "Codex CLI",
            looked: [{ path: "/h/.codex/sessions", found: true }],
            files: 0,
            newest_ms: null,
            error: "Permission denied",
          }]),
      },
      subject: "codex",
      fix: /readable/,
    },
    {
      name: "the data folder is open to others",
      probes: {
        dataFolder: () =>
          Promise.resolve({
            path: "/h/.chronicle",
            exists: true,
            is_dir: true,
            mode: 0o755,
            entries: [],
          }),
      },
      subject: "folder",
      fix: /^chmod 700 \/h\/\.chronicle$/,
    },
    {
      name: "a file in the data folder is readable by others",
      probes: {
        dataFolder: () =>
          Promise.resolve({
            path: "/h/my data",
            exists: true,
            is_dir: true,
            mode: 0o700,
            entries: [{ name: "token", mode: 0o644 }],
          }),
      },
      subject: "modes",
      fix: /^chmod 600 '\/h\/my data\/token'$/,
    },
    {
      name: "CHRONICLE_HOME is a file",
      probes: {
        dataFolder: () =>
          Promise.resolve({ path: "/h/f", exists: true, is_dir: false, mode: 0o644, entries: [] }),
      },
      subject: "folder",
      fix: /CHRONICLE_HOME/,
    },
    {
      name: "quick_check complains",
      probes: {
        store: () =>
          Promise.resolve({
            path: "/h/.chronicle/chronicle.db",
            bytes: { db: 1, wal: 0, packs: 0, total: 1 },
            health: {
              ...healthy,
              quick_check: ["*** in database main ***", "Page 7 is never used"],
            },
            issues: 0,
            loss_windows: 0,
          }),
      },
      subject: "integrity",
      fix: /chronicle import/,
    },
    {
      name: "a pack payload no longer matches its hash",
      probes: {
        store: () =>
          Promise.resolve({
            path: "/h/.chronicle/chronicle.db",
            bytes: { db: 1, wal: 0, packs: 0, total: 1 },
            health: {
              ...healthy,
              payloads: { inline: 0, packed: 2, checked: 2, bad: 1, bad_sha256: ["ab".repeat(32)] },
            },
            issues: 0,
            loss_windows: 0,
          }),
      },
      subject: "packs",
      fix: /backup/,
    },
    {
      name: "the guard is installed but does not block",
      probes: {
        guard: () =>
          Promise.resolve({
            installed: true,
            working: false,
            detail: "exited 1",
            settings_path: "/s",
            command: "x",
          }),
      },
      subject: "guard",
      fix: /chronicle guard install/,
    },
    {
      name: "git is missing",
      probes: { tools: () => Promise.resolve([{ name: "git", version: null }]) },
      subject: "git",
      fix: /Install git/,
    },
    {
      name: "server.json names a server that does not answer",
      probes: {
        server: () =>
          Promise.resolve({ url: "http://127.0.0.1:9/", port: 9, pid: 7, answering: false }),
      },
      subject: "server",
      fix: /chronicle serve/,
    },
    {
      name: "a probe throws",
      probes: { store: () => Promise.reject(new Error("disk I/O error")) },
      subject: "the store",
      fix: /again/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const r = await report(c.probes);
      assertEquals(r.ok, false);
      const hits = r.checks.filter((x) => x.level === "attention");
      assertEquals(hits.length, 1, JSON.stringify(hits));
      assertEquals(hits[0].subject, c.subject);
      assert(hits[0].fix && !hits[0].fix.includes("\n"), "one-line fix");
      assertMatch(hits[0].fix!, c.fix);
    });
  }
});

Deno.test("buildDoctorReport() reports what is optional as info, not attention", async () => {
  const r = await report({
    guard: () =>
      Promise.resolve({ installed: false, detail: "", settings_path: "/s", command: "x" }),
    tools: () => Promise.resolve([{ name: "bwrap", version: null }]),
    server: () => Promise.resolve(null),
    store: () => Promise.resolve(null),
    dataFolder: () =>
      Promise.resolve({
        path: "/h/.chronicle",
        exists: false,
        is_dir: false,
        mode: null,
        entries: [],
      }),
  });
  assertEquals(r.ok, true);
  for (const area of ["guard", "tools", "server", "store", "data"]) {
    assertEquals(r.checks.find((c) => c.area === area)?.level, "info", area);
  }
});

Deno.test("formatAge() and formatBytes() read as people say them", () => {
  assertEquals(
    [formatAge(null), formatAge(5), formatAge(120), formatAge(7200), formatAge(86400 * 3)],
    ["never", "just now", "2 min ago", "2 h ago", "3 days ago"],
  );
  assertEquals([formatBytes(10), formatBytes(2048), formatBytes(5 << 20)], [
    "10 B",
    "2.0 KiB",
    "5.0 MiB",
  ]);
});
