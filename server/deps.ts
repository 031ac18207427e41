/**
 * What the server is built from. `createApp(deps)` takes these; the CLI builds the real ones
 * and tests pass in-memory stores and fakes.
 */
import type { SessionWork } from "./session_work.ts";
import type { DoctorReport } from "../core/doctor/mod.ts";
import type { GitEngine } from "../core/git/mod.ts";
import type { ExcludeList } from "../core/archive/mod.ts";
import type { ChronicleStore, ForgetOutcome, ForgottenSession } from "../core/store/mod.ts";
import type { ReplayService } from "./replay_service.ts";
import type { ImportProgress, LiveService } from "../core/live/mod.ts";
import type { EventHub } from "./sse.ts";
import type { StaticHandler } from "./static.ts";

export interface SecurityRuleView {
  id: string;
  name: string;
  pattern: string;
  action: "redact" | "allow";
  enabled: boolean;
  created_at: string;
}

export interface NewRule {
  name: string;
  pattern: string;
  action: "redact" | "allow";
}

export interface GuardStatus {
  installed: boolean;
  /** When installed: the installed command blocked a known-bad call and allowed a good one. */
  working?: boolean;
  /** One sentence from the self-test. */
  detail?: string;
  settings_path: string;
  /** What installing does, in a sentence or two, shown beside the button. */
  explanation: string;
}

/**
 * The security engine as the API sees it. The CLI wires core/security into this shape; the
 * server passes results through as JSON.
 */
export interface SecurityService {
  listRules(): SecurityRuleView[];
  addRule(rule: NewRule): SecurityRuleView;
  /** Throws ChronicleError("not_found") for an unknown id. */
  setRuleEnabled(id: string, enabled: boolean): SecurityRuleView;
  /** Throws ChronicleError("not_found") for an unknown id. */
  deleteRule(id: string): void;
  /** Security check of one session (`session_id`) or all sessions. */
  check(options: { session_id?: string; limit?: number }): Promise<unknown> | unknown;
  interceptions(options: { limit: number; offset: number }): { total: number; items: unknown[] };
  /** Moves what the guard journaled (it decides on its own) into the interception log. */
  ingestInterceptions?(): void;
  guardStatus(): Promise<GuardStatus>;
  /** Opt-in hook install; `dry_run` only describes the change. */
  installGuard(options: { dry_run: boolean }): Promise<unknown>;
  uninstallGuard(options: { dry_run: boolean }): Promise<unknown>;
}

/** The exclude list as the API shows it (see runtime/exclude_file.ts). */
export interface ExcludeView {
  /** Where the file is. */
  path: string;
  /** Null when the file is not valid (`error` says why). */
  list: ExcludeList | null;
  /** Names the file's text: a change sends it back, and is refused if the file changed since. */
  etag: string;
  error: string | null;
}

/**
 * The archive as the API sees it: the exclude list in the data folder, and forgetting
 * sessions (between imports, on the importer's connection). The CLI wires the real one.
 */
export interface ArchiveService {
  readExclude(): Promise<ExcludeView>;
  /** Replaces the list; ChronicleError `conflict` when the file changed since `etag`. */
  writeExclude(list: ExcludeList, etag: string): Promise<ExcludeView>;
  /** Forgets one session (a full id); `dry_run` only says what would go. */
  forget(id: string, options: { dry_run: boolean }): Promise<ForgetOutcome>;
  forgotten(): ForgottenSession[];
}

export interface AppDeps {
  store: ChronicleStore;
  /** The per-install token (see auth.ts). */
  token: string;
  /** The port the server listens on; a function when it is known only after binding. */
  port: number | (() => number);
  /**
   * Where heavy work on one whole session waits its turn (server/session_work.ts), shared with
   * the security service's checks. Default: one queue of this app's own.
   */
  sessionWork?: SessionWork;
  /** The security engine; without it the security routes answer 503. */
  security?: SecurityService;
  /** Replay mode; without it the replay routes answer 503. */
  replay?: ReplayService;
  /** The git engine for "code at this moment"; without it projects show recorded changes only. */
  git?: GitEngine;
  /** Live events; a private hub is made when absent. */
  events?: EventHub;
  /** Serves the UI; defaults to ui/dist beside the server. */
  static?: StaticHandler;
  /** Reported by /api/health. */
  version?: string;
  /** Clock (ms) for "live" marks; injected for tests. Default Date.now. */
  now?: () => number;
  /** Live views of sessions (`/api/sessions/:id/live`); without it they answer 503. */
  live?: LiveService;
  /** The background import's progress (the UI's bar, search's "still indexing"). */
  importProgress?: () => ImportProgress;
  /** Forgetting and the exclude list; without it the archive routes answer 503. */
  archive?: ArchiveService;
  /** `chronicle doctor`'s report (`GET /api/doctor`); without it the route answers 503. */
  doctor?: (options: { verifyPacks: boolean }) => Promise<DoctorReport>;
}
