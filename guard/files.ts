/**
 * The guard's files in the data folder, for the CLI and the server: the journal the guard
 * appends interceptions to, and the rules file it reads (rewritten whenever rules change).
 * Both 0600, the folder 0700.
 */
import {
  JOURNAL_FILE,
  JOURNAL_OFFSET_FILE,
  readJournal,
  RULES_FILE,
  rulesFileText,
} from "../core/security/journal.ts";
import type { CustomRule } from "../core/security/glob_rule.ts";
import { writeAllSync } from "../core/write_all.ts";
import type { Interception } from "../core/security/pretooluse.ts";

/**
 * Appends one line to the journal, creating the folder and the file (0600) when needed.
 * Synchronous, as every file operation of the guard (see guard/fs.ts).
 */
export function appendGuardJournal(dir: string, line: string): void {
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = Deno.openSync(`${dir}/${JOURNAL_FILE}`, {
    append: true,
    create: true,
    mode: 0o600,
  });
  try {
    writeAllSync(file, new TextEncoder().encode(line));
  } finally {
    file.close();
  }
}

/** Rewrites the rules file the guard reads, atomically (a guard never sees half a file). */
export function writeGuardRules(dir: string, rules: readonly CustomRule[]): void {
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/${RULES_FILE}`;
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  Deno.writeTextFileSync(tmp, rulesFileText(rules), { mode: 0o600, createNew: true });
  Deno.chmodSync(tmp, 0o600);
  Deno.renameSync(tmp, path);
}

/**
 * The interceptions journaled since the last call, consumed: the offset read so far is kept in
 * `interceptions.offset` (0600); a journal shorter than it (removed, rotated) is read from 0.
 * A fully read journal past 1 MiB starts over empty.
 */
export function takeGuardJournal(dir: string): Interception[] {
  const path = `${dir}/${JOURNAL_FILE}`;
  const offsetPath = `${dir}/${JOURNAL_OFFSET_FILE}`;
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  let offset = 0;
  try {
    offset = Number(Deno.readTextFileSync(offsetPath).trim()) || 0;
  } catch {
    offset = 0;
  }
  if (offset > bytes.length) offset = 0;
  const { records, consumed } = readJournal(bytes.subarray(offset));
  let next = offset + consumed;
  if (next === bytes.length && next > 1 << 20) {
    Deno.truncateSync(path, 0);
    next = 0;
  }
  if (next !== offset || next === 0) {
    Deno.writeTextFileSync(offsetPath, `${next}\n`, { mode: 0o600 });
    Deno.chmodSync(offsetPath, 0o600);
  }
  return records;
}

/** A hook's rules reader and journal writer for data folder `dir` (none: built-in rules only). */
export function guardFileDeps(dir: string | null): {
  readRules(): Promise<string | null>;
  appendJournal(line: string): Promise<void>;
} {
  return {
    readRules: () => {
      if (!dir) return Promise.resolve(null);
      try {
        return Promise.resolve(Deno.readTextFileSync(`${dir}/${RULES_FILE}`));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return Promise.resolve(null);
        return Promise.reject(e);
      }
    },
    appendJournal: (line) => {
      if (!dir) return Promise.reject(new Error("no data folder (HOME unset)"));
      try {
        appendGuardJournal(dir, line);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
}
