/**
 * File changes as real diffs. Edits (old/new strings) and writes (new content) are diffed
 * with the `diff` library; patches the agent wrote itself (Codex apply_patch, unified diffs)
 * are shown line by line as they are. Line numbers never wrap; long lines scroll sideways, or
 * wrap when the reader asks (one preference for every diff).
 */
import type { VNode } from "preact";
import { useMemo, useState } from "preact/hooks";
import { diffLines, type FileChange } from "../../../core/export/tool_view.ts";
import { highlightDiff, languageOfPath } from "../highlight.ts";
import { wrapLines } from "../prefs.ts";

export { type FileChange, fileChanges } from "../../../core/export/tool_view.ts";

const SHOWN = 80;

/** The button that switches long lines between wrapping and scrolling sideways. */
export function WrapToggle(): VNode {
  return (
    <button
      type="button"
      class="mini"
      aria-pressed={wrapLines.value}
      title="Wrap long lines, or scroll them sideways"
      onClick={() => (wrapLines.value = !wrapLines.value)}
    >
      Wrap
    </button>
  );
}

export function DiffView(
  { change, attempted }: { change: FileChange; attempted?: boolean },
): VNode {
  const [all, setAll] = useState(false);
  const lines = useMemo(
    () => diffLines(change),
    [change.path, change.before, change.after, change.patch],
  );
  const lit = useMemo(() => highlightDiff(lines, languageOfPath(change.path)), [lines]);
  const adds = lines.filter((l) => l.type === "add").length;
  const dels = lines.filter((l) => l.type === "del").length;
  const shown = all ? lines : lines.slice(0, SHOWN);
  return (
    <div class={`diff${attempted ? " is-attempted" : ""}`} data-kind={change.kind}>
      <div class="diff-head">
        <span class="diff-path">{change.path || "(file)"}</span>
        <span class="diff-stat">
          {attempted && <span class="not-applied">not applied ·</span>}
          <span class="add">+{adds}</span> <span class="del">−{dels}</span>
          {change.kind === "write" ? " · new content" : ""}
        </span>
        <WrapToggle />
      </div>
      <div
        class={`diff-scroll${wrapLines.value ? " is-wrapped" : ""}`}
        tabIndex={0}
        role="region"
        aria-label={`Changes to ${change.path}`}
      >
        <table class="diff-lines hl">
          <tbody>
            {shown.map((l, i) => (
              <tr key={i} class={`dl-${l.type}`}>
                <td class="ln">{l.oldNo ?? ""}</td>
                <td class="ln">{l.newNo ?? ""}</td>
                <td class="sign">{l.type === "add" ? "+" : l.type === "del" ? "−" : ""}</td>
                <td class="code">{lit?.[i] ?? l.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {lines.length > SHOWN && !all && (
        <button
          type="button"
          class="link"
          onClick={() => setAll(true)}
        >
          Show all {lines.length} lines
        </button>
      )}
    </div>
  );
}
