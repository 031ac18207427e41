/**
 * The live guard's decision: before a tool call runs, scan what it would read (the file behind a
 * Read-like tool, the files a `cat .env` shell command names) and what it would send (its
 * input). High-severity findings block; personal data is flagged and allowed. Every decision
 * yields an interception record with a masked sample, never the secret itself.
 */
import { ChronicleError } from "../model/errors.ts";
import type { CustomRule } from "./glob_rule.ts";
import { type Finding, maskedSample, scanText } from "./scan.ts";

/** Reads at most `maxBytes` of a file; null when it cannot be read (missing, a folder ...). */
export type ReadFile = (path: string, maxBytes: number) => Promise<Uint8Array | null>;

export interface PreToolUseInput {
  tool_name: string;
  tool_input: unknown;
  /** The agent's working directory, to resolve relative paths. */
  cwd?: string;
  session_id?: string;
}

export interface PreToolUseOptions {
  /** Custom rules (allow and redact). Default: none. */
  rules?: readonly CustomRule[];
  /** Bytes of a file scanned at most. Default 1 MiB. */
  maxBytes?: number;
  /** Clock for the interception record. Default: `new Date()`. */
  now?: () => Date;
}

export type GuardAction = "block" | "flag" | "allow";

/** One logged decision (table `interceptions`). */
export interface Interception {
  at: string;
  session_id?: string;
  tool: string;
  file?: string;
  rules: string[];
  /** The first offending line with every finding masked, at most 160 characters. */
  sample?: string;
  action: GuardAction;
}

export interface PreToolUseDecision {
  decision: "block" | "allow";
  action: GuardAction;
  /** Why the call was blocked or flagged: names the rules and the file, never the secret. */
  reason?: string;
  /** Rule names that fired, blocking ones first. */
  rules: string[];
  /** Files whose content was scanned. */
  files: string[];
  interception: Interception;
}

/** Tools that read a file named in their input, across the agents Chronicle knows. */
export const READ_TOOLS: ReadonlySet<string> = new Set([
  "read",
  "read_file",
  "read_file_v2",
  "read_many_files",
  "view",
  "notebookread",
  "grep",
  "grep_search",
  "search_file_content",
  "open_file",
  "cat",
]);

const SHELL_TOOLS: ReadonlySet<string> = new Set([
  "bash",
  "shell",
  "shell_command",
  "local_shell",
  "local_shell_call",
  "exec_command",
  "container_exec",
  "unified_exec",
  "run_shell_command",
  "run_terminal_cmd",
  "run_terminal_command_v2",
]);

const PATH_KEYS = [
  "file_path",
  "filePath",
  "path",
  "absolute_path",
  "notebook_path",
  "target_file",
  "targetFile",
  "file",
  "filename",
];

/** Lockfiles are full of hashes that look random; reading them is never a leak. */
const LOCKFILE_RE =
  /(?:^|\/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|deno\.lock|bun\.lockb?|go\.sum|Cargo\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|composer\.lock|Gemfile\.lock|flake\.lock)$/;

/** Shell commands whose file arguments are printed: `cat .env` reads the secret. */
const PRINTING_COMMANDS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "bat",
  "batcat",
  "nl",
  "tac",
  "strings",
  "xxd",
  "od",
  "hexdump",
  "base64",
  "source",
  ".",
]);

const DEFAULT_MAX_BYTES = 1 << 20;
const MAX_FILES = 8;

function joinPath(cwd: string | undefined, p: string): string {
  if (p.startsWith("/") || !cwd) return p;
  const parts = `${cwd.replace(/\/+$/, "")}/${p}`.split("/");
  const out: string[] = [];
  for (const part of parts) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return "/" + out.join("/");
}

function stringsAt(input: Record<string, unknown>, keys: string[]): string[] {
  const out: string[] = [];
  for (const k of keys) {
    const v = input[k];
    if (typeof v === "string" && v) out.push(v);
  }
  for (const k of ["paths", "file_paths", "files"]) {
    const v = input[k];
    if (Array.isArray(v)) { for (const p of v) if (typeof p === "string" && p) out.push(p); }
  }
  return out;
}

/** Splits a shell command into simple commands and returns the files printing commands name. */
export function filesReadByShell(command: string): string[] {
  const files: string[] = [];
  for (const segment of command.split(/&&|\|\||[;|\n]/)) {
    const words = segment.match(/"[^"]*"|'[^']*'|[^\s"']+/g)?.map((w) =>
      w.replace(/^["']|["']$/g, "")
    ) ??
      [];
    let i = 0;
    while (i < words.length && (/^\w+=/.test(words[i]) || words[i] === "sudo")) i++;
    const name = words[i]?.split("/").pop();
    for (let j = i + 1; j < words.length; j++) {
      const w = words[j];
      if (w === "<" && words[j + 1]) files.push(words[++j]);
      else if (w.startsWith("<") && w.length > 1) files.push(w.slice(1));
    }
    if (!name || !PRINTING_COMMANDS.has(name)) continue;
    for (let j = i + 1; j < words.length; j++) {
      const w = words[j];
      if (w === "<" || w === ">" || w === ">>" || w.startsWith(">") || w === "2>&1") {
        j++;
        continue;
      }
      if (w.startsWith("-")) {
        if (/^-[nc]$/.test(w)) j++; // head -n 20
        continue;
      }
      if (/^\d+$/.test(w)) continue;
      files.push(w);
    }
  }
  return files;
}

function shellCommandOf(input: Record<string, unknown>): string | null {
  const c = input.command ?? input.cmd;
  if (typeof c === "string") return c;
  if (Array.isArray(c) && c.every((x) => typeof x === "string")) {
    // Codex: ["bash", "-lc", "cat .env"]
    return c.length >= 3 && /sh$/.test(c[0]) && c[1].startsWith("-") ? c[2] : c.join(" ");
  }
  return null;
}

/** The files a tool call would read, resolved against `cwd`, lockfiles left out. */
export function filesToInspect(input: PreToolUseInput): string[] {
  const tool = input.tool_name.toLowerCase();
  const args = input.tool_input && typeof input.tool_input === "object"
    ? input.tool_input as Record<string, unknown>
    : {};
  let paths: string[] = [];
  if (READ_TOOLS.has(tool)) paths = stringsAt(args, PATH_KEYS);
  else if (SHELL_TOOLS.has(tool)) {
    const cmd = shellCommandOf(args);
    if (cmd) paths = filesReadByShell(cmd).filter((p) => !/[*?$`]/.test(p) && !p.startsWith("~"));
  }
  const out: string[] = [];
  for (const p of paths) {
    const abs = joinPath(input.cwd, p);
    if (!LOCKFILE_RE.test(abs) && !out.includes(abs)) out.push(abs);
    if (out.length >= MAX_FILES) break;
  }
  return out;
}

function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Every string leaf of the tool input, scanned one by one so JSON escaping does not interfere. */
function inputStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const v of value) inputStrings(v, out); }
  else if (value && typeof value === "object") {
    for (const v of Object.values(value)) inputStrings(v, out);
  }
  return out;
}

interface Hit {
  where: string;
  file?: string;
  findings: Finding[];
  redacted: string;
}

function describeRules(findings: Finding[]): string {
  const names: string[] = [];
  for (const f of findings) {
    const label = f.detail && f.detail !== f.rule && !f.custom ? `${f.rule} (${f.detail})` : f.rule;
    if (!names.includes(label)) names.push(label);
  }
  return names.join(", ");
}

/**
 * Decides a tool call. Read-like tools have the file they name scanned through `readFile`
 * (capped, binary files skipped); every tool has its input scanned too. `api_key`, `password`,
 * `token`, `db_conn` and custom redact rules block; `email`, `phone`, `private_ip` are flagged.
 */
export async function preToolUseCheck(
  input: PreToolUseInput,
  readFile: ReadFile,
  options: PreToolUseOptions = {},
): Promise<PreToolUseDecision> {
  const scanOptions = { rules: options.rules };
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const hits: Hit[] = [];
  const files: string[] = [];
  for (const path of filesToInspect(input)) {
    let bytes: Uint8Array | null = null;
    try {
      bytes = await readFile(path, maxBytes);
    } catch {
      bytes = null;
    }
    if (!bytes || isBinary(bytes)) continue;
    files.push(path);
    const text = new TextDecoder().decode(
      bytes.length > maxBytes ? bytes.subarray(0, maxBytes) : bytes,
    );
    const r = scanText(text, scanOptions);
    if (r.findings.length) hits.push({ where: path, file: path, ...r });
  }
  for (const s of inputStrings(input.tool_input)) {
    const r = scanText(s, scanOptions);
    if (r.findings.length) hits.push({ where: "input", ...r });
  }

  const all = hits.flatMap((h) => h.findings.map((f) => ({ hit: h, f })));
  const high = all.filter(({ f }) => f.severity === "high");
  const action: GuardAction = high.length ? "block" : all.length ? "flag" : "allow";
  const ordered = [...high, ...all.filter(({ f }) => f.severity !== "high")];
  const rules = [...new Set(ordered.map(({ f }) => f.rule))];
  const first = ordered[0];
  const tool = input.tool_name;

  let reason: string | undefined;
  if (first) {
    const relevant = ordered.filter(({ f }) => f.severity === first.f.severity);
    const inFiles = [
      ...new Set(relevant.filter(({ hit }) => hit.file).map(({ hit }) => hit.file!)),
    ];
    const inInput = relevant.some(({ hit }) => !hit.file);
    const where = [
      ...inFiles.map((f) => `${f}`),
      ...(inInput ? [inFiles.length ? "its input" : "the tool input"] : []),
    ].join(" and ");
    const what = describeRules(relevant.map(({ f }) => f));
    reason = action === "block"
      ? `Chronicle blocked ${tool}: ${where} contains a secret (${what}). ` +
        "The value was not shown. If this is a false positive, add an allow rule in Chronicle."
      : `Chronicle flagged ${tool}: ${where} contains personal data (${what}).`;
  }

  const interception: Interception = {
    at: (options.now?.() ?? new Date()).toISOString(),
    tool,
    rules,
    action,
  };
  if (input.session_id) interception.session_id = input.session_id;
  const file = first?.hit.file ?? files[0];
  if (file) interception.file = file;
  if (first) interception.sample = maskedSample(first.hit.redacted, first.f);

  const decision: PreToolUseDecision = {
    decision: action === "block" ? "block" : "allow",
    action,
    rules,
    files,
    interception,
  };
  if (reason) decision.reason = reason;
  return decision;
}

/** What the server route answers the guard. */
export interface PreToolUseResponse {
  decision: "block" | "allow";
  action: GuardAction;
  reason?: string;
  rules: string[];
  file?: string;
}

export interface PreToolUseDeps {
  readFile: ReadFile;
  /** The custom rules in force (the store's list). */
  rules?: () => readonly CustomRule[];
  /** Persists the interception (the store's log). Errors are swallowed: logging never blocks. */
  log?: (interception: Interception) => void;
  now?: () => Date;
  maxBytes?: number;
}

/**
 * The body of `POST /api/security/pretooluse`: validates `{tool_name, tool_input, cwd,
 * session_id}`, decides, logs the interception and returns the JSON the guard reads. Throws a
 * `ChronicleError` (`usage`) for a body without a tool name.
 */
export async function handlePreToolUse(
  body: unknown,
  deps: PreToolUseDeps,
): Promise<PreToolUseResponse> {
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw new ChronicleError(
      "usage",
      "Invalid pre-tool-use request: the body is not a JSON object",
    );
  }
  const b = body as Record<string, unknown>;
  if (typeof b.tool_name !== "string" || b.tool_name === "") {
    throw new ChronicleError("usage", "Invalid pre-tool-use request: tool_name is missing");
  }
  const input: PreToolUseInput = { tool_name: b.tool_name, tool_input: b.tool_input ?? {} };
  if (typeof b.cwd === "string") input.cwd = b.cwd;
  if (typeof b.session_id === "string") input.session_id = b.session_id;
  const options: PreToolUseOptions = {};
  if (deps.rules) options.rules = deps.rules();
  if (deps.now) options.now = deps.now;
  if (deps.maxBytes) options.maxBytes = deps.maxBytes;
  const d = await preToolUseCheck(input, deps.readFile, options);
  try {
    deps.log?.(d.interception);
  } catch {
    // logging must never change the decision
  }
  const response: PreToolUseResponse = { decision: d.decision, action: d.action, rules: d.rules };
  if (d.reason) response.reason = d.reason;
  if (d.interception.file) response.file = d.interception.file;
  return response;
}
