/**
 * What `chronicle doctor` and `GET /api/doctor` answer, as plain types: the CLI prints it, the
 * API serves it and the UI bundle imports it from here (no Deno, no SQLite in this file).
 */
import type { StoreHealth } from "../store/types.ts";

/** `ok`: fine. `info`: worth knowing, nothing to do. `attention`: needs a fix (exit 1). */
export type DoctorLevel = "ok" | "info" | "attention";

export type DoctorArea = "agents" | "data" | "store" | "guard" | "tools" | "server";

/** One line of the report: what was found and, when it needs one, the fix in one line. */
export interface DoctorCheck {
  area: DoctorArea;
  /** What was checked: an agent id, a tool name, "folder", "modes", "integrity", ... */
  subject: string;
  level: DoctorLevel;
  message: string;
  fix?: string;
}

/** One agent's logs as discovery saw them. */
export interface AgentProbe {
  id: string;
  name: string;
  /** The roots discovery looked at, and whether each is there. */
  looked: { path: string; found: boolean }[];
  /** Units found (files, or databases with their WAL). */
  files: number;
  /** The newest unit's modification time (ms since the epoch), null without units. */
  newest_ms: number | null;
  /** Discovery failed (a folder it may not read, ...). */
  error?: string;
}

export interface DataFolderProbe {
  path: string;
  exists: boolean;
  is_dir: boolean;
  /** Permission bits (`0o700`); null where the platform has none. */
  mode: number | null;
  /** Chronicle's files in it (not the folders below), with their permission bits. */
  entries: { name: string; mode: number | null }[];
}

export interface StoreProbe {
  path: string;
  bytes: { db: number; wal: number; packs: number; total: number };
  health: StoreHealth;
  /** Import issues and loss windows the store holds (see `chronicle issues`). */
  issues: number;
  loss_windows: number;
}

export interface GuardProbe {
  installed: boolean;
  /** When installed: it blocked a known-bad call and allowed a good one. */
  working?: boolean;
  detail: string;
  settings_path: string;
  command: string;
}

export interface ToolProbe {
  name: "git" | "bwrap";
  /** The first line of `NAME --version`; null when it cannot be run. */
  version: string | null;
}

export interface ServerProbe {
  url: string;
  port: number;
  pid: number;
  /** It answered `/api/health`. */
  answering: boolean;
}

/** An agent's line of the report: the probe plus the newest log's age. */
export interface AgentFinding extends AgentProbe {
  /** Seconds since the newest log changed; null without logs. */
  newest_age_s: number | null;
}

export interface DoctorReport {
  /** False when any check needs attention (the CLI exits 1). */
  ok: boolean;
  /** How many checks need attention. */
  attention: number;
  checked_at: string;
  checks: DoctorCheck[];
  agents: AgentFinding[];
  data_folder: DataFolderProbe | null;
  store: StoreProbe | null;
  guard: GuardProbe | null;
  tools: ToolProbe[];
  /** The running server as `server.json` names it; null when none is recorded. */
  server: ServerProbe | null;
}
