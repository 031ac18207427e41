/**
 * "Code at this moment": the project as it was after a step — its files (the commit nearest
 * before the step plus the session's own changes, committed or not, each marked by where it
 * comes from), one file's text with the lines the session wrote marked by step, the diff of
 * the step's own change, and what the whole session changed. Opens over the session view.
 */
import { signal, useSignal, useSignalEffect } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useMemo, useRef } from "preact/hooks";
import type { FileDiff, FileView, SessionChanges, TreeView } from "../../../core/timetravel/mod.ts";
import { api, qs } from "../api.ts";
import { navigate, sessionUrl } from "../router.ts";
import type { SessionState } from "../session_state.ts";
import { Icon } from "./causality_badge.tsx";
import { Time } from "./time.tsx";
import { causalityOf } from "./causality_state.ts";
import { callSummary } from "./op_row.tsx";
import { DiffView } from "./diff_view.tsx";

type Tab = "files" | "change" | "session";

const STATE_MARK: Record<string, string> = {
  modified: "M",
  added: "A",
  deleted: "D",
  unchanged: "",
};

/** The notice for a project Chronicle cannot read history from. */
function repoNotice(repo: TreeView["repo"]): string | null {
  return repo.kind === "git"
    ? null
    : `${repo.message}. Only the session's recorded changes are shown.`;
}

function DiffList({ files }: { files: FileDiff[] }): VNode {
  if (!files.length) return <p class="muted">No file changed.</p>;
  return (
    <div>
      {files.map((f) => (
        <div key={f.path} class="tt-diff">
          {f.applied && f.applied.status !== "applied" && (
            <div class="badge badge-warn">
              {f.applied.status.replace("_", " ")}
              {f.applied.detail ? `: ${f.applied.detail}` : ""}
            </div>
          )}
          {f.notes.map((n) => <div key={n} class="muted tt-note">{n}</div>)}
          {f.patch
            ? <DiffView change={{ path: f.path, patch: f.patch, kind: "patch" }} />
            : (
              <div class="muted">
                <code>{f.path}</code>: {f.after.status === "unknown"
                  ? "what the change wrote is not in the log"
                  : "no difference"}
              </div>
            )}
        </div>
      ))}
    </div>
  );
}

function FileText({ file, onStep }: { file: FileView; onStep: (seq: number) => void }): VNode {
  const lines = (file.text ?? "").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const origin: (number | null)[] = new Array(lines.length).fill(null);
  for (const r of file.lines) {
    for (let i = r.start; i < r.end && i < lines.length; i++) origin[i] = r.seq;
  }
  const base = file.base.kind === "commit" && file.base.commit
    ? `commit ${file.base.commit.slice(0, 10)}`
    : file.base.kind === "recorded"
    ? "the text the log showed"
    : file.base.kind === "absent"
    ? "a new file"
    : "unknown";
  const steps = file.steps.filter((s) => s.status === "applied").length;
  return (
    <div class="tt-file" data-path={file.path}>
      <div class="tt-file-head">
        <code class="tt-file-path">{file.path}</code>
        <span class={`badge ${file.status === "exact" ? "badge-ok" : "badge-warn"}`}>
          {file.status}
        </span>
      </div>
      <div class="muted tt-origin">
        From {base}
        {steps ? ` + ${steps} change${steps > 1 ? "s" : ""} of this session` : ""}
        {file.truncated ? " · cut at 2 MB" : ""}
      </div>
      {file.notes.map((n) => <div key={n} class="muted tt-note">{n}</div>)}
      {file.exists === false && <p class="muted">The file does not exist after this step.</p>}
      {file.exists === null && <p class="muted">Its text at this step is not known.</p>}
      {file.binary && <p class="muted">A binary file.</p>}
      {file.text !== null && (
        <table class="tt-lines">
          <tbody>
            {lines.map((l, i) => (
              <tr key={i} class={origin[i] === null ? "" : "tt-session"}>
                <td class="ln">{i + 1}</td>
                <td class="tt-by">
                  {origin[i] !== null && (
                    <button
                      type="button"
                      class="tt-step"
                      title="Written by this session: go to the step"
                      onClick={() => onStep(origin[i]!)}
                    >
                      ●
                    </button>
                  )}
                </td>
                <td class="code">{l}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** The panel; `opId` is the step it shows the code after. */
export function CodeAtMoment({ state, opId }: { state: SessionState; opId: string }): VNode {
  const c = causalityOf(state);
  const base = `/api/sessions/${encodeURIComponent(state.id)}`;
  const tab = useSignal<Tab>("files");
  const tree = useSignal<TreeView | null>(null);
  const file = useSignal<FileView | null>(null);
  const path = c.codePath;
  const change = useSignal<FileDiff[] | null>(null);
  const session = useSignal<SessionChanges | null>(null);
  const error = useSignal<string | null>(null);
  const onlyTouched = useSignal(false);
  const filter = useSignal("");
  const panel = useRef<HTMLDivElement>(null);
  const isChange = c.change(opId) !== undefined;
  const row = state.byOp.get(opId);
  const seqs = useMemo(() => signal(new Map<number, string>()), [opId]);

  const close = () => (c.codeAt.value = null);
  useEffect(() => {
    panel.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        close();
      }
    };
    addEventListener("keydown", onKey, true);
    return () => removeEventListener("keydown", onKey, true);
  }, []);

  // The tree after the step, and the step's own change.
  useEffect(() => {
    tree.value = null;
    change.value = null;
    error.value = null;
    api<TreeView>(`${base}/code${qs({ op: opId })}`).then((t) => {
      tree.value = t;
      const first = path.value ?? t.entries.find((e) => e.touched && e.state !== "deleted")?.path ??
        t.entries[0]?.path ?? null;
      path.value = first;
    }).catch((e) => (error.value = (e as Error).message));
    if (isChange) {
      api<{ files: FileDiff[] }>(`${base}/code/diff${qs({ op: opId })}`).then((d) =>
        change.value = d.files
      ).catch((e) => (error.value = (e as Error).message));
    }
  }, [opId]);

  useSignalEffect(() => {
    const p = path.value;
    if (!p) return;
    file.value = null;
    api<FileView>(`${base}/code/file${qs({ op: opId, path: p })}`).then((f) => (file.value = f))
      .catch((e) => (error.value = (e as Error).message));
  });

  useSignalEffect(() => {
    if (tab.value !== "session" || session.value) return;
    api<SessionChanges>(`${base}/changes`).then((s) => (session.value = s)).catch((e) =>
      error.value = (e as Error).message
    );
  });

  // Line origins name timeline positions; the summary's changes give their operations.
  useSignalEffect(() => {
    const map = new Map<number, string>();
    for (const ch of c.summary.value?.changes ?? []) map.set(ch.seq, ch.op);
    seqs.value = map;
  });

  const goTo = (op: string) => {
    close();
    navigate(sessionUrl(state.id, op));
  };
  const changes = c.summary.value?.changes ?? [];
  const here = changes.findIndex((ch) => ch.op === opId);
  const at = tree.value?.seq ?? null;
  const prev = at === null ? undefined : [...changes].reverse().find((ch) => ch.seq < at);
  const next = at === null ? undefined : changes.find((ch) => ch.seq > at);
  const t = tree.value;
  const notice = t ? repoNotice(t.repo) : null;
  const entries = (t?.entries ?? []).filter((e) =>
    (!onlyTouched.value || e.touched) && (!filter.value || e.path.includes(filter.value))
  );

  return (
    <div class="tt-backdrop" onClick={(e) => e.target === e.currentTarget && close()}>
      <div
        class="tt-panel"
        role="dialog"
        aria-modal="true"
        aria-label="Code at this moment"
        tabIndex={-1}
        ref={panel}
      >
        <header class="tt-head">
          <div>
            <h2 class="tt-title">Code at this moment</h2>
            <div class="muted tt-step-line">
              after{" "}
              {row
                ? `${row.op.tool ?? row.op.kind}: ${callSummary(row).slice(0, 120)}`
                : "this step"}
              {row?.ts_ms
                ? (
                  <>
                    {" · "}
                    <Time at={row.ts_ms} />
                  </>
                )
                : ""}
              {here >= 0 ? ` · change ${here + 1} of ${changes.length}` : ""}
            </div>
          </div>
          <div class="tt-nav">
            <button
              type="button"
              disabled={!prev}
              onClick={() => prev && (c.codeAt.value = prev.op)}
              title="The code after the previous change"
            >
              ◀ previous change
            </button>
            <button
              type="button"
              disabled={!next}
              onClick={() => next && (c.codeAt.value = next.op)}
              title="The code after the next change"
            >
              next change ▶
            </button>
            <button
              type="button"
              class="icon"
              onClick={close}
              aria-label="Close"
              title="Close (Esc)"
            >
              ✕
            </button>
          </div>
        </header>
        {t && (
          <div class="tt-commit">
            {t.commit
              ? (
                <span>
                  ⎇ <code>{t.commit.sha.slice(0, 10)}</code> “{t.commit.subject}”{" "}
                  <span class="muted">
                    {t.commit.after < 0
                      ? "the commit the session started from"
                      : `committed during the session (matched by ${t.commit.matched})`} ·{" "}
                    <Time at={t.commit.committed_at} />
                  </span>
                </span>
              )
              : !notice && <span class="muted">No commit before this step.</span>}
            {notice && <div class="tt-notice">{notice}</div>}
          </div>
        )}
        <div class="tt-tabs" role="tablist">
          {(["files", ...(isChange ? ["change"] : []), "session"] as Tab[]).map((k) => (
            <button
              type="button"
              role="tab"
              key={k}
              aria-selected={tab.value === k}
              class={tab.value === k ? "active" : ""}
              onClick={() => (tab.value = k)}
            >
              {k === "files"
                ? "Files"
                : k === "change"
                ? "This change"
                : "What the session changed"}
            </button>
          ))}
        </div>
        {error.value && <div class="error-text">{error.value}</div>}
        {tab.value === "files" && (
          <div class="tt-body">
            <nav class="tt-tree" aria-label="Files">
              <div class="tt-tree-tools">
                <input
                  type="search"
                  placeholder="Filter files"
                  aria-label="Filter files"
                  value={filter.value}
                  onInput={(e) => (filter.value = (e.target as HTMLInputElement).value)}
                />
                <label>
                  <input
                    type="checkbox"
                    checked={onlyTouched.value}
                    onChange={(e) => (onlyTouched.value = (e.target as HTMLInputElement).checked)}
                  />{" "}
                  changed only
                </label>
              </div>
              {!t && <div class="muted pad">Loading…</div>}
              <ul>
                {entries.map((e) => (
                  <li key={e.path}>
                    <button
                      type="button"
                      class={`tt-entry tt-${e.state} tt-from-${e.origin}${
                        path.value === e.path ? " selected" : ""
                      }`}
                      onClick={() => (path.value = e.path)}
                      title={`${
                        e.state === "unchanged" ? "as in the commit" : e.state
                      } · from ${e.origin}${e.touched ? " · changed by this session" : ""}`}
                    >
                      <span class="tt-mark">{STATE_MARK[e.state] || (e.touched ? "•" : "")}</span>
                      <span class="tt-path">{e.path}</span>
                    </button>
                  </li>
                ))}
              </ul>
              {t && t.omitted > 0 && <div class="muted">{t.omitted} more files not listed</div>}
            </nav>
            <div class="tt-view">
              {file.value
                ? (
                  <FileText
                    file={file.value}
                    onStep={(seq) => {
                      const op = seqs.value.get(seq);
                      if (op) goTo(op);
                    }}
                  />
                )
                : path.value && <div class="muted pad">Loading {path.value}…</div>}
            </div>
          </div>
        )}
        {tab.value === "change" && (
          <div class="tt-scroll">
            {change.value ? <DiffList files={change.value} /> : "Loading…"}
          </div>
        )}
        {tab.value === "session" && (
          <div class="tt-scroll">
            {!session.value && <div class="muted">Loading…</div>}
            {session.value && (
              <>
                {session.value.start && (
                  <p class="muted">
                    Started from <code>{session.value.start.sha.slice(0, 10)}</code> “
                    {session.value.start.subject}”
                  </p>
                )}
                {session.value.commits.length > 0 && (
                  <ul class="tt-commits">
                    {session.value.commits.map((cm) => (
                      <li key={cm.sha}>
                        <code>{cm.sha.slice(0, 10)}</code> “{cm.subject}”{" "}
                        <span class="muted">
                          <Time at={cm.committed_at} /> · matched by {cm.matched}
                        </span>
                      </li>
                    ))}
                  </ul>
                )}
                <ul class="tt-summary">
                  {session.value.files.map((f) => (
                    <li key={f.path}>
                      <span class={`badge tt-state-${f.state}`}>{f.state}</span>{" "}
                      <code>{f.path}</code>{" "}
                      <span class="diff-stat">
                        <span class="add">+{f.added}</span> <span class="del">−{f.removed}</span>
                      </span>
                    </li>
                  ))}
                </ul>
                <DiffList files={session.value.files} />
              </>
            )}
          </div>
        )}
      </div>
    </div>
  );
}

/** The button that opens the panel on a step. */
export function CodeAtMomentButton({ state, opId }: { state: SessionState; opId: string }): VNode {
  const c = causalityOf(state);
  return (
    <button type="button" class="tt-open" onClick={() => (c.codeAt.value = opId)}>
      <Icon>
        <circle cx="12" cy="12" r="9" />
        <path d="M12 7v5l3 2" />
      </Icon>{" "}
      Code at this moment
    </button>
  );
}

/** Mounts the panel while one is open (put once in the session view). */
export function CodeAtMomentHost({ state }: { state: SessionState }): VNode | null {
  const op = causalityOf(state).codeAt.value;
  return op ? <CodeAtMoment key={op} state={state} opId={op} /> : null;
}
