/**
 * Share or export one session: first what redaction finds in the copy (counts and masked
 * samples, never a secret), a field to add a redaction rule and see the result again, then
 * Markdown / HTML downloads and share links (made, listed with their views, revoked). Says
 * plainly that links are served on this machine only and how a user could expose one.
 */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { RedactionSummary } from "../../../core/export/redactor.ts";
import type { ShareRow } from "../../../core/shares/mod.ts";
import { api, qs } from "../api.ts";

/** A share as the API lists it: the store's row and its state now. */
type Share = ShareRow & { state: "live" | "expired" | "revoked" };

const DAYS = [1, 7, 30, 90];

function shortTime(iso: string | null): string {
  return iso ? iso.slice(0, 16).replace("T", " ") : "";
}

export function ShareDialog({ id, onClose }: { id: string; onClose: () => void }): VNode {
  const thinking = useSignal(false);
  const preview = useSignal<RedactionSummary | null>(null);
  const loading = useSignal(true);
  const error = useSignal<string | null>(null);
  const pattern = useSignal("");
  const ruleError = useSignal<string | null>(null);
  const days = useSignal(7);
  const created = useSignal<{ url: string; share: Share } | null>(null);
  const shares = useSignal<Share[]>([]);
  const copied = useSignal(false);
  const busy = useSignal(false);
  const nonce = useSignal(0);
  const dialog = useRef<HTMLDivElement>(null);
  const base = `/api/sessions/${encodeURIComponent(id)}`;

  useEffect(() => {
    const ctl = new AbortController();
    loading.value = true;
    api<{ redaction: RedactionSummary }>(
      `${base}/redaction${qs({ thinking: thinking.value ? 1 : 0 })}`,
      {
        signal: ctl.signal,
      },
    ).then((r) => {
      preview.value = r.redaction;
      error.value = null;
    }).catch((e) => {
      if ((e as Error).name !== "AbortError") error.value = (e as Error).message;
    }).finally(() => (loading.value = false));
    return () => ctl.abort();
  }, [id, thinking.value, nonce.value]);

  const loadShares = () =>
    api<{ items: Share[] }>(`/api/shares${qs({ session: id })}`).then((
      r,
    ) => (shares.value = r.items))
      .catch((e) => (error.value = (e as Error).message));
  useEffect(() => void loadShares(), [id]);
  useEffect(() => dialog.current?.querySelector<HTMLElement>("button, input")?.focus(), []);

  const addRule = async (e: Event) => {
    e.preventDefault();
    const p = pattern.value.trim();
    if (!p) return;
    try {
      await api("/api/security/rules", {
        method: "POST",
        body: { name: `redact ${p}`.slice(0, 80), pattern: p, action: "redact" },
      });
      pattern.value = "";
      ruleError.value = null;
      nonce.value++;
    } catch (err) {
      ruleError.value = (err as Error).message;
    }
  };

  const createShare = async () => {
    busy.value = true;
    try {
      const r = await api<{ share: Share; path: string }>(`${base}/shares`, {
        method: "POST",
        body: { days: days.value, thinking: thinking.value },
      });
      created.value = { url: location.origin + r.path, share: r.share };
      copied.value = false;
      await loadShares();
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      busy.value = false;
    }
  };

  const revoke = async (share: Share) => {
    try {
      await api(`/api/shares/${encodeURIComponent(share.id)}`, { method: "DELETE" });
      if (created.value?.share.id === share.id) created.value = null;
      await loadShares();
    } catch (e) {
      error.value = (e as Error).message;
    }
  };

  const copy = async () => {
    if (!created.value) return;
    try {
      await navigator.clipboard.writeText(created.value.url);
      copied.value = true;
    } catch {
      (dialog.current?.querySelector(".share-url") as HTMLInputElement | null)?.select();
    }
  };

  const p = preview.value;
  const download = (format: "md" | "html") =>
    `${base}/export${qs({ format, thinking: thinking.value ? 1 : 0 })}`;
  const port = location.port || "80";
  return (
    <div class="palette-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={dialog}
        class="share-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="share-dialog-title"
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            onClose();
          }
        }}
      >
        <div class="share-head">
          <h2 id="share-dialog-title">Share or export</h2>
          <button type="button" class="icon" aria-label="Close" onClick={onClose}>✕</button>
        </div>

        <section aria-labelledby="share-redaction">
          <h3 id="share-redaction">What redaction found</h3>
          {loading.value && !p && <p class="muted">Scanning the copy…</p>}
          {p && (
            <div class={`redaction-box ${loading.value ? "is-stale" : ""}`} aria-live="polite">
              <p>
                {p.total === 0
                  ? "Nothing to redact: no secrets or personal data found in what would be shared."
                  : `${p.total} finding${p.total === 1 ? "" : "s"} will be replaced in the copy.`}
              </p>
              {p.total > 0 && (
                <div class="kind-chips">
                  {Object.entries(p.by_rule).map(([rule, n]) => (
                    <span key={rule} class="chip">{rule} {n}</span>
                  ))}
                </div>
              )}
              {p.samples.length > 0 && (
                <ul class="redaction-samples">
                  {p.samples.slice(0, 50).map((s, i) => (
                    <li key={i}>
                      <span class="muted small">{s.where} · {s.rule}</span>
                      <code>{s.sample}</code>
                    </li>
                  ))}
                </ul>
              )}
              {p.samples_capped && <p class="muted small">Showing the first {p.samples.length}.</p>}
            </div>
          )}
          <form class="rule-form" onSubmit={addRule}>
            <label for="share-rule">Also redact</label>
            <input
              id="share-rule"
              value={pattern.value}
              placeholder="a word or glob, e.g. acme-internal-* "
              onInput={(e) => (pattern.value = (e.currentTarget as HTMLInputElement).value)}
            />
            <button type="submit" class="secondary">Add rule</button>
          </form>
          {ruleError.value && <p class="error-text small">{ruleError.value}</p>}
          <p class="muted small">
            Rules apply to every share, export and security check; manage them on the Security page.
            {" "}
            <code>*</code> matches a run of non-space characters, <code>?</code> one.
          </p>
          <label class="check">
            <input
              type="checkbox"
              checked={thinking.value}
              onChange={(e) => (thinking.value = (e.currentTarget as HTMLInputElement).checked)}
            />{" "}
            Include the agent's thinking
          </label>
        </section>

        <section aria-labelledby="share-export">
          <h3 id="share-export">Export a file</h3>
          <p class="muted small">
            Redacted as above. The HTML file needs no script or network: it opens from a folder or a
            mail attachment.
          </p>
          <div class="share-actions">
            <a class="button-link" href={download("html")} download>Download HTML</a>
            <a class="button-link" href={download("md")} download>Download Markdown</a>
          </div>
        </section>

        <section aria-labelledby="share-link">
          <h3 id="share-link">Share link</h3>
          <p class="muted small">
            The redacted copy is made now and frozen: later rule changes do not alter it, and
            nothing redacted is kept with it.
          </p>
          <div class="share-actions">
            <label>
              Expires after{" "}
              <select
                value={String(days.value)}
                onChange={(
                  e,
                ) => (days.value = Number((e.currentTarget as HTMLSelectElement).value))}
              >
                {DAYS.map((d) => (
                  <option key={d} value={String(d)}>{d} day{d > 1 ? "s" : ""}</option>
                ))}
              </select>
            </label>
            <button type="button" disabled={busy.value || !p} onClick={createShare}>
              Create link
            </button>
          </div>
          {created.value && (
            <div class="share-created">
              <div class="share-url-row">
                <input
                  class="share-url"
                  readOnly
                  value={created.value.url}
                  aria-label="Share link"
                />
                <button type="button" class="secondary" onClick={copy}>
                  {copied.value ? "Copied" : "Copy"}
                </button>
              </div>
              <p class="small">
                Shown only now: Chronicle keeps only a hash of the link. Expires{" "}
                {shortTime(created.value.share.expires_at)} UTC.
              </p>
            </div>
          )}
          <p class="share-note small">
            Links open only on this machine, while Chronicle runs (it listens on 127.0.0.1). To let
            someone else open one, run a reverse proxy or tunnel of your choice in front of{" "}
            <code>127.0.0.1:{port}</code> that forwards only <code>/share/</code>{" "}
            and sends the Host header{" "}
            <code>127.0.0.1:{port}</code>. Chronicle never exposes anything for you.
          </p>
          {shares.value.length > 0 && (
            <table class="share-list">
              <thead>
                <tr>
                  <th>Link</th>
                  <th>State</th>
                  <th>Views</th>
                  <th>Expires</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {shares.value.map((s) => (
                  <tr key={s.id}>
                    <td>
                      <code>{s.id}</code>
                    </td>
                    <td class={`share-${s.state}`}>{s.state}</td>
                    <td>{s.views}</td>
                    <td>{shortTime(s.expires_at)}</td>
                    <td>
                      {s.state === "live" && (
                        <button
                          type="button"
                          class="link danger"
                          onClick={() => revoke(s)}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        {error.value && <p class="error-text">{error.value}</p>}
      </div>
    </div>
  );
}
