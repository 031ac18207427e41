/**
 * Tool calls whose raw JSON says little, drawn for what they are: to-do lists and plans
 * (TodoWrite, update_plan, write_todos, todo_write, ExitPlanMode), content searches grouped by
 * file with line numbers (Grep, grep, rg), and web fetches and searches (the URL, the answer
 * as Markdown). The input and result stay under "Details" as they are.
 */
import type { VNode } from "preact";
import { useMemo } from "preact/hooks";
import { searchHits, todoItems } from "../../../core/export/tool_view.ts";
import { highlightLines, languageOfPath } from "../highlight.ts";
import type { Row } from "../types.ts";
import { Markdown } from "./markdown.tsx";
import { PathText } from "./path_text.tsx";

const STATUS: Record<string, { mark: string; label: string }> = {
  completed: { mark: "☑", label: "done" },
  in_progress: { mark: "◐", label: "in progress" },
  pending: { mark: "☐", label: "to do" },
  cancelled: { mark: "☒", label: "cancelled" },
};

function Todos({ items }: { items: NonNullable<ReturnType<typeof todoItems>> }): VNode {
  const done = items.filter((i) => i.status === "completed").length;
  return (
    <div class="tool-view todos">
      <div class="tool-view-head">To-do list · {done} of {items.length} done</div>
      <ul>
        {items.map((it, i) => {
          const s = STATUS[it.status] ?? { mark: "•", label: it.status };
          return (
            <li key={i} class={`todo todo-${it.status}`}>
              <span class="todo-mark" aria-hidden="true">{s.mark}</span>
              <span class="sr-only">{s.label}:</span> {it.text}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function SearchResults({ files }: { files: NonNullable<ReturnType<typeof searchHits>> }): VNode {
  const hits = files.reduce((n, f) => n + f.lines.length, 0);
  return (
    <div class="tool-view search-hits">
      <div class="tool-view-head">
        {hits} match{hits === 1 ? "" : "es"} in {files.length} file{files.length === 1 ? "" : "s"}
      </div>
      {files.slice(0, 50).map((f) => <SearchFileHits key={f.path} file={f} />)}
    </div>
  );
}

function SearchFileHits(
  { file }: { file: { path: string; lines: { no: number; text: string }[] } },
) {
  const lang = languageOfPath(file.path);
  const lit = useMemo(() => file.lines.map((l) => highlightLines(l.text, lang)?.[0]), [file]);
  return (
    <div class="hit-file">
      <PathText path={file.path} />
      <div class="diff-scroll">
        <table class="diff-lines hl">
          <tbody>
            {file.lines.map((l, i) => (
              <tr key={i}>
                <td class="ln">{l.no}</td>
                <td class="code">{lit[i] ?? l.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function inputOf(row: Row): Record<string, unknown> {
  try {
    const v = JSON.parse(row.input?.text ?? "");
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function WebView({ row }: { row: Row }): VNode | null {
  const input = inputOf(row);
  const url = typeof input.url === "string" && /^https?:\/\//i.test(input.url) ? input.url : null;
  const query = typeof input.query === "string" ? input.query : null;
  const answer = row.result?.text ?? "";
  if (!url && !query && !answer) return null;
  return (
    <div class="tool-view web">
      <div class="tool-view-head">
        {url
          ? (
            <a href={url} target="_blank" rel="noopener noreferrer nofollow">
              {url}
            </a>
          )
          : query && <>Searched: “{query}”</>}
      </div>
      {answer && (
        <div class="web-answer">
          <Markdown text={answer} />
        </div>
      )}
    </div>
  );
}

/** A tool-specific view of a call, or null when the raw input and result say it best. */
export function ToolView({ row }: { row: Row }): VNode | null {
  const op = row.op;
  if (op.kind === "plan") {
    const items = todoItems(row.input?.text);
    if (items) return <Todos items={items} />;
    const plan = inputOf(row).plan;
    if (typeof plan === "string" && plan.trim()) {
      return (
        <div class="tool-view plan">
          <div class="tool-view-head">Plan</div>
          <Markdown text={plan} />
        </div>
      );
    }
    return null;
  }
  if (op.kind === "search") {
    const files = searchHits(row.result?.text);
    return files ? <SearchResults files={files} /> : null;
  }
  if (op.kind === "web") return <WebView row={row} />;
  return null;
}
