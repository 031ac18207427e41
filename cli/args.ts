/** Argument parsing shared by every command: one usage error type, `--help` everywhere. */
import { parseArgs as nodeParseArgs } from "node:util";
import { SOURCE_IDS } from "../core/model/agents.ts";
import { VERSION } from "../core/version.ts";
import type { CliIo } from "./io.ts";

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export type OptionSpec = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean }
>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * Parses args strictly: an unknown option is a usage error, never silently ignored. Every
 * parser complaint becomes one line; a value that starts with a dash (`--port -1`) is taken as
 * the option's value, so the option's own check says what is wrong with it.
 */
export function parseArgs(args: string[], options: OptionSpec): Parsed {
  const all: OptionSpec = {
    ...options,
    help: { type: "boolean", short: "h" },
    version: { type: "boolean" },
  };
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const spec = a.startsWith("--") && !a.includes("=") ? all[a.slice(2)] : undefined;
    const next = args[i + 1];
    if (spec?.type === "string" && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${a}=${next}`);
      i++;
    } else joined.push(a);
    if (a === "--") {
      joined.push(...args.slice(i + 1));
      break;
    }
  }
  try {
    const { values, positionals } = nodeParseArgs({
      args: joined,
      options: all,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Parsed["values"], positionals };
  } catch (e) {
    throw new UsageError(parserMessage(e as Error & { code?: string }, all));
  }
}

/** node:util's complaint as one line: which option, and what is wrong with it. */
function parserMessage(e: Error & { code?: string }, options: OptionSpec): string {
  const named = /'(-{1,2}[^'\s]+)/.exec(e.message)?.[1] ?? "";
  const name = named.replace(/^-+/, "");
  const long = Object.entries(options).find(([k, v]) => k === name || v.short === name)?.[0];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const near = closest(name, Object.keys(options));
      return `unknown option "${named}"${near ? ` (did you mean --${near}?)` : ""}`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return long && options[long].type === "boolean"
        ? `--${long} takes no value`
        : `--${long ?? name} needs a value`;
    default:
      return e.message.split("\n")[0];
  }
}

/** The known option nearest to a mistyped one (at most two edits away), if any. */
function closest(name: string, known: string[]): string | null {
  let best: string | null = null;
  let bestD = 3;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** A `--source` value, checked against the known agents: anything else is a usage error. */
export function sourceArg(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const v = String(value);
  if (!(SOURCE_IDS as readonly string[]).includes(v)) {
    throw new UsageError(`unknown source "${v}" (known: ${SOURCE_IDS.join(", ")})`);
  }
  return v;
}

/**
 * Handles `--help` and `--version` for a command. Returns an exit code when the command
 * should stop there.
 */
export function helpOrVersion(parsed: Parsed, help: string, io: CliIo): number | null {
  if (parsed.values.help) {
    io.stdout(help.trimEnd() + "\n");
    return 0;
  }
  if (parsed.values.version) {
    io.stdout(`chronicle ${VERSION}\n`);
    return 0;
  }
  return null;
}

export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

const DATE = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A `--since`/`--until` value: YYYY-MM-DD or ISO 8601, anything else a usage error. */
export function dateArg(v: unknown, name: string): string | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  if (!DATE.test(s) || Number.isNaN(Date.parse(s))) {
    throw new UsageError(`--${name} takes a date: YYYY-MM-DD or ISO 8601`);
  }
  return s;
}

/** A whole-number option (`--limit`, `--offset`) from `min` to `max`; `fallback` when absent. */
export function intArg(
  v: unknown,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} takes an integer from ${min} to ${max}`);
  }
  return n;
}
