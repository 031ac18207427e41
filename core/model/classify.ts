/**
 * What follows from an operation's kind, completeness and request: its effect on the world and
 * whether replay may attempt it. Importers build drafts without either; `finishOperation` is
 * the one place both are derived, so no importer can forget or contradict them.
 */
import type {
  Completeness,
  Effect,
  Operation,
  OperationKind,
  ReplayAttributes,
  ReplayBlocker,
} from "./types.ts";

const KIND_EFFECTS: Record<OperationKind, Effect> = {
  prompt: "none",
  reply: "none",
  thinking: "none",
  event: "none",
  read: "fs_read",
  search: "fs_read",
  write: "fs_write",
  edit: "fs_write",
  exec: "process",
  web: "network",
  task: "delegate",
  plan: "none",
  mcp: "network",
  other: "none",
};

/** Kinds that are messages or events, not tool calls. */
const MESSAGE_KINDS: ReadonlySet<OperationKind> = new Set(["prompt", "reply", "thinking", "event"]);

/** True for the kinds of tool calls (everything but prompts, replies, thinking and events). */
export function isToolKind(kind: OperationKind): boolean {
  return !MESSAGE_KINDS.has(kind);
}

/** The effect of an operation of this kind. */
export function effectOf(kind: OperationKind): Effect {
  return KIND_EFFECTS[kind];
}

/**
 * Replay attributes follow from kind and completeness alone: incomplete and continuation-only
 * operations are never replayable; shell steps need confirmation; file edits replay directly.
 */
export function replayAttributes(
  op: Pick<Operation, "kind" | "completeness" | "request">,
): ReplayAttributes {
  const blockers: ReplayBlocker[] = [];
  const c: Completeness = op.completeness;
  if (c === "incomplete" || c === "truncated" || c === "malformed") blockers.push("incomplete");
  if (c === "unmatched") blockers.push("continuation_only");
  if (c === "unsupported") blockers.push("unsupported_tool");
  if (blockers.length) return { replayable: false, blockers };
  switch (op.kind) {
    case "write":
    case "edit":
      if (op.request && !("sha256" in op.request || "inline" in op.request)) {
        blockers.push("missing_payload");
      }
      return { replayable: blockers.length === 0, blockers };
    case "exec":
      if (op.request && !("sha256" in op.request || "inline" in op.request)) {
        blockers.push("missing_payload");
      }
      if (blockers.length) return { replayable: false, blockers };
      return { replayable: true, blockers: ["needs_confirmation"] };
    case "web":
    case "mcp":
      blockers.push("out_of_scope");
      return { replayable: false, blockers };
    case "task":
    case "other":
      blockers.push("unsupported_tool");
      return { replayable: false, blockers };
    default:
      return { replayable: false, blockers };
  }
}

/** An operation as an importer builds it: its effect and replay attributes are derived. */
export type OperationDraft = Omit<Operation, "effect" | "replay">;

/**
 * Completes a draft in place and returns it: the effect follows from the kind, replay from
 * kind, completeness and request; fields left undefined are dropped.
 */
export function finishOperation(draft: OperationDraft | Operation): Operation {
  const op = draft as Operation;
  for (const k in op) if (op[k as keyof Operation] === undefined) delete op[k as keyof Operation];
  op.effect = effectOf(op.kind);
  op.replay = replayAttributes(op);
  return op;
}
