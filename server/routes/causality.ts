/**
 * Causality and time travel over the API: a session's changes with their sources (compact for
 * the timeline's badges, whole for one change), the files-touched map, and the code at any
 * step (tree, a file, a change's diff, the session's net changes). Every answer is computed
 * from the stored session and the project's git history through the git engine; a path in a
 * request is only ever a lookup key, never a file Chronicle opens.
 */
import {
  analyseSession,
  type CausalityReport,
  chainTo,
  TIER_LABELS,
  TIER_SCORES,
} from "../../core/causality/mod.ts";
import type { ChronicleStore } from "../../core/store/mod.ts";
import {
  ANALYSED_TEXT_CHARS,
  type CodeInputs,
  type CodeSession,
  gatherSession,
  type SessionCode,
  sessionCode,
} from "../../core/timetravel/mod.ts";
import type { AppDeps } from "../deps.ts";
import { HttpError, json } from "../errors.ts";
import type { Route } from "./_http.ts";
import { pagedTurns } from "../../core/paged.ts";
import { makeRoom, oneAtATime } from "../session_work.ts";

/**
 * The analyses kept (each holds its report, what the code at a step reads of its session, and
 * its prepared code): at most this many sessions, and at most this many steps in all, however
 * few sessions that is (the newest is kept whatever its size). One analysis of the bench's
 * 35,342-step session holds about 44 MiB of heap (86 with the whole session it loaded).
 */
export const ANALYSES_KEPT = { sessions: 8, steps: 40_000 };
/** Events per file in the files-touched map sent with the summary. */
const FILE_EVENTS = 200;

interface Entry {
  key: string;
  /** What the code at a step reads: the session loaded for the analysis is not kept. */
  inputs: CodeInputs;
  report: CausalityReport;
  code?: Promise<SessionCode>;
}

/**
 * Per-session analyses, recomputed when the session changes (a live session grows). A big
 * session is loaded and its facts read a page at a time, with a turn of the event loop between
 * pages: a session of 35,000 steps takes seconds, and the server answers other requests (its
 * timeline's pages) meanwhile, and the pages' garbage is collected as it goes. Requests for a
 * session being analysed wait for that analysis.
 */
export function createAnalysisCache(deps: AppDeps, kept = ANALYSES_KEPT) {
  const entries = new Map<string, Entry>();
  const pending = new Map<string, { key: string; entry: Promise<Entry> }>();
  const store: ChronicleStore = deps.store;
  const work = deps.sessionWork ?? oneAtATime();
  // a cache: the session work lets it go for work that needs the room (a replay's plan)
  work.keep(() => entries.clear());
  const read = (ref: Parameters<ChronicleStore["payloadText"]>[0], max?: number) =>
    store.payloadText(ref, max);
  const stepsOf = (e: Entry) => e.inputs.session.timeline.length;
  const notFound = (id: string) =>
    new HttpError(404, "not_found", `No session "${id.slice(0, 200)}"`);
  const analyse = async (id: string, key: string): Promise<Entry> => {
    // a page of the session at a time: its facts and what the code reads of it stay, it does not
    const parts = store.sessionParts(id, { textChars: ANALYSED_TEXT_CHARS });
    const got = await gatherSession(parts, read, pagedTurns());
    if (!got) throw notFound(id);
    const { head, facts, inputs } = got;
    const entry: Entry = { key, inputs, report: analyseSession(head, read, { facts }) };
    entries.set(id, entry);
    // the oldest go first, never the one just made
    makeRoom(entries, { count: kept.sessions, steps: kept.steps }, stepsOf, { keep: 1 });
    return entry;
  };
  return {
    async get(id: string): Promise<Entry> {
      const summary = store.getSession(id);
      if (!summary) throw notFound(id);
      const key = `${summary.op_count}|${summary.ended_at}|${summary.error_count}`;
      const had = entries.get(id);
      if (had && had.key === key) {
        entries.delete(id);
        entries.set(id, had);
        return had;
      }
      const running = pending.get(id);
      if (running?.key === key) return await running.entry;
      const entry = work.run(() => analyse(id, key));
      pending.set(id, { key, entry });
      try {
        return await entry;
      } finally {
        if (pending.get(id)?.entry === entry) pending.delete(id);
      }
    },
    async code(id: string): Promise<SessionCode> {
      const e = await this.get(id);
      e.code ??= work.run(() => sessionCode(e.inputs, { git: deps.git, read, turn: pagedTurns() }));
      return await e.code;
    },
  };
}

/** The step a request names: `op=<operation id>` or `at=<timeline position>`; default the end. */
function stepOf(url: URL, session: CodeSession): number {
  const op = url.searchParams.get("op");
  if (op) {
    const entry = session.timeline.find((t) => t.op === op);
    if (!entry) throw new HttpError(404, "not_found", `No operation "${op.slice(0, 200)}" here`);
    return entry.seq;
  }
  const at = url.searchParams.get("at");
  if (at === null || at === "") return session.timeline.length - 1;
  if (!/^-?\d{1,9}$/.test(at) || Number(at) < -1 || Number(at) >= session.timeline.length) {
    throw new HttpError(
      400,
      "bad_request",
      `Query parameter "at" must be a step -1..${session.timeline.length - 1}`,
    );
  }
  return Number(at);
}

function pathParam(url: URL, required: boolean): string | undefined {
  const p = url.searchParams.get("path");
  if (!p) {
    if (required) throw new HttpError(400, "bad_request", 'Query parameter "path" is required');
    return undefined;
  }
  if (p.length > 4096 || p.includes("\0")) {
    throw new HttpError(400, "bad_request", 'Query parameter "path" is not a path');
  }
  return p;
}

export function causalityRoutes(deps: AppDeps): Route[] {
  const cache = createAnalysisCache(deps);
  const tiers = Object.entries(TIER_SCORES).map(([tier, score]) => ({
    tier,
    score,
    label: TIER_LABELS[tier as keyof typeof TIER_LABELS],
  }));
  return [
    {
      method: "GET",
      path: "/api/sessions/:id/causality",
      handler: async ({ params }) => {
        const { report } = await cache.get(params.id);
        return json({
          session_id: report.session_id,
          project: report.project ?? null,
          tiers,
          changes: report.changes.map((c) => ({
            op: c.op,
            seq: c.seq,
            connection: c.connection,
            kind: c.kind,
            files: c.files,
            failed: c.failed,
            sources: c.sources.length,
            best: c.sources[0]?.score ?? null,
          })),
          files: report.files.map((f) => ({
            ...f,
            events: f.events.slice(0, FILE_EVENTS),
            events_omitted: Math.max(0, f.events.length - FILE_EVENTS),
          })),
        });
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/causality/:op",
      handler: async ({ params }) => {
        const { report } = await cache.get(params.id);
        const change = report.changes.find((c) => c.op === params.op);
        if (!change) {
          throw new HttpError(
            404,
            "not_found",
            `Operation "${params.op.slice(0, 200)}" is no change`,
          );
        }
        return json({
          ...change,
          tiers,
          chain: chainTo(report.edges, change.op),
          led_to: report.edges.filter((e) => e.from === change.op),
        });
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/code",
      handler: async ({ params, url }) => {
        const entry = await cache.get(params.id);
        const code = await cache.code(params.id);
        const tree = await code.treeAt(stepOf(url, entry.inputs.session));
        return json({ ...tree, start: code.start, commits: code.commits, steps: code.steps });
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/code/file",
      handler: async ({ params, url }) => {
        const entry = await cache.get(params.id);
        const path = pathParam(url, true)!;
        const code = await cache.code(params.id);
        return json(await code.fileAt(path, stepOf(url, entry.inputs.session)));
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/code/diff",
      handler: async ({ params, url }) => {
        const entry = await cache.get(params.id);
        const code = await cache.code(params.id);
        return json(
          await code.changeAt(stepOf(url, entry.inputs.session), { path: pathParam(url, false) }),
        );
      },
    },
    {
      method: "GET",
      path: "/api/sessions/:id/changes",
      handler: async ({ params, url }) => {
        const code = await cache.code(params.id);
        return json(await code.whatChanged({ path: pathParam(url, false) }));
      },
    },
  ];
}
