/**
 * The scripted model: given what a request shows of the conversation (its first user text,
 * how many tool results it carries, whether it offers tools), pick the reply the scenario
 * scripted for that point. Stateless on purpose: a CLI that retries a request, or falls back
 * from streaming to a plain request, gets the same answer again.
 *
 * @module
 */

/** One tool call the model makes, in the agent's own tool vocabulary. */
export interface NativeCall {
  name: string;
  /** The tool input: a JSON object, or a string for free-form tools (Codex apply_patch). */
  input: unknown;
}

/** One model turn: optional text, then tool calls; a turn without calls ends the thread. */
export interface Turn {
  text?: string;
  calls?: NativeCall[];
}

/** One conversation thread, recognised by a snippet of its first user message. */
export interface Thread {
  match: string;
  turns: Turn[];
}

export interface NativeScript {
  segments: Thread[];
  subagents: Thread[];
  /** The answer to side requests (titles, next-speaker checks): anything without a match. */
  side_text: string;
}

/** What a protocol adapter extracts from one request. */
export interface ConversationView {
  firstUserText: string;
  /** Tool results the request carries, in order. */
  results: { err: boolean; head: string }[];
  /**
   * Every user text message, with how many tool results came before it: a resumed
   * conversation carries the first run's prompt and results, then the next prompt.
   */
  userTexts: { text: string; after: number }[];
  hasTools: boolean;
}

export interface ScriptedReply {
  kind: "main" | "sub" | "side";
  segment?: number;
  turn?: number;
  text?: string;
  calls: (NativeCall & { id: string })[];
  /** Set when the request did not line up with the script (a count off, or past the end). */
  warning?: string;
}

/** The reply for one request; `idPrefix` keeps tool-call ids unique per protocol. */
export function replyFor(
  script: NativeScript,
  view: ConversationView,
  idPrefix: string,
): ScriptedReply {
  const side: ScriptedReply = { kind: "side", text: script.side_text, calls: [] };
  if (!view.hasTools) return side;
  const found = findThread(script, view);
  if (!found) return side;
  const { thread, kind, index, after } = found;
  const n = view.results.length - after;
  let turn = 0;
  let seen = 0;
  while (turn < thread.turns.length && seen < n) {
    seen += thread.turns[turn].calls?.length ?? 0;
    turn++;
  }
  let warning: string | undefined;
  if (seen !== n) warning = `request carries ${n} tool results, script expected ${seen}`;
  if (turn >= thread.turns.length) {
    return {
      kind,
      segment: index,
      turn,
      text: "Done.",
      calls: [],
      warning: warning ?? `request past the end of the script (turn ${turn})`,
    };
  }
  const t = thread.turns[turn];
  return {
    kind,
    segment: index,
    turn,
    text: t.text,
    calls: (t.calls ?? []).map((c, i) => ({
      ...c,
      id: `${idPrefix}_${kind}${index}t${turn}c${i}`,
    })),
    warning,
  };
}

/**
 * The thread a request continues, and how many tool results came before its prompt. Main
 * segments are tried latest first: a resumed conversation still holds the earlier prompts.
 */
function findThread(
  script: NativeScript,
  view: ConversationView,
): { thread: Thread; kind: "main" | "sub"; index: number; after: number } | undefined {
  // Sub-agents first: a sub-agent prompt never contains the main prompt, but the reverse can
  // happen when the main prompt quotes what it delegates.
  const text = view.firstUserText;
  const sub = script.subagents.findIndex((t) => text.includes(t.match));
  if (sub >= 0) return { thread: script.subagents[sub], kind: "sub", index: sub, after: 0 };
  // A sub-agent forked with its parent's history has the parent's prompt first.
  for (const [i, t] of script.subagents.entries()) {
    const u = view.userTexts.findLast((u) => u.text.includes(t.match));
    if (u) return { thread: t, kind: "sub", index: i, after: u.after };
  }
  for (let i = script.segments.length - 1; i >= 0; i--) {
    const match = script.segments[i].match;
    const u = i === 0 && text.includes(match)
      ? { after: 0 }
      : view.userTexts.findLast((u) => u.text.includes(match));
    if (u) return { thread: script.segments[i], kind: "main", index: i, after: u.after };
  }
  return undefined;
}

/** Cut a string for the request log. */
export function head(s: string, n = 200): string {
  return s.length > n ? s.slice(0, n) : s;
}
