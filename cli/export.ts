/** `chronicle export` and `chronicle verify`: canonical session files on disk. */
import { exportSession, verifyArtifacts } from "../core/artifacts/mod.ts";
import { denoArtifactReader, denoArtifactWriter } from "../runtime/artifact_fs.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import type { Command } from "./io.ts";

export const EXPORT_HELP = `Usage: chronicle export ID --format canonical --out DIR [--json]

Writes the session as canonical session files (schema v1):
  DIR/sessions/<id>/manifest.json   identity, checksum of session.json, payload count, issues
  DIR/sessions/<id>/session.json    the canonical session
  DIR/sessions/<id>/payloads/<sha256>  raw payload bytes
Folders are 0700 and files 0600; the session is written to a temporary folder and renamed
into place, manifest last. ID may be "all" to export every session.

Options:
  --format canonical  the only format so far
  --out DIR           where to write
  --json              print what was written as JSON
  -h, --help          show this help
`;

export const exportCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    format: { type: "string" },
    out: { type: "string" },
    json: { type: "boolean" },
  });
  const early = helpOrVersion(p, EXPORT_HELP, io);
  if (early !== null) return early;
  const id = p.positionals[0];
  if (!id || p.positionals.length > 1) throw new UsageError("export takes exactly one session id");
  const format = str(p.values.format) ?? "canonical";
  if (format !== "canonical") {
    throw new UsageError(`unknown --format "${format}" (known: canonical)`);
  }
  const out = str(p.values.out);
  if (!out) throw new UsageError("export needs --out DIR");
  const outDir = out.startsWith("/") ? out : `${io.cwd}/${out}`;
  const { store } = await openUserStore(io);
  try {
    let ids: string[];
    if (id === "all") {
      ids = [];
      for (let offset = 0;; offset += 1000) {
        const page = store.listSessions({ limit: 1000, offset }).items.map((s) => s.id);
        ids.push(...page);
        if (page.length < 1000) break;
      }
    } else ids = [store.resolveSessionId(id) ?? id];
    const written: string[] = [];
    for (const sid of ids) {
      const session = store.loadSession(sid);
      if (!session) {
        io.stderr(`chronicle: no session "${id}" (see \`chronicle sessions\`)\n`);
        return 1;
      }
      written.push(
        await exportSession(session, {
          writer: denoArtifactWriter,
          readPayload: (sha) => store.payload(sha),
        }, outDir),
      );
    }
    io.stdout(
      p.values.json
        ? JSON.stringify({ written }, null, 2) + "\n"
        : written.map((w) => `wrote ${w}\n`).join(""),
    );
    return 0;
  } finally {
    store.close();
  }
};

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
  const report = await verifyArtifacts(
    denoArtifactReader,
    dir.startsWith("/") ? dir : `${io.cwd}/${dir}`,
  );
  if (p.values.json) io.stdout(JSON.stringify(report, null, 2) + "\n");
  else if (!report.sessions.length) io.stdout(`No exported sessions found in ${dir}\n`);
  else {
    for (const s of report.sessions) {
      io.stdout(`${s.ok ? "ok  " : "FAIL"} ${s.id} (${s.payloads} payloads)\n`);
      for (const problem of s.problems) io.stdout(`     ${problem}\n`);
    }
  }
  return report.ok ? 0 : 1;
};
