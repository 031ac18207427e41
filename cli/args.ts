/** Argument parsing shared by every command: one usage error type, `--help` everywhere. */
import { parseArgs as nodeParseArgs } from "node:util";
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

/** Parses args strictly: an unknown option is a usage error, never silently ignored. */
export function parseArgs(args: string[], options: OptionSpec): Parsed {
  try {
    const { values, positionals } = nodeParseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" }, version: { type: "boolean" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Parsed["values"], positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
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
