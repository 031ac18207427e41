/**
 * Security: custom rules (add a glob redact rule or an allow rule, toggle, delete), the
 * security check with redacted previews, the interceptions log, and the opt-in guard install.
 */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import { api, qs } from "../api.ts";
import { onLink, sessionUrl } from "../router.ts";
import { Time } from "./time.tsx";
import { PathText } from "./path_text.tsx";
import { TableScroll } from "./table_scroll.tsx";

interface Rule {
  id: string;
  name: string;
  pattern: string;
  action: "redact" | "allow";
  enabled: boolean;
  created_at: string;
}
interface Finding {
  op_id: string;
  where: string;
  rule: string;
  preview: string;
}
interface CheckSession {
  session_id: string;
  title: string | null;
  source: string;
  total: number;
  by_rule: Record<string, number>;
  findings: Finding[];
}
interface CheckReport {
  sessions_scanned: number;
  total: number;
  by_rule: Record<string, number>;
  sessions: CheckSession[];
}
interface Interception {
  id: number;
  at: string;
  session_id: string | null;
  tool: string;
  file: string | null;
  rules: string[];
  sample: string | null;
  action: string;
}
interface GuardStatus {
  installed: boolean;
  /** When installed: the installed command blocked a known-bad call and allowed a good one. */
  working?: boolean;
  detail?: string;
  settings_path: string;
  explanation: string;
}

function Rules(): VNode {
  const rules = useSignal<Rule[] | null>(null);
  const error = useSignal<string | null>(null);
  const name = useSignal("");
  const pattern = useSignal("");
  const action = useSignal<"redact" | "allow">("redact");
  const reload = () =>
    api<{ items: Rule[] }>("/api/security/rules")
      .then((r) => (rules.value = r.items))
      .catch((e) => (error.value = (e as Error).message));
  useEffect(() => void reload(), []);
  const run = (p: Promise<unknown>) =>
    p.then(() => {
      error.value = null;
      return reload();
    }).catch((e) => (error.value = (e as Error).message));

  return (
    <section class="card" aria-label="Rules">
      <h2>Rules</h2>
      <p class="muted small">
        Globs: <code>*</code> matches a run of non-space characters, <code>?</code>{" "}
        one character. Allow rules protect matching text from redaction; redact rules run before the
        built-in detectors.
      </p>
      <form
        class="rule-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!pattern.value.trim()) return;
          void run(api("/api/security/rules", {
            method: "POST",
            body: {
              name: name.value || pattern.value,
              pattern: pattern.value,
              action: action.value,
            },
          })).then(() => {
            name.value = "";
            pattern.value = "";
          });
        }}
      >
        <input
          placeholder="Name"
          aria-label="Rule name"
          value={name.value}
          onInput={(e) => (name.value = (e.currentTarget as HTMLInputElement).value)}
        />
        <input
          placeholder="Glob, e.g. corp-*-token"
          aria-label="Rule pattern"
          required
          value={pattern.value}
          onInput={(e) => (pattern.value = (e.currentTarget as HTMLInputElement).value)}
        />
        <select
          aria-label="Rule action"
          value={action.value}
          onChange={(
            e,
          ) => (action.value = (e.currentTarget as HTMLSelectElement).value as "redact" | "allow")}
        >
          <option value="redact">Redact</option>
          <option value="allow">Allow</option>
        </select>
        <button type="submit">Add rule</button>
      </form>
      {error.value && <div class="error-text">{error.value}</div>}
      {rules.value && (
        <TableScroll label="Rules">
          <table class="table rules">
            <thead>
              <tr>
                <th>On</th>
                <th>Name</th>
                <th>Pattern</th>
                <th>Action</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {rules.value.length === 0 && (
                <tr>
                  <td colSpan={5} class="muted">
                    No custom rules; the built-in detectors run alone.
                  </td>
                </tr>
              )}
              {rules.value.map((r) => (
                <tr key={r.id} data-rule={r.id}>
                  <td>
                    <input
                      type="checkbox"
                      checked={r.enabled}
                      aria-label={`Enable ${r.name}`}
                      onChange={(e) =>
                        void run(api(`/api/security/rules/${encodeURIComponent(r.id)}`, {
                          method: "PATCH",
                          body: { enabled: (e.currentTarget as HTMLInputElement).checked },
                        }))}
                    />
                  </td>
                  <td>{r.name}</td>
                  <td>
                    <code>{r.pattern}</code>
                  </td>
                  <td>
                    <span class={`badge ${r.action === "allow" ? "badge-ok" : "badge-warn"}`}>
                      {r.action}
                    </span>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link danger"
                      onClick={() =>
                        void run(
                          api(`/api/security/rules/${encodeURIComponent(r.id)}`, {
                            method: "DELETE",
                          }),
                        )}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

function Check(): VNode {
  const report = useSignal<CheckReport | null>(null);
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const session = useSignal("");
  const run = () => {
    busy.value = true;
    api<CheckReport>("/api/security/check", {
      method: "POST",
      body: session.value.trim() ? { session_id: session.value.trim() } : {},
    }).then((r) => {
      report.value = r;
      error.value = null;
    }).catch((e) => (error.value = (e as Error).message)).finally(() => (busy.value = false));
  };
  const r = report.value;
  return (
    <section class="card" aria-label="Security check">
      <h2>Security check</h2>
      <p class="muted small">
        Scans prompts, replies, tool inputs and results for keys, tokens, passwords, connection
        strings and personal data. Previews are redacted; stored transcripts are never changed.
      </p>
      <div class="rule-form">
        <input
          placeholder="Session id (empty: all sessions)"
          aria-label="Session to check"
          value={session.value}
          onInput={(e) => (session.value = (e.currentTarget as HTMLInputElement).value)}
        />
        <button type="button" onClick={run} disabled={busy.value}>
          {busy.value ? "Checking…" : "Run check"}
        </button>
      </div>
      {error.value && <div class="error-text">{error.value}</div>}
      {r && (
        <div class="check-report">
          <div>
            <b>{r.total}</b> findings in {r.sessions_scanned} session(s){" "}
            {Object.entries(r.by_rule).map(([k, v]) => <span key={k} class="chip">{k} {v}</span>)}
          </div>
          {r.sessions.map((s) => (
            <details key={s.session_id} class="check-session">
              <summary>
                {s.title ?? s.session_id} <span class="muted">{s.total} findings</span>
              </summary>
              {/* The session's link sits under the summary: a link inside one cannot be reached. */}
              <a
                class="check-open"
                href={sessionUrl(s.session_id)}
                onClick={(e) => onLink(e, sessionUrl(s.session_id))}
              >
                Open the session
              </a>
              <TableScroll label="What was found">
                <table class="table">
                  <tbody>
                    {s.findings.map((f, i) => (
                      <tr key={i}>
                        <td>
                          <span class="badge badge-warn">{f.rule}</span>
                        </td>
                        <td class="muted">{f.where}</td>
                        <td>
                          <code class="preview" title={f.preview}>{f.preview}</code>
                        </td>
                        <td>
                          <a
                            href={sessionUrl(s.session_id, f.op_id)}
                            onClick={(e) => onLink(e, sessionUrl(s.session_id, f.op_id))}
                          >
                            open
                          </a>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            </details>
          ))}
        </div>
      )}
    </section>
  );
}

function Interceptions({ refresh }: { refresh: number }): VNode {
  const page = useSignal<{ total: number; items: Interception[] } | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    api<{ total: number; items: Interception[] }>(
      `/api/security/interceptions${qs({ limit: 100 })}`,
    )
      .then((p) => (page.value = p))
      .catch((e) => (error.value = (e as Error).message));
  }, [refresh]);
  return (
    <section class="card" aria-label="Interceptions">
      <h2>Interceptions {page.value && <span class="muted small">({page.value.total})</span>}</h2>
      {error.value && <div class="error-text">{error.value}</div>}
      {page.value && page.value.items.length === 0 && (
        <div class="muted">No tool call has been checked by the guard yet.</div>
      )}
      {page.value && page.value.items.length > 0 && (
        <TableScroll label="Interceptions">
          <table class="table">
            <thead>
              <tr>
                <th>When</th>
                <th>Action</th>
                <th>Tool</th>
                <th>File</th>
                <th>Rules</th>
                <th>Sample</th>
              </tr>
            </thead>
            <tbody>
              {page.value.items.map((i) => (
                <tr key={i.id}>
                  <td class="muted nowrap">
                    <Time at={i.at} />
                  </td>
                  <td>
                    <span
                      class={`badge ${
                        i.action === "block"
                          ? "badge-error"
                          : i.action === "flag"
                          ? "badge-warn"
                          : "badge-ok"
                      }`}
                    >
                      {i.action}
                    </span>
                  </td>
                  <td class="nowrap">{i.tool}</td>
                  <td>
                    {i.file && <PathText path={i.file} />}
                  </td>
                  <td>{i.rules.join(", ")}</td>
                  <td>
                    <code class="preview" title={i.sample ?? ""}>{i.sample ?? ""}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

function Guard(): VNode {
  const status = useSignal<GuardStatus | null>(null);
  const message = useSignal<string | null>(null);
  const error = useSignal<string | null>(null);
  const reload = () =>
    api<GuardStatus>("/api/security/guard").then((s) => (status.value = s)).catch((e) =>
      error.value = (e as Error).message
    );
  useEffect(() => void reload(), []);
  const act = (what: "install" | "uninstall") =>
    api<{ summary?: string; backup_path?: string }>(`/api/security/guard/${what}`, {
      method: "POST",
      body: {},
    })
      .then((r) => {
        message.value = (r.summary ?? (what === "install" ? "Installed." : "Removed.")) +
          (r.backup_path ? ` (backup: ${r.backup_path})` : "");
        error.value = null;
        return reload();
      })
      .catch((e) => (error.value = (e as Error).message));
  const s = status.value;
  return (
    <section class="card" aria-label="Guard">
      <h2>
        Live guard{" "}
        {s && (
          <span class={`badge ${s.installed && s.working !== false ? "badge-ok" : ""}`}>
            {!s.installed ? "not installed" : s.working === false ? "broken" : "installed, working"}
          </span>
        )}
      </h2>
      <p>
        {s?.explanation ??
          "The guard is a Claude Code PreToolUse hook: before each tool call it decides on its own whether the call would read or send a secret, and blocks it if so."}
      </p>
      {s?.detail && <p class={s.working === false ? "error-text" : "muted small"}>{s.detail}</p>}
      {s && (
        <p class="muted small">
          Settings file: <code>{s.settings_path}</code> (backed up before any change)
        </p>
      )}
      <div class="rule-form">
        {s && (!s.installed || s.working === false) && (
          <button
            type="button"
            onClick={() => void act("install")}
          >
            {s.installed ? "Reinstall the guard hook" : "Install the guard hook"}
          </button>
        )}
        {s && s.installed && (
          <button
            type="button"
            class="secondary"
            onClick={() => void act("uninstall")}
          >
            Remove the guard hook
          </button>
        )}
      </div>
      {message.value && <div class="ok-text">{message.value}</div>}
      {error.value && <div class="error-text">{error.value}</div>}
    </section>
  );
}

export function SecurityPage({ refresh }: { refresh: number }): VNode {
  return (
    <div class="page">
      <div class="page-head">
        <h1>Security</h1>
      </div>
      <Guard />
      <Rules />
      <Check />
      <Interceptions refresh={refresh} />
    </div>
  );
}
