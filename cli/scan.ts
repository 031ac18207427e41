/**
 * `chronicle scan`: find secrets and personal data in files, folders, stdin or imported
 * sessions; print findings as text, JSON or SARIF, or print the redacted text.
 * Exit 0 no findings, 1 findings, 2 error.
 */
import { termSafe, termSafeLines } from "../core/security/terminal.ts";
import { type CanonicalSession, ChronicleError, type PayloadRef } from "../core/model/mod.ts";
import {
  type CustomRule,
  type Finding,
  histogramOf,
  RuleStore,
  type ScanOptions,
  scanText,
  sessionFindings,
  toSarif,
} from "../core/security/mod.ts";
import { VERSION } from "../core/version.ts";
import { pagedTurns } from "../core/paged.ts";
import { dataDir, storePath } from "../runtime/data_dir.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import type { CliIo, Command } from "./io.ts";
import { osPhrase } from "./os_error.ts";

export const SCAN_HELP =
  `Usage: chronicle scan [PATH ...] [-] [--session ID | --all] [--format text|json|sarif]
                      [--redact] [--show-secrets]

Finds API keys, credential URLs, passwords, tokens, e-mail addresses, phone numbers and private
IP addresses. Folders are scanned recursively (binary files and .git are skipped); "-" reads
standard input. Your custom rules apply once the store exists.

Options:
  --session ID     scan one imported session (messages, tool inputs and results)
  --all            scan every imported session
  --format FMT     text (default), json or sarif (SARIF 2.1.0)
  --redact         print the redacted text instead of the findings
  --show-secrets   print each secret in full next to its finding (never the default)
  -h, --help       show this help

Exit codes: 0 no findings, 1 findings, 2 error.
`;

/** The store as the scan command needs it: sessions, their payloads and the custom rules. */
export interface ScanStore {
  /**
   * One session by id, or every session when `id` is absent: each whole, or in parts (the
   * store's `sessionParts`: consecutive parts of one session, its own fields with the first).
   */
  sessions(selector: { id?: string }): Iterable<CanonicalSession> | AsyncIterable<CanonicalSession>;
  readPayload(ref: PayloadRef): string | null;
  rules?(): readonly CustomRule[];
  close?(): void;
}

export interface ScanCommandDeps {
  /** Opens the store for `--session` and `--all`. Without it those options are errors. */
  openStore?: (io: CliIo) => Promise<ScanStore> | ScanStore;
  /** The custom rules for file and stdin scans. Default: none. */
  loadRules?: (io: CliIo) => Promise<readonly CustomRule[]> | readonly CustomRule[];
}

/** One scanned thing: a file, stdin (`-`) or one field of a session operation. */
interface Artifact {
  uri: string;
  text: string;
  findings: Finding[];
  redacted: string;
}

const MAX_FILE_BYTES = 64 * 1024 * 1024;
const decoder = new TextDecoder();

function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Files under `path` in a stable order, skipping .git folders and symlinks. */
async function* walk(path: string): AsyncGenerator<string> {
  const info = await Deno.lstat(path);
  if (info.isSymlink) return;
  if (info.isFile) {
    yield path;
    return;
  }
  if (!info.isDirectory) return;
  const names: string[] = [];
  for await (const e of Deno.readDir(path)) {
    if (e.isDirectory && e.name === ".git") continue;
    if (e.isSymlink) continue;
    names.push(e.name);
  }
  names.sort();
  for (const name of names) yield* walk(`${path.replace(/\/+$/, "")}/${name}`);
}

function label(f: Finding): string {
  return f.detail && f.detail !== f.rule && !f.custom ? `${f.rule} (${f.detail})` : f.rule;
}

function findingJson(a: Artifact, f: Finding, showSecrets: boolean) {
  const out: Record<string, unknown> = {
    rule: f.rule,
    severity: f.severity,
    line: f.line,
    column: f.column,
    end_line: f.end_line,
    end_column: f.end_column,
    start: f.start,
    end: f.end,
    replacement: f.replacement,
  };
  if (f.detail) out.detail = f.detail;
  if (f.custom) out.custom = true;
  if (showSecrets) out.secret = a.text.slice(f.start, f.end);
  return out;
}

/** Makes `chronicle scan` with the store access it needs injected. */
export function makeScanCommand(deps: ScanCommandDeps = {}): Command {
  return async (args, io) => {
    const p = parseArgs(args, {
      session: { type: "string", multiple: true },
      all: { type: "boolean" },
      format: { type: "string" },
      redact: { type: "boolean" },
      "show-secrets": { type: "boolean" },
    });
    const early = helpOrVersion(p, SCAN_HELP, io);
    if (early !== null) return early;
    const format = str(p.values.format) ?? "text";
    if (!["text", "json", "sarif"].includes(format)) {
      throw new UsageError(`--format takes text, json or sarif, not "${format}"`);
    }
    const sessionIds = (p.values.session as string[] | undefined) ?? [];
    const all = p.values.all === true;
    if (all && sessionIds.length) throw new UsageError("use --session or --all, not both");
    if (!p.positionals.length && !sessionIds.length && !all) {
      throw new UsageError('nothing to scan: give a PATH, "-" for stdin, --session ID or --all');
    }
    const showSecrets = p.values["show-secrets"] === true;
    const artifacts: Artifact[] = [];
    const errors: string[] = [];
    const counts = { files: 0, sessions: 0 };

    if (p.positionals.length) {
      const options: ScanOptions = { rules: deps.loadRules ? await deps.loadRules(io) : [] };
      const scan = (uri: string, text: string) => {
        counts.files++;
        const r = scanText(text, options);
        artifacts.push({ uri, text, findings: r.findings, redacted: r.redacted });
      };
      let stdinDone = false;
      for (const target of p.positionals) {
        if (target === "-") {
          if (!stdinDone) scan("-", decoder.decode(await io.stdin()));
          stdinDone = true;
          continue;
        }
        const path = target.startsWith("/") ? target : `${io.cwd.replace(/\/+$/, "")}/${target}`;
        try {
          for await (const file of walk(path)) {
            const shown = target.startsWith("/") ? file : target + file.slice(path.length);
            const stat = await Deno.stat(file);
            if (stat.size > MAX_FILE_BYTES) {
              io.stderr(`chronicle scan: skipped ${termSafe(shown)}: larger than 64 MiB\n`);
              continue;
            }
            const bytes = await Deno.readFile(file);
            if (isBinary(bytes)) continue;
            scan(shown, decoder.decode(bytes));
          }
        } catch (e) {
          errors.push(`cannot read "${termSafe(target)}": ${osPhrase(e)}`);
        }
      }
    }

    if (sessionIds.length || all) {
      if (!deps.openStore) {
        throw new UsageError("--session and --all need the store, which this build lacks");
      }
      const store = await deps.openStore(io);
      try {
        const options = {
          rules: store.rules?.() ?? [],
          readPayload: (r: PayloadRef) => store.readPayload(r),
        };
        const selectors = all ? [{}] : sessionIds.map((id) => ({ id }));
        for (const selector of selectors) {
          let found = false;
          const sessions = store.sessions(selector);
          const next = async function* () {
            try {
              yield* sessions;
            } catch (e) {
              if (!(e instanceof ChronicleError)) throw e;
              found = true; // said why below
              errors.push(termSafe(e.message));
            }
          };
          let last: string | undefined;
          for await (const session of next()) {
            found = true;
            if (session.session.id !== last) counts.sessions++;
            last = session.session.id;
            const r = sessionFindings(session, options); // findings only: no redacted copy
            for (const m of r.messages) {
              const field = m.op ? `${m.op}/${m.field}` : m.field;
              const uri = `session:${r.session_id}/${field}${m.path ? `#${m.path}` : ""}`;
              const text = sourceText(session, m, options.readPayload);
              artifacts.push({ uri, text, findings: m.findings, redacted: m.redacted });
            }
            if (r.unreadable) {
              io.stderr(
                `chronicle scan: ${r.unreadable} payloads of ${r.session_id} could not be read\n`,
              );
            }
          }
          if (!found && "id" in selector) {
            errors.push(`no session "${termSafe(selector.id ?? "")}"`);
          }
        }
      } finally {
        store.close?.();
      }
    }

    // nothing scanned because of an error: the error alone, never "No findings" before it
    if (artifacts.length || !errors.length) {
      print(artifacts, counts, io, { format, redact: p.values.redact === true, showSecrets });
    }
    for (const e of errors) io.stderr(`chronicle scan: ${e}\n`);
    if (errors.length) return 2;
    return artifacts.some((a) => a.findings.length) ? 1 : 0;
  };
}

/** The original text of a session field (for `--show-secrets`). */
function sourceText(
  session: CanonicalSession,
  m: { op: string; field: string; path?: string },
  read: (ref: PayloadRef) => string | null,
): string {
  if (!m.op) {
    if (m.field === "title") return session.session.title ?? "";
    if (m.field === "last_prompt") return session.session.last_prompt ?? "";
    return jsonPathString(session, m.path);
  }
  const op = session.operations[m.op];
  if (!op) return "";
  switch (m.field) {
    case "text":
      return op.text ?? "";
    case "target":
      return op.target ?? "";
    case "request":
    case "response": {
      const ref = op[m.field];
      if (!ref) return "";
      return "inline" in ref ? ref.inline : read(ref) ?? "";
    }
    default:
      return jsonPathString(op, m.path);
  }
}

function jsonPathString(root: unknown, path: string | undefined): string {
  if (!path) return "";
  let v: unknown = root;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (v === null || typeof v !== "object") return "";
    v = (v as Record<string, unknown>)[part];
  }
  return typeof v === "string" ? v : "";
}

function scannedLabel(counts: { files: number; sessions: number }): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts: string[] = [];
  if (counts.files || !counts.sessions) parts.push(plural(counts.files, "file"));
  if (counts.sessions) parts.push(plural(counts.sessions, "session"));
  return parts.join(" and ");
}

function print(
  artifacts: Artifact[],
  counts: { files: number; sessions: number },
  io: CliIo,
  opts: { format: string; redact: boolean; showSecrets: boolean },
): void {
  const withFindings = artifacts.filter((a) => a.findings.length);
  const total = withFindings.reduce((n, a) => n + a.findings.length, 0);
  const histogram: Record<string, number> = {};
  for (const a of withFindings) histogramOf(a.findings, histogram);

  if (opts.format === "sarif") {
    const sarif = toSarif(withFindings, { toolVersion: VERSION });
    io.stdout(JSON.stringify(sarif, null, 2) + "\n");
    return;
  }
  if (opts.format === "json") {
    const results = withFindings.map((a) => {
      const r: Record<string, unknown> = {
        uri: a.uri,
        findings: a.findings.map((f) => findingJson(a, f, opts.showSecrets)),
      };
      if (opts.redact) r.redacted = a.redacted;
      return r;
    });
    io.stdout(
      JSON.stringify({ scanned: counts, total, histogram, results }, null, 2) + "\n",
    );
    return;
  }
  const rules = Object.entries(histogram).map(([k, v]) => `${k} ${v}`).join(", ");
  const summary = total
    ? `${total} finding${total === 1 ? "" : "s"} (${rules}); scanned ${scannedLabel(counts)}\n`
    : `No findings; scanned ${scannedLabel(counts)}.\n`;
  if (opts.redact) {
    const many = artifacts.length > 1 || counts.sessions > 0;
    for (const a of many ? withFindings : artifacts) {
      if (many) io.stdout(`==> ${termSafe(a.uri)} <==\n`);
      // a terminal never gets raw control sequences; a pipe gets the redacted bytes as they are
      io.stdout(io.isTerminal ? termSafeLines(a.redacted) : a.redacted);
      if (many && !a.redacted.endsWith("\n")) io.stdout("\n");
    }
    io.stderr(summary);
    return;
  }
  for (const a of withFindings) {
    for (const f of a.findings) {
      const secret = opts.showSecrets
        ? `  secret: ${JSON.stringify(a.text.slice(f.start, f.end))}`
        : "";
      io.stdout(
        `${termSafe(a.uri)}:${f.line}:${f.column}  ${termSafe(label(f))}  ${
          termSafe(f.replacement)
        }${secret}\n`,
      );
    }
  }
  io.stdout(summary);
}

/** The user's store as a ScanStore: sessions page by page, payloads, enabled custom rules. */
export async function openUserScanStore(io: CliIo): Promise<ScanStore> {
  const { store } = await openUserStore(io);
  const rules = new RuleStore(store.ruleTable);
  return {
    async *sessions(selector) {
      // each session in parts of a page of steps, never whole, the pages' garbage collected as
      // it grows (a session of 35,000 steps)
      const turn = pagedTurns();
      const inParts = async function* (id: string) {
        for (const part of store.sessionParts(id)) {
          yield part;
          await turn();
        }
      };
      if (selector.id) {
        // what `show` accepts: an id, a native id, a unique prefix (else the candidates)
        yield* inParts(store.requireSessionId(selector.id));
        return;
      }
      for (let offset = 0;; offset += 200) {
        const { items } = store.listSessions({
          limit: 200,
          offset,
          sort: "started_at",
          order: "asc",
        });
        for (const item of items) yield* inParts(item.id);
        if (items.length < 200) return;
      }
    },
    readPayload: (ref) => store.payloadText(ref),
    rules: () => rules.active(),
    close: () => store.close(),
  };
}

/** Custom rules for file scans, read from the store only when it already exists. */
export async function loadUserRules(io: CliIo): Promise<readonly CustomRule[]> {
  try {
    await Deno.stat(storePath(dataDir(io.env)));
  } catch {
    return [];
  }
  const { store } = await openUserStore(io);
  try {
    return new RuleStore(store.ruleTable).active();
  } finally {
    store.close();
  }
}

/** `chronicle scan` wired to the user's store. */
export const scanCommand: Command = makeScanCommand({
  openStore: openUserScanStore,
  loadRules: loadUserRules,
});
