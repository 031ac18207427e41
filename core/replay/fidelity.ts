/**
 * Fidelity: how a replayed step compares with its recording. A shell step is compared by
 * failure (and exit code where the recording states one) and by output lines; a file step by
 * whether it applied where the recording says it did (or failed where it failed).
 */
import { exitCodeOf } from "../analytics/error_heuristic.ts";
import { exitCodeInText, toolResultText } from "../model/mod.ts";

/** What the recording says a shell step did. */
export interface RecordedRun {
  failed: boolean | null;
  exitCode: number | null;
  /** The recorded result as plain text (JSON wrappers unwrapped). */
  text: string;
  /** The recording kept only part of the output. */
  truncated: boolean;
}

/** A recorded result as plain text (the one reading, core/model/tool_text.ts). */
export const plainResult = (text: string): string => toolResultText(text);

/** Cursor's shell results carry their exit code as a JSON field. */
const EXTRA_EXIT = [/"exitCode(?:V2)?"\s*:\s*(-?\d+)/];
const TRUNCATED =
  /truncated|Output too large|Preview \(first|Full output saved to|original token count/i;

export function recordedRun(isError: boolean | null, text: string | null): RecordedRun {
  const plain = text === null ? "" : plainResult(text);
  let code = exitCodeOf(plain) ?? (text === null ? null : exitCodeInText(text) ?? null);
  if (code === null && text !== null) {
    for (const re of EXTRA_EXIT) {
      const m = re.exec(text.slice(0, 100_000)) ?? re.exec(plain.slice(-2000));
      if (m) {
        code = Number(m[1]);
        break;
      }
    }
  }
  const failed = code !== null ? code !== 0 : isError;
  return { failed, exitCode: code, text: plain, truncated: TRUNCATED.test(plain.slice(0, 4000)) };
}

/** Lines about the repository's own .git folder: the sandbox's .git is not the project's. */
const GIT_INTERNAL = /(^|[\s/'"])\.git\//;

function lines(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !GIT_INTERNAL.test(l));
}

const COMPARED_LINES = 200;

/**
 * Whether replayed output agrees with the recorded text. Every replayed line (the first 200)
 * must appear in the recording; where the recording kept only part of the output, the lines it
 * kept must appear in the replayed output instead. Returns null when they agree, else a
 * sentence naming the first line that differs.
 */
export function compareOutput(replayed: string, recorded: RecordedRun): string | null {
  const mine = lines(replayed).slice(0, COMPARED_LINES);
  if (!mine.length) return null;
  const theirs = new Set<string>();
  for (const l of lines(recorded.text)) {
    theirs.add(l);
    const m = /^Output:\s*(.*)$/.exec(l);
    if (m && m[1]) theirs.add(m[1].trim());
  }
  const missing = mine.filter((l) => !theirs.has(l));
  if (!missing.length) return null;
  if (recorded.truncated) {
    const all = new Set(lines(replayed));
    const kept = [...theirs].filter((l) => all.has(l));
    if (kept.length >= Math.min(3, mine.length)) return null;
  }
  const first = missing[0].length > 160 ? missing[0].slice(0, 159) + "…" : missing[0];
  return `output differs from the recording: "${first}" is not in it` +
    (missing.length > 1 ? ` (${missing.length} lines differ)` : "");
}
