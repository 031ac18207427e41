/**
 * A tool input or result as text: highlighted when its language is known (a file read by its
 * path, a JSON input), a numbered read shown with its own line numbers, "show all" when the
 * row carries only the opening, and for large outputs copy, wrap and find (only the lines that
 * match, with their numbers).
 */
import { useSignal } from "@preact/signals";
import type { ComponentChildren, VNode } from "preact";
import { useEffect, useMemo } from "preact/hooks";
import { numberedLines } from "../../../core/export/tool_view.ts";
import { payloadText } from "../api.ts";
import { bytes } from "../format.ts";
import { highlightLines } from "../highlight.ts";
import { wrapLines } from "../prefs.ts";
import type { PayloadText } from "../types.ts";
import { WrapToggle } from "./diff_view.tsx";

/** Outputs with more lines or characters than this get the copy / wrap / find bar. */
export const LARGE_LINES = 20;
export const LARGE_CHARS = 2_000;

/** How much of a text its import cut (its log's line was too long to keep whole). */
export function CutNote({ bytes: cut, lead = "" }: { bytes: number; lead?: string }): VNode {
  return (
    <span class="cut-note" title="Its log's line was too long to keep whole">
      {lead}
      {bytes(cut)} more cut on import
    </span>
  );
}

function prettyJson(text: string): string | null {
  if (!/^\s*[[{]/.test(text)) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

interface Line {
  no: number;
  text: string;
}

/** `text` with every case-insensitive occurrence of `query` marked. */
function marked(text: string, query: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const low = text.toLowerCase();
  const q = query.toLowerCase();
  let at = 0;
  for (let i = low.indexOf(q); i >= 0; i = low.indexOf(q, i + q.length)) {
    if (i > at) out.push(text.slice(at, i));
    out.push(<mark>{text.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/**
 * Lines a table lays out at first, and adds each time more are asked for: a pasted log of
 * 26 MiB is 417,096 lines, which took the browser 41 s to lay out all at once.
 */
export const LINES_SHOWN = 2_000;

/**
 * Lines in a table: their numbers (never wrapped) and their code, highlighted if it can be; the
 * first {@link LINES_SHOWN}, then more on request (find searches them all).
 */
function LineTable(
  { lines, lang, query }: { lines: Line[]; lang?: string; query: string },
): VNode {
  const shown = useSignal(LINES_SHOWN);
  // (another text, or another search, starts from its first lines again)
  useEffect(() => {
    shown.value = LINES_SHOWN;
  }, [lines, query]);
  const visible = useMemo(
    () => (lines.length > shown.value ? lines.slice(0, shown.value) : lines),
    [lines, shown.value],
  );
  const lit = useMemo(
    () => (query ? null : highlightLines(visible.map((l) => l.text).join("\n"), lang)),
    [visible, lang, query],
  );
  const left = lines.length - visible.length;
  return (
    <div
      class={`diff-scroll code-lines${wrapLines.value ? " is-wrapped" : ""}`}
      tabIndex={0}
      role="region"
      aria-label="Numbered lines"
    >
      <table class="diff-lines hl">
        <tbody>
          {visible.map((l, i) => (
            <tr key={l.no}>
              <td class="ln">{l.no}</td>
              <td class="code">{query ? marked(l.text, query) : lit?.[i] ?? l.text}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {left > 0 && (
        <button
          type="button"
          class="link more-lines"
          onClick={() => (shown.value += LINES_SHOWN)}
        >
          Show {Math.min(left, LINES_SHOWN).toLocaleString("en-US")} more lines (
          {left.toLocaleString("en-US")} left)
        </button>
      )}
    </div>
  );
}

export function PayloadBlock(
  { payload, label, pretty, lang, numbered }: {
    payload: PayloadText;
    label: string;
    /** Pretty-print (and highlight) the text when it is JSON. */
    pretty?: boolean;
    /** The language to highlight the text as (e.g. from a read's file name). */
    lang?: string;
    /** The text may be a numbered file read: show its own line numbers. */
    numbered?: boolean;
  },
): VNode {
  const full = useSignal<string | null>(null);
  const failed = useSignal<string | null>(null);
  const query = useSignal("");
  const copied = useSignal(false);
  const text = full.value ?? payload.text;
  const json = useMemo(() => (pretty ? prettyJson(text) : null), [text, pretty]);
  const shown = json ?? text;
  const language = json !== null ? "json" : lang;
  const read = useMemo(() => (numbered ? numberedLines(shown) : null), [shown, numbered]);
  const lines = useMemo<Line[]>(
    () => read?.lines ?? shown.split("\n").map((t, i) => ({ no: i + 1, text: t })),
    [read, shown],
  );
  const large = lines.length > LARGE_LINES || shown.length > LARGE_CHARS;
  const q = query.value;
  const matching = q ? lines.filter((l) => l.text.toLowerCase().includes(q.toLowerCase())) : lines;

  const loadAll = () =>
    payloadText(payload.sha256!).then((t) => (full.value = t)).catch((e) =>
      failed.value = (e as Error).message
    );
  const copy = async () => {
    const all = payload.truncated && full.value === null && payload.sha256
      ? await payloadText(payload.sha256)
      : text;
    await navigator.clipboard.writeText(all);
    copied.value = true;
    setTimeout(() => (copied.value = false), 1500);
  };

  const plainHl = !read && !large && language
    ? highlightLines(shown, language)?.flatMap((l, i) => (i ? ["\n", ...l] : l))
    : null;
  return (
    <div class="payload">
      <div class="payload-label">
        <span>{label}</span>
        {payload.size !== null && <span class="muted">· {bytes(payload.size)}</span>}
        {payload.cut_bytes !== undefined && <CutNote bytes={payload.cut_bytes} lead="· " />}
        {large && (
          <span class="payload-tools">
            <input
              type="search"
              class="find"
              placeholder="Find in output"
              aria-label={`Find in ${label.toLowerCase()}`}
              value={q}
              onInput={(e) => (query.value = (e.currentTarget as HTMLInputElement).value)}
            />
            {q && (
              <span class="muted" aria-live="polite">
                {matching.length} of {lines.length} lines
              </span>
            )}
            <WrapToggle />
            <button type="button" class="mini" onClick={copy}>
              {copied.value ? "Copied" : "Copy"}
            </button>
          </span>
        )}
      </div>
      {read || large
        ? <LineTable lines={matching} lang={language} query={q} />
        : <pre class={`payload-text${plainHl ? " hl" : ""}`}>{plainHl ?? shown}</pre>}
      {read?.rest && <pre class="payload-text muted">{read.rest}</pre>}
      {payload.truncated && full.value === null && payload.sha256 && (
        <button type="button" class="link" onClick={loadAll}>
          Show all ({bytes(payload.size)})
        </button>
      )}
      {failed.value && <div class="error-text">{failed.value}</div>}
    </div>
  );
}
