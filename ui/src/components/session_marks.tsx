/**
 * What the user marks on the open session, in its header: the title (an inline edit to rename
 * it: Enter saves, Escape cancels, an empty name gives the session its own title back), "renamed
 * from", and a star toggle (also the `s` key). Changes go through `PATCH /api/sessions/:id`;
 * other tabs hear of them (a `session` event, a live view's new summary).
 */
import { signal, useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { recordedTitle, USER_TITLE_CHARS } from "../../../core/model/titles.ts";
import type { SessionMarks } from "../../../core/store/types.ts";
import { api } from "../api.ts";
import { sessionTitle } from "../format.ts";
import type { SessionState } from "../session_state.ts";
import type { SessionSummary } from "../types.ts";

/** A session's marks changed (this tab or another): its views read it again. */
export const sessionMarked = signal<{ id: string; n: number } | null>(null);

/** Sends marks for the session of `state`; its header shows the answer at once. */
export async function markSession(state: SessionState, marks: SessionMarks): Promise<void> {
  const { session } = await api<{ session: SessionSummary }>(
    `/api/sessions/${encodeURIComponent(state.id)}`,
    { method: "PATCH", body: marks },
  );
  const d = state.detail.peek();
  if (d) state.setDetail({ ...d, session });
}

/** Stars or unstars the open session (the star button, the `s` key). */
export function toggleStar(state: SessionState): Promise<void> {
  const s = state.detail.peek()?.session;
  return s ? markSession(state, { starred: !s.starred }) : Promise.resolve();
}

/** The session's title as a heading, or the inline edit that renames it. */
export function SessionTitle(
  { state, session }: { state: SessionState; session: SessionSummary },
): VNode {
  const editing = useSignal(false);
  const draft = useSignal("");
  const error = useSignal<string | null>(null);
  const saving = useSignal(false);
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const recorded = recordedTitle(session);

  useEffect(() => {
    if (editing.value) input.current?.select();
  }, [editing.value]);

  const start = () => {
    draft.value = session.user_title ?? recorded ?? "";
    error.value = null;
    editing.value = true;
  };
  const stop = () => {
    editing.value = false;
    error.value = null;
    // once the heading (and its Rename button) is back
    setTimeout(() => renameButton.current?.focus(), 0);
  };
  const save = async () => {
    if (saving.value) return;
    const typed = draft.value.trim();
    // The recorded title typed back unchanged is no name of the user's own.
    const title = typed === (recorded ?? "").replace(/\s+/g, " ").trim() ? "" : typed;
    saving.value = true;
    try {
      await markSession(state, { title });
      stop();
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      saving.value = false;
    }
  };

  if (editing.value) {
    return (
      <form
        class="session-title rename-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label class="sr-only" for="rename-input">Session name</label>
        <input
          id="rename-input"
          class="rename-input"
          ref={input}
          value={draft.value}
          maxLength={USER_TITLE_CHARS}
          placeholder={recorded ?? "Session name"}
          aria-describedby="rename-hint"
          aria-invalid={error.value ? true : undefined}
          onInput={(e) => (draft.value = (e.currentTarget as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.preventDefault();
              stop();
            }
          }}
        />
        <button type="submit" disabled={saving.value}>Save</button>
        <button type="button" class="secondary" onClick={stop}>Cancel</button>
        <p id="rename-hint" class="muted small rename-hint">
          Enter saves, Esc cancels; an empty name gives the session its own title back.
        </p>
        {error.value && <p class="error-text small" role="alert">{error.value}</p>}
      </form>
    );
  }
  return (
    <>
      <h1 class="session-title">
        {session.starred && <span class="star-mark" aria-hidden="true">★</span>}
        {sessionTitle(session)}
      </h1>
      {session.user_title && recorded && (
        <p class="muted small renamed-from">Renamed from “{recorded}”</p>
      )}
      <div class="marks">
        <StarButton state={state} session={session} />
        <button type="button" class="mini rename-open" ref={renameButton} onClick={start}>
          <span aria-hidden="true">✎</span> Rename
        </button>
      </div>
    </>
  );
}

/** The star toggle: pressed when the session is starred. */
function StarButton(
  { state, session }: { state: SessionState; session: SessionSummary },
): VNode {
  const error = useSignal<string | null>(null);
  return (
    <>
      <button
        type="button"
        class="mini star-toggle"
        aria-pressed={session.starred}
        aria-keyshortcuts="s"
        title={session.starred ? "Starred (s to unstar)" : "Star this session (s)"}
        onClick={() =>
          toggleStar(state).then(
            () => (error.value = null),
            (e) => (error.value = (e as Error).message),
          )}
      >
        <span aria-hidden="true" class="star-glyph">{session.starred ? "★" : "☆"}</span> Star
      </button>
      {error.value && <span class="error-text small" role="alert">{error.value}</span>}
    </>
  );
}
