/**
 * The Archive page (`/archive`): the exclude list (projects and log-file globs that imports
 * leave out), edited in place, each change sent with the tag of the list it changes so that an
 * edit made meanwhile elsewhere (the CLI, the file) is never overwritten; and the sessions
 * forgotten so far. A list file broken by hand is shown with its error and can be started anew.
 */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import type { ExcludeKind, ExcludeList } from "../../../core/archive/exclude.ts";
import type { ForgottenSession } from "../../../core/store/types.ts";
import { api } from "../api.ts";
import { agentName } from "../format.ts";
import { Time } from "./time.tsx";
import type { Project } from "../types.ts";

interface ExcludeView {
  path: string;
  list: ExcludeList | null;
  etag: string;
  error: string | null;
}

const KINDS: {
  kind: ExcludeKind;
  title: string;
  hint: string;
  label: string;
  placeholder: string;
}[] = [
  {
    kind: "projects",
    title: "Projects",
    hint:
      "A project folder: sessions whose working folder is this one or below it are not imported. Sessions already stored stay as they are until you forget them.",
    label: "Project folder to exclude",
    placeholder: "/home/me/clients/acme",
  },
  {
    kind: "paths",
    title: "Log files",
    hint:
      "A glob over the agents' log files, never read: * is any run of characters but /, ** any run, ? one character. Start it with /, ~/ or **/; a folder covers what is in it.",
    label: "Log files to exclude (glob)",
    placeholder: "~/.claude/projects/-tmp-*",
  },
];

function KindEditor(
  { view, kind, projects, save }: {
    view: ExcludeView;
    kind: (typeof KINDS)[number];
    projects: string[];
    save: (list: ExcludeList) => Promise<string | null>;
  },
): VNode {
  const draft = useSignal("");
  const error = useSignal<string | null>(null);
  const list = view.list!;
  const entries = list[kind.kind];
  const inputId = `exclude-${kind.kind}`;
  const apply = async (next: ExcludeList) => {
    error.value = await save(next);
    return error.value === null;
  };
  return (
    <div class="exclude-kind">
      <h3 id={`${inputId}-h`}>{kind.title}</h3>
      <p class="muted small">{kind.hint}</p>
      {entries.length
        ? (
          <ul class="plain exclude-entries" aria-labelledby={`${inputId}-h`}>
            {entries.map((e) => (
              <li key={e}>
                <code>{e}</code>
                <button
                  type="button"
                  class="link danger"
                  aria-label={`Remove ${e}`}
                  onClick={() =>
                    void apply({ ...list, [kind.kind]: entries.filter((x) => x !== e) })}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )
        : <p class="muted small">None excluded.</p>}
      <form
        class="rule-form"
        onSubmit={async (ev) => {
          ev.preventDefault();
          const value = draft.value.trim();
          if (!value) return;
          if (entries.includes(value)) {
            draft.value = "";
            return;
          }
          if (await apply({ ...list, [kind.kind]: [...entries, value] })) draft.value = "";
        }}
      >
        <label for={inputId}>{kind.label}</label>
        <input
          id={inputId}
          value={draft.value}
          placeholder={kind.placeholder}
          list={kind.kind === "projects" ? "archive-projects" : undefined}
          autoComplete="off"
          spellcheck={false}
          onInput={(e) => (draft.value = (e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" class="secondary">Exclude</button>
      </form>
      {kind.kind === "projects" && (
        <datalist id="archive-projects">
          {projects.filter((p) => !entries.includes(p)).map((p) => <option key={p} value={p} />)}
        </datalist>
      )}
      {error.value && <p class="error-text small" role="alert">{error.value}</p>}
    </div>
  );
}

export function ArchivePage({ refresh }: { refresh: number }): VNode {
  const view = useSignal<ExcludeView | null>(null);
  const forgotten = useSignal<ForgottenSession[] | null>(null);
  const projects = useSignal<string[]>([]);
  const error = useSignal<string | null>(null);

  const load = () =>
    Promise.all([
      api<ExcludeView>("/api/archive/exclude").then((v) => (view.value = v)),
      api<{ items: ForgottenSession[] }>("/api/archive/forgotten")
        .then((r) => (forgotten.value = r.items)),
      api<{ items: Project[] }>("/api/projects")
        .then((r) => (projects.value = r.items.map((p) => p.path))),
    ]).then(() => (error.value = null)).catch((e) => (error.value = (e as Error).message));
  useEffect(() => void load(), [refresh]);

  /** Sends the whole list with the tag it was read with; the error's text, or null. */
  const save = async (list: ExcludeList): Promise<string | null> => {
    try {
      view.value = await api<ExcludeView>("/api/archive/exclude", {
        method: "POST",
        body: { list, etag: view.value?.etag },
      });
      return null;
    } catch (e) {
      // changed meanwhile (the CLI, the file): show the list as it is now
      await load();
      return (e as Error).message;
    }
  };

  const v = view.value;
  return (
    <div class="page archive-page">
      <div class="page-head">
        <h1>Archive</h1>
      </div>
      <p class="muted">
        What Chronicle keeps out of its store. Forget a session from its page (<b>Forget…</b>);{" "}
        <code>chronicle forget --project PATH</code> forgets a whole project and excludes it.
      </p>
      {error.value && <p class="error-text" role="alert">{error.value}</p>}
      <section class="card" aria-labelledby="exclude-h">
        <h2 id="exclude-h">Excluded from import</h2>
        {v && (
          <p class="muted small">
            Kept in <code class="path">{v.path}</code> (also{" "}
            <code>chronicle exclude</code>). Changes apply from the next import.
          </p>
        )}
        {!v && !error.value && <p class="muted">Loading…</p>}
        {v && v.list === null && (
          <div class="exclude-broken" role="alert">
            <p class="error-text">{v.error}</p>
            <p class="small">
              Nothing is imported until it is fixed. Fix the file by hand, or start a new, empty
              list (the file is replaced).
            </p>
            <button
              type="button"
              class="secondary"
              onClick={() => void save({ paths: [], projects: [] })}
            >
              Start a new list
            </button>
          </div>
        )}
        {v && v.list !== null && (
          <div class="exclude-kinds">
            {KINDS.map((k) => (
              <KindEditor key={k.kind} view={v} kind={k} projects={projects.value} save={save} />
            ))}
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="forgotten-h">
        <h2 id="forgotten-h">Forgotten sessions</h2>
        <p class="muted small">
          Deleted from the store with their payloads; no import brings them back.
        </p>
        {forgotten.value && !forgotten.value.length && (
          <p class="muted">No session has been forgotten.</p>
        )}
        {forgotten.value && forgotten.value.length > 0 && (
          <ul class="plain forgotten-list" aria-labelledby="forgotten-h">
            {forgotten.value.map((f) => (
              <li key={f.id}>
                <div class="forgotten-title">{f.title ?? f.id}</div>
                <div class="muted small">
                  {agentName(f.source)} · <code class="path">{f.project_path ?? "no project"}</code>
                  {" "}
                  · forgotten <Time at={f.forgotten_at} />
                </div>
                {f.title && <code class="muted small forgotten-id">{f.id}</code>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
