/**
 * `chronicle export`, `chronicle verify` and `chronicle import --canonical`: sessions as
 * redacted Markdown or one self-contained HTML file, and as canonical session files that
 * move between machines (verified before they are imported).
 */
import {
  exportSession,
  importArtifacts,
  type ImportedArtifact,
  sessionDirName,
  verifyArtifacts,
} from "../core/artifacts/mod.ts";
import {
  DOCUMENT_FORMATS,
  documentChunks,
  type DocumentFormat,
  documentInTurns,
  extensionOf,
  type RedactionSummary,
  textStream,
} from "../core/export/mod.ts";
import { pagedTurns } from "../core/paged.ts";
import { ChronicleError, type PayloadRef } from "../core/model/mod.ts";
import { type CustomRule, RuleStore, scanSession, termSafe } from "../core/security/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import { denoArtifactReader, denoArtifactWriter } from "../runtime/artifact_fs.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import type { CliIo, Command } from "./io.ts";
import { userPath } from "./user_cwd.ts";
import { isOsError, osErrorLine } from "./os_error.ts";

export const EXPORT_HELP = `Usage: chronicle export [ID | all] [--project PATH] [--since DATE]
                        [--format md|html|canonical] [--out PATH] [OPTIONS]

Writes sessions as files to read or send, or to move to another machine.

Formats:
  md         one Markdown file a session: a header (agent, model, project, times, tokens),
             prompts, replies, tool calls with their inputs and truncated results, diffs as
             fenced diff blocks, sub-agents nested, errors marked
  html       one self-contained HTML page a session: the same, with inline CSS and no
             script; long outputs fold; opens from file:// with no network, safe to mail
  canonical  DIR/sessions/<agent>_<native id>/{manifest.json, session.json, payloads/<sha256>}: the
             canonical session (schema v1), folders 0700, files 0600, written to a temporary
             folder and renamed into place, manifest last; \`chronicle import --canonical DIR\`
             reads it back

md and html are redacted (secrets and personal data replaced by core/security's rules and
your custom rules); a summary of what redaction found goes to stderr. canonical is a
faithful copy unless --redact.

Sessions: an ID (full id, native id or unique prefix), "all", or the filters alone.

Options:
  --format F        md, html or canonical (default canonical)
  --out PATH        md/html: the file to write (default: standard output), or a folder for
                    several sessions; canonical: the folder (required). Relative paths are
                    taken from the folder you ran the command in
  --project PATH    only sessions of this project (and its subfolders)
  --since DATE      only sessions active on or after this ISO date
  --redact          redact (default for md and html; optional for canonical)
  --no-redact       write secrets as they are (md/html; prints a warning)
  --thinking        include the agent's thinking (md/html; left out by default)
  --json            print what was written as JSON
  -h, --help        show this help
`;

/** What redaction found, as the lines the CLI prints (masked samples, never secrets). */
export function redactionReport(r: RedactionSummary, label = "Redaction", samples = 10): string {
  if (!r.enabled) return `${label}: off (--no-redact)\n`;
  if (!r.total) return `${label}: nothing found to redact\n`;
  const rules = Object.entries(r.by_rule).map(([k, v]) => `${k} ${v}`).join(", ");
  const lines = [`${label}: ${r.total} finding${r.total === 1 ? "" : "s"} replaced (${rules})`];
  for (const s of r.samples.slice(0, samples)) {
    lines.push(`  ${s.where}, ${s.rule}: ${termSafe(s.sample.replace(/\s+/g, " "))}`);
  }
  if (r.total > samples) {
    lines.push(`  … and ${r.total - Math.min(samples, r.samples.length)} more`);
  }
  return lines.join("\n") + "\n";
}

export const NO_REDACT_WARNING =
  "chronicle: WARNING: --no-redact: the export holds every secret and personal detail the " +
  "session saw. Do not send it to anyone.\n";

/** Throws a usage error for a selection that can name no sessions, before any I/O. */
export function checkSelection(selection: { id?: string; project?: string; since?: string }) {
  const { id, project, since } = selection;
  if (!id && !project && !since) {
    throw new UsageError('name a session ID, "all", or filters (--project, --since)');
  }
  if (since !== undefined && Number.isNaN(Date.parse(since))) {
    throw new UsageError(`--since "${since}" is not an ISO date`);
  }
  if (id && id !== "all" && (project || since)) {
    throw new UsageError('give a session ID or filters, not both (or "all")');
  }
}

/** The sessions a command names: one ID, "all", or the project / since filters. */
export function selectSessions(
  store: ChronicleStore,
  io: CliIo,
  selection: { id?: string; project?: string; since?: string },
): string[] {
  checkSelection(selection);
  const { id, project, since } = selection;
  if (id && id !== "all") {
    try {
      return [store.requireSessionId(id)];
    } catch (e) {
      if (e instanceof ChronicleError) throw new NotFound(termSafe(e.message), { cause: e });
      throw e;
    }
  }
  const ids: string[] = [];
  const q = { project: project ? userPath(io.cwd, project) : undefined, from: since };
  for (let offset = 0;; offset += 1000) {
    const page = store.listSessions({ ...q, limit: 1000, offset, order: "asc" }).items;
    ids.push(...page.map((s) => s.id));
    if (page.length < 1000) break;
  }
  if (!ids.length) throw new NotFound("no session matches");
  return ids;
}

/** A failure the command reports in one line with exit 1. */
class NotFound extends Error {}

function activeRules(store: ChronicleStore): readonly CustomRule[] {
  return new RuleStore(store.ruleTable).active();
}

/**
 * Writes a file next to its target, a piece of text at a time as it is rendered, and renames
 * it into place (0600); its size in bytes.
 */
async function writeFileAtomic(path: string, pieces: Iterable<string>): Promise<number> {
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  let bytes = 0;
  try {
    await denoArtifactWriter.writeFile(
      tmp,
      textStream(pieces, { bytes: (b) => (bytes += b.byteLength) }),
      0o600,
    );
  } catch (e) {
    await denoArtifactWriter.remove(tmp).catch(() => {});
    // which file, and why: "chronicle: no such file or folder" alone named neither
    throw isOsError(e) ? new ChronicleError("io", osErrorLine(`cannot write ${path}`, e)) : e;
  }
  try {
    await denoArtifactWriter.rename(tmp, path);
  } catch (e) {
    await denoArtifactWriter.remove(tmp);
    throw e;
  }
  return bytes;
}

/**
 * Refuses a path to read exports from that is not a folder, with one line that names it as the
 * user typed it (`shown`): "No exported sessions found" said nothing of a mistyped path, and an
 * import had opened (or made) the store first.
 */
async function exportFolder(path: string, shown: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    throw isOsError(e) ? new ChronicleError("io", osErrorLine(`cannot read "${shown}"`, e)) : e;
  }
  if (!info.isDirectory) {
    throw new ChronicleError("io", `"${shown}" is a file, not a folder of exported sessions`);
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

export const exportCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    format: { type: "string" },
    out: { type: "string" },
    project: { type: "string" },
    since: { type: "string" },
    redact: { type: "boolean" },
    "no-redact": { type: "boolean" },
    thinking: { type: "boolean" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, EXPORT_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length > 1) throw new UsageError("export takes at most one session id");
  const format = str(p.values.format) ?? "canonical";
  if (format !== "canonical" && !(DOCUMENT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`unknown --format "${format}" (known: md, html, canonical)`);
  }
  if (p.values.redact && p.values["no-redact"]) {
    throw new UsageError("--redact and --no-redact contradict each other");
  }
  const out = str(p.values.out);
  const selection = {
    id: p.positionals[0],
    project: str(p.values.project),
    since: str(p.values.since),
  };
  checkSelection(selection);
  if (format === "canonical") {
    if (!out) throw new UsageError("export --format canonical needs --out DIR");
    if (p.values["no-redact"]) throw new UsageError("canonical is unredacted unless --redact");
    if (p.values.thinking) throw new UsageError("--thinking is for md and html");
  }
  const { store } = await openUserStore(io);
  try {
    let ids: string[];
    try {
      ids = selectSessions(store, io, selection);
    } catch (e) {
      if (!(e instanceof NotFound)) throw e;
      io.stderr(`chronicle: ${e.message}\n`);
      return 1;
    }
    if (format === "canonical") {
      return await exportCanonical(store, io, ids, {
        outDir: userPath(io.cwd, out!),
        redact: p.values.redact === true,
        json: p.values.json === true,
      });
    }
    const redact = p.values["no-redact"] !== true;
    if (!redact) io.stderr(NO_REDACT_WARNING);
    const f = format as DocumentFormat;
    const target = out ? userPath(io.cwd, out) : null;
    const intoFolder = target !== null && (ids.length > 1 || await isDirectory(target));
    if (ids.length > 1 && !target) {
      throw new UsageError(`${ids.length} sessions: name a folder with --out DIR`);
    }
    if (intoFolder) await denoArtifactWriter.mkdir(target!, 0o700);
    const rules = activeRules(store);
    const written: {
      session_id: string;
      path: string | null;
      bytes: number;
      redaction: RedactionSummary;
    }[] = [];
    for (const id of ids) {
      // built a page of steps at a time (a collection every few pages), written as rendered
      const doc = (await documentInTurns(store, id, {
        redact,
        rules,
        thinking: p.values.thinking === true,
        turn: pagedTurns(),
      }))!;
      const pieces = documentChunks(doc, f);
      const redaction = doc.redaction;
      if (ids.length === 1 && !p.values.json) io.stderr(redactionReport(redaction));
      if (!target) {
        let bytes = 0;
        for (const piece of pieces) {
          io.stdout(piece);
          bytes += utf8Length(piece);
        }
        written.push({ session_id: id, path: null, bytes, redaction });
        continue;
      }
      const path = intoFolder ? `${target}/${sessionDirName(id)}${extensionOf(f)}` : target;
      written.push({ session_id: id, path, bytes: await writeFileAtomic(path, pieces), redaction });
    }
    if (ids.length > 1 && !p.values.json) {
      const total = written.reduce((n, w) => n + w.redaction.total, 0);
      io.stderr(
        `Redaction: ${total} finding${total === 1 ? "" : "s"} replaced in ${ids.length} sessions\n`,
      );
    }
    if (p.values.json) {
      io.stdout(
        JSON.stringify(
          {
            written: written.map(({ redaction, ...w }) => ({
              ...w,
              findings: redaction.total,
              by_rule: redaction.by_rule,
              redacted: redaction.enabled,
            })),
          },
          null,
          2,
        ) + "\n",
      );
    } else if (target) {
      io.stdout(written.map((w) => `wrote ${termSafe(w.path!)}\n`).join(""));
    }
    return 0;
  } finally {
    store.close();
  }
};

async function exportCanonical(
  store: ChronicleStore,
  io: CliIo,
  ids: string[],
  options: { outDir: string; redact: boolean; json: boolean },
): Promise<number> {
  const rules = options.redact ? activeRules(store) : [];
  const decoder = new TextDecoder();
  const written: string[] = [];
  let findings = 0;
  const readPayload = (ref: PayloadRef) => {
    if (!("sha256" in ref)) return null;
    const bytes = store.payload(ref.sha256);
    return bytes ? decoder.decode(bytes) : null;
  };
  for (const sid of ids) {
    // never the session whole: its outline, then its steps a part of 1,000 at a time, each
    // redacted on its own when asked (a session of 35,000 steps)
    const outline = store.sessionOutline(sid);
    if (!outline) {
      io.stderr(`chronicle: no session "${termSafe(sid)}" (see \`chronicle sessions\`)\n`);
      return 1;
    }
    const parts = (function* () {
      for (const part of store.sessionParts(sid)) {
        if (!options.redact) yield part;
        else {
          const scan = scanSession(part, { rules, readPayload });
          findings += scan.total;
          yield scan.redacted;
        }
      }
    })();
    // the first part holds the session's own fields (title, last prompt, extensions)
    const first = parts.next();
    const own = first.done ? outline.session : first.value;
    const pages = (function* () {
      for (let part = first; !part.done; part = parts.next()) {
        yield part.value.timeline.map((t) => ({
          id: t.op,
          connection: t.connection,
          op: part.value.operations[t.op],
        }));
      }
    })();
    const session = {
      outline: {
        ...outline,
        session: { ...outline.session, session: own.session, extensions: own.extensions },
      },
      pages,
    };
    written.push(
      await exportSession(session, {
        writer: denoArtifactWriter,
        readPayload: (sha) => store.payload(sha),
        readOrder: (shas) => store.payloadOrder(shas),
      }, options.outDir),
    );
  }
  if (options.redact && !options.json) {
    io.stderr(`Redaction: ${findings} finding${findings === 1 ? "" : "s"} replaced\n`);
  }
  io.stdout(
    options.json
      ? JSON.stringify({ written }, null, 2) + "\n"
      : written.map((w) => `wrote ${termSafe(w)}\n`).join(""),
  );
  return 0;
}

export const VERIFY_HELP = `Usage: chronicle verify DIR [--json]

Checks exported canonical session files: the schema version, that session.json matches the
checksum in manifest.json, that the session is valid, and that every payload exists and
matches its SHA-256. DIR is an export folder (holding sessions/) or one session folder.
Exit 0 when everything matches, 1 on any mismatch.

Options:
  --json      print the report as JSON
  -h, --help  show this help
`;

export const verifyCommand: Command = async (args, io) => {
  const p = parseArgs(args, { json: { type: "boolean" } });
  const early = helpOrVersion(p, VERIFY_HELP, io);
  if (early !== null) return early;
  const dir = p.positionals[0];
  if (!dir || p.positionals.length > 1) throw new UsageError("verify takes exactly one folder");
  const root = userPath(io.cwd, dir);
  await exportFolder(root, dir);
  const report = await verifyArtifacts(denoArtifactReader, root);
  if (p.values.json) io.stdout(JSON.stringify(report, null, 2) + "\n");
  else if (!report.sessions.length) io.stdout(`No exported sessions found in ${termSafe(dir)}\n`);
  else {
    for (const s of report.sessions) {
      io.stdout(`${s.ok ? "ok  " : "FAIL"} ${termSafe(s.id)} (${s.payloads} payloads)\n`);
      for (const problem of s.problems) io.stdout(`     ${termSafe(problem)}\n`);
    }
  }
  return report.ok ? 0 : 1;
};

const OUTCOME_LABEL: Record<string, string> = {
  imported: "imported ",
  unchanged: "unchanged",
  kept_local: "kept     ",
  forgotten: "forgotten",
  failed: "FAILED   ",
};

/**
 * `chronicle import --canonical DIR`: puts exported canonical sessions into the store, each
 * verified first. The same export imported twice changes nothing; a session that this
 * machine's own agent logs hold is kept as those logs say.
 */
export async function importCanonical(io: CliIo, dir: string, json: boolean): Promise<number> {
  const root = userPath(io.cwd, dir);
  await exportFolder(root, dir);
  const { store } = await openUserStore(io);
  try {
    const report = await importArtifacts(denoArtifactReader, root, {
      skip: (id, sha) => store.canonicalSkip(id, sha),
      put: (session) => store.putCanonicalPages(session),
    });
    if (json) io.stdout(JSON.stringify(report, null, 2) + "\n");
    else if (!report.sessions.length) {
      io.stdout(`No exported sessions found in ${termSafe(dir)}\n`);
    } else {
      io.stdout(report.sessions.map(importLine).join(""));
      const n = (o: string) => report.sessions.filter((s) => s.outcome === o).length;
      io.stdout(
        `${n("imported")} imported, ${n("unchanged")} unchanged, ${
          n("kept_local")
        } kept from local logs, ${
          n("forgotten") ? `${n("forgotten")} forgotten here (not imported), ` : ""
        }${n("failed")} failed\n`,
      );
    }
    return report.ok && report.sessions.length > 0 ? 0 : 1;
  } finally {
    store.close();
  }
}

function importLine(s: ImportedArtifact): string {
  const lines = [`${OUTCOME_LABEL[s.outcome] ?? s.outcome} ${termSafe(s.id)}`];
  if (s.outcome === "kept_local") lines[0] += " (this machine imports it from its own logs)";
  if (s.outcome === "forgotten") lines[0] += " (forgotten here: never imported again)";
  for (const p of s.problems) lines.push(`          ${termSafe(p)}`);
  return lines.join("\n") + "\n";
}

const encoder = new TextEncoder();
/** A text's size in UTF-8 bytes. */
const utf8Length = (text: string) => encoder.encode(text).byteLength;
