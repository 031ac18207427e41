/**
 * How a tool call's recorded text reads: the ONE parse of a request payload (JSON when it is
 * JSON, else the text) and of a result payload (the string leaves of a JSON result, Codex's
 * header taken off). Causality, time travel, replay and its fidelity all read them here.
 */

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A request payload's text as JSON when it is a JSON object or array, else the text itself. */
export function parseToolInput(text: string | null): unknown {
  if (text === null) return undefined;
  const t = text.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A result payload as plain text: the string leaves of a JSON result (Gemini's
 * functionResponse, Cursor's output object; ids, names and types left out), else the text
 * with Codex's header (chunk id, wall time, exit code before `Output:`) taken off.
 */
export function toolResultText(raw: string | null): string {
  if (raw === null) return "";
  const t = raw.trimStart();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      const parts: string[] = [];
      const walk = (v: unknown, depth: number) => {
        if (depth > 8 || parts.length > 1000) return;
        if (typeof v === "string") parts.push(v);
        else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
        else if (isRecord(v)) {
          for (const [k, x] of Object.entries(v)) {
            if (k !== "id" && k !== "name" && k !== "type") walk(x, depth + 1);
          }
        }
      };
      walk(JSON.parse(raw), 0);
      return parts.join("\n");
    } catch { /* not JSON after all */ }
  }
  const head = raw.slice(0, 600);
  const at = head.indexOf("\nOutput:\n");
  return at >= 0 && /^(Chunk ID|Exit code|Wall time)/.test(head) ? raw.slice(at + 9) : raw;
}
