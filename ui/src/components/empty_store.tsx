/**
 * The empty store explains itself: for each agent, where Chronicle looked for its logs (each
 * folder there or not), how many it found and how old the newest is, and how to point it
 * elsewhere. All of it is `chronicle doctor`'s report (`GET /api/doctor`), never a second list.
 */
import { useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import type { DoctorReport } from "../../../core/doctor/types.ts";
import { api } from "../api.ts";
import { duration } from "../format.ts";

export function EmptyStore(): VNode {
  const report = useSignal<DoctorReport | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    api<DoctorReport>("/api/doctor?verify=false")
      .then((r) => (report.value = r))
      .catch((e) => (error.value = (e as Error).message));
  }, []);
  const r = report.value;
  const fixes = r?.checks.filter((c) => c.area === "agents" && c.fix) ?? [];
  return (
    <section class="empty-store" aria-labelledby="empty-store-title">
      <h1 id="empty-store-title">No sessions yet</h1>
      <p>
        Chronicle reads the logs your coding agents write on this machine. It found none it could
        import. Where it looked:
      </p>
      {error.value && (
        <p class="error-text">
          Cannot ask where Chronicle looked ({error.value}). Run <code>chronicle doctor</code>{" "}
          in a terminal for the same report.
        </p>
      )}
      {!r && !error.value && <p class="muted" role="status">Looking…</p>}
      {r && (
        <table class="table agent-roots">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Looked in</th>
              <th scope="col">Found</th>
            </tr>
          </thead>
          <tbody>
            {r.agents.map((a) => (
              <tr key={a.id} data-agent={a.id}>
                <th scope="row">{a.name}</th>
                <td>
                  {a.looked.length === 0 && <span class="muted">nowhere (no home folder)</span>}
                  <ul class="plain">
                    {a.looked.map((l) => (
                      <li key={l.path}>
                        <code>{l.path}</code>{" "}
                        <span class={l.found ? "ok-text" : "muted"}>
                          {l.found ? "exists" : "not there"}
                        </span>
                      </li>
                    ))}
                  </ul>
                  {a.error && <div class="error-text">{a.error}</div>}
                </td>
                <td class="nowrap">
                  {a.files === 1 ? "1 log" : `${a.files} logs`}
                  {a.newest_age_s !== null && (
                    <div class="muted small">
                      newest {duration(a.newest_age_s * 1000)} ago
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Point Chronicle elsewhere</h2>
      <ul>
        {fixes.map((c) => <li key={c.subject}>{c.fix}.</li>)}
        <li>
          Then run <code>chronicle import</code>, or restart <code>chronicle serve</code>{" "}
          from a shell where those variables are set: logs are read where the agents write them,
          never changed.
        </li>
        <li>
          A session exported elsewhere comes in with <code>chronicle import --canonical</code>{" "}
          <var>folder</var>.
        </li>
        <li>
          <code>chronicle doctor</code> prints this report and checks the data folder and the store.
        </li>
      </ul>
    </section>
  );
}
