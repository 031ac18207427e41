/**
 * Live against a real agent CLI: `chronicle serve` runs on the scratch HOME before the CLI
 * starts, a client attaches to the session's live stream as soon as the session exists, and
 * the long scenario (s4-long, 40+ tool calls) runs. Every operation Chronicle ends up with
 * must have reached the client, once, in timeline order, in its final state, before the CLI
 * exited: at the latest within the live latency target (100 ms) of its exit, since a CLI that
 * writes its last line and exits at once cannot be beaten by any reader.
 *
 * @module
 */
import { SseClient } from "../_helpers/sse_client.ts";
import type { AgentSpec } from "./agents.ts";
import { REPO_ROOT } from "./chronicle.ts";
import { drive } from "./drive.ts";
import { SCENARIOS } from "./scenarios.ts";

/** The live target: a line appended reaches a viewer within this (p95). */
const LATENCY_TARGET_MS = 100;

/** How long the scripted model takes to answer each request in the live run. */
const REPLY_DELAY_MS = 60;

const DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;

interface Serve {
  url: string;
  auth: { headers: Record<string, string> };
  stop(): Promise<void>;
}

/** `chronicle serve` on the scratch HOME, importing every second and following live. */
async function serve(home: string, dataDir: string): Promise<Serve> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${REPO_ROOT}/main.ts`, "serve", "--port", "0", "--interval", "1"],
    cwd: REPO_ROOT,
    env: {
      HOME: home,
      CHRONICLE_HOME: dataDir,
      PATH: "/usr/local/bin:/usr/bin:/bin",
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
      DENO_DIR,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/http:\/\/127\.0\.0\.1:\d+\//.test(seen)) {
    const { value, done } = await out.read();
    if (done) throw new Error(`chronicle serve stopped: ${seen.trim()}`);
    seen += value;
  }
  const drain = (async () => {
    while (!(await out.read()).done) { /* keep the pipe flowing */ }
  })();
  const token = (await Deno.readTextFile(`${dataDir}/token`)).trim();
  return {
    url: seen.match(/http:\/\/127\.0\.0\.1:\d+\//)![0],
    auth: { headers: { "x-chronicle-token": token } },
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drain;
    },
  };
}

interface Follow {
  id: string;
  client: SseClient;
  attachedAt: number;
}

/** Waits for the agent's session to exist, then follows it from its very first operation. */
async function follow(srv: Serve, source: string, stop: { done: boolean }): Promise<Follow | null> {
  while (!stop.done) {
    const list = await (await fetch(`${srv.url}api/sessions?source=${source}`, srv.auth)).json();
    const id = list.items?.[0]?.id as string | undefined;
    if (id) {
      const client = await SseClient.connect(
        `${srv.url}api/sessions/${encodeURIComponent(id)}/live?since=0`,
        srv.auth,
      );
      return { id, client, attachedAt: performance.now() };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return null;
}

interface Op {
  op_id: string;
  seq: number;
  op: { completeness: string };
}

async function timeline(srv: Serve, id: string): Promise<Op[]> {
  const out: Op[] = [];
  for (let offset = 0;; offset += 500) {
    const page = await (await fetch(
      `${srv.url}api/sessions/${encodeURIComponent(id)}/timeline?offset=${offset}&limit=500`,
      srv.auth,
    )).json();
    out.push(...page.items);
    if (out.length >= page.total) return out;
  }
}

export async function runLiveCheck(
  agent: AgentSpec,
  bin: string,
  root: string,
): Promise<{ ok: boolean; lines: string[] }> {
  const lines: string[] = [];
  const base = SCENARIOS.find((s) => s.id === "s4-long")!;
  const dataDir = `${root}/data-live-${agent.id}`;
  const stop = { done: false };
  let srv: Serve | null = null;
  let following: Promise<Follow | null> = Promise.resolve(null);
  let startedAt = 0;
  try {
    const run = await drive(agent, { ...base, id: "live" }, {
      root,
      bin,
      // A model takes time to answer, so a session is written over a while, as it is for a
      // user: without it GitHub Copilot CLI 1.0.102 wrote its events file 1.2 s into a 1.9 s
      // run, and a server that looks for new logs every second (--interval 1) found it after the
      // CLI had exited, by chance, about one run in two. What is checked is what follows: every
      // step streamed to the client once, in order, within the latency target.
      replyDelayMs: REPLY_DELAY_MS,
      beforeRun: async (ctx) => {
        srv = await serve(ctx.home, dataDir);
        following = follow(srv, agent.source, stop);
        startedAt = performance.now();
      },
    });
    // The run's duration ends when the CLI exited (before its model server closed).
    const exitedAt = startedAt + run.durationMs;
    stop.done = true;
    lines.push(`cli exit ${run.exitCode}, ${(run.durationMs / 1000).toFixed(1)} s`);
    const f = await following;
    if (!srv || !f) return { ok: false, lines: [...lines, "live: the session never appeared"] };
    const live = srv as Serve;
    // What Chronicle ends up with: wait for the last background pass to have looked.
    await new Promise((r) => setTimeout(r, 2500));
    const final = await timeline(live, f.id);
    await f.client.close();
    const got = f.client.events.filter((e) => e.event === "ops").flatMap((e) =>
      (e.data as { ops: Op[] }).ops.map((o) => ({ ...o, at: e.at }))
    );
    const first = new Map<string, number>();
    const last = new Map<string, { completeness: string; at: number }>();
    got.forEach((o, i) => {
      if (!first.has(o.op_id)) first.set(o.op_id, i);
      last.set(o.op_id, { completeness: o.op.completeness, at: o.at });
    });
    const problems: string[] = [];
    const missing = final.filter((o) => !first.has(o.op_id));
    if (missing.length) problems.push(`${missing.length} operations never arrived`);
    const extra = [...first.keys()].filter((id) => !final.some((o) => o.op_id === id));
    if (extra.length) {
      problems.push(`${extra.length} operations arrived that Chronicle does not have`);
    }
    // In order: a client that puts each operation at the place it was sent with (as the UI
    // does) ends with the timeline. An agent may write a step that sorts before ones it wrote
    // earlier (OpenCode's parts): such a step is placed, not appended.
    const shown: string[] = [];
    let placed = 0;
    for (const o of got) {
      const at = shown.indexOf(o.op_id);
      if (at === o.seq) continue;
      if (at >= 0) shown.splice(at, 1);
      if (o.seq < shown.length) placed++;
      shown.splice(o.seq, 0, o.op_id);
    }
    const order = final.map((o) => o.op_id);
    const wrong = order.filter((id, i) => shown[i] !== id).length;
    if (wrong) problems.push(`${wrong} operations end up out of timeline order on the client`);
    const stale = final.filter((o) => last.get(o.op_id)?.completeness !== o.op.completeness);
    if (stale.length) {
      problems.push(`${stale.length} operations' last version is not their final state`);
    }
    const late = final.filter((o) =>
      (last.get(o.op_id)?.at ?? Infinity) > exitedAt + LATENCY_TARGET_MS
    );
    if (late.length) {
      problems.push(
        `${late.length} operations arrived more than ${LATENCY_TARGET_MS} ms after the CLI exited`,
      );
    }
    const lastAt = Math.max(...final.map((o) => last.get(o.op_id)?.at ?? -Infinity));
    lines.push(
      `live: attached ${(f.attachedAt - startedAt).toFixed(0)} ms after the CLI started; ` +
        `${final.length} operations, ${got.length} sent (${
          got.length - first.size
        } of them updates, ${placed} placed before steps already shown), the last ${
          lastAt <= exitedAt
            ? `${(exitedAt - lastAt).toFixed(0)} ms before the CLI exited`
            : `${(lastAt - exitedAt).toFixed(0)} ms after the CLI exited`
        }`,
    );
    for (const p of problems) lines.push(`live: ${p}`);
    return { ok: run.exitCode === 0 && problems.length === 0 && final.length > 0, lines };
  } catch (e) {
    return { ok: false, lines: [...lines, `live: ${(e as Error).message}`] };
  } finally {
    stop.done = true;
    await (srv as Serve | null)?.stop();
  }
}
