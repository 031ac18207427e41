/**
 * The replay plan: the executable steps of a canonical session (file writes, edits, deletes,
 * shell commands) in timeline order, each naming the reasoning that preceded it, its target
 * mapped into the sandbox, and its blockers. Reads canonical operations only: kind, effect,
 * target, completeness, replay attributes, and the request payload's fields. Texts a step
 * shows or applies (its change, its recorded output, its reasoning) stay in the store or the
 * export, named by reference, and are read when the step is previewed or run.
 */
import { normalizePath, relativeInside } from "../git/mod.ts";
import {
  type CanonicalSession,
  COMMAND_KEYS,
  FILE_KEYS,
  FOLDER_KEYS,
  type Operation,
  parseToolInput,
  type PayloadRef,
  type ReplayBlocker,
  type TimelineEntry,
} from "../model/mod.ts";
import { parsePatch, type PatchSection, type Replacement } from "./edits.ts";

export type StepKind = "write" | "edit" | "delete" | "exec";

export type FileAction =
  | { type: "write"; content: string }
  | { type: "replace"; edits: Replacement[] }
  | { type: "patch"; section: PatchSection }
  | { type: "delete" };

/**
 * A thinking or reply step before a plan step: the operation whose text it is, read when it is
 * shown ({@link reasoningTexts}). A 35,342-step session's plan held the opening 4,000
 * characters of each: 11 Mi characters, 13.6 MB of replay view where the UI shows one step's.
 */
export interface Reasoning {
  kind: "thinking" | "reply";
  op: string;
}

/** A reasoning step as shown: its kind and the opening of its text. */
export interface ReasoningText {
  kind: Reasoning["kind"];
  text: string;
}

/**
 * A step's reasoning as shown: each text's opening {@link REASONING_CHARS} characters, read by
 * `text` (an operation's own text, at most `maxChars` of it: the store's `operationText`, which
 * reads a pasted prompt's megabytes only as far as that); one that cannot be read is left out.
 */
export function reasoningTexts(
  step: Pick<PlanStep, "reasoning">,
  text: (op: string, maxChars: number) => string | null,
): ReasoningText[] {
  return step.reasoning.flatMap((r) => {
    const t = text(r.op, REASONING_CHARS);
    return t?.trim() ? [{ kind: r.kind, text: t.slice(0, REASONING_CHARS) }] : [];
  });
}

export interface PlanStep {
  /** Position on the session's timeline (the same `seq` the session view shows). */
  seq: number;
  op: string;
  connection: string;
  kind: StepKind;
  tool?: string;
  /** What the step touches, as the agent wrote it: a path, or the command. */
  target: string | null;
  /** For file steps in scope: the path inside the sandbox (relative to its root). */
  path?: string;
  /** For a patch that moves the file: where it goes (inside the sandbox). */
  moveTo?: string;
  /**
   * For file steps: the change the plan found, its text read again from `input` when the step
   * is previewed or applied ({@link fileAction}): the bench's 35,342-step session's plan held 8
   * Mi characters of written and replaced text.
   */
  action?: FileAction["type"];
  /** For file steps: the call's recorded input (its request), whose fields are the change. */
  input?: PayloadRef;
  /** For shell steps: the command (a string for a shell, an array for an argument vector). */
  command?: string | string[];
  /** For shell steps: the folder it ran in, relative to the project root ("" for the root). */
  workdir?: string;
  /** Thinking and replies between the previous step of this connection and this one. */
  reasoning: Reasoning[];
  /**
   * What the recording says happened: whether it failed, and its recorded result, read when the
   * step runs (`ReplayDeps.output`): a 35,000-step session's plan held with every command's
   * output was 54 MiB of heap, 26 without.
   */
  recorded: { is_error: boolean | null; output: PayloadRef | null };
  replayable: boolean;
  blockers: ReplayBlocker[];
  /** Why the step is blocked, in a sentence, when it is. */
  detail?: string;
}

export interface ReplayPlan {
  session: string;
  /** The project folder the session recorded (absolute, normalised), or null. */
  project: string | null;
  steps: PlanStep[];
}

/** Reads a payload's text; null when it is missing, redacted or fails its hash check. */
export type PayloadText = (ref: PayloadRef | undefined) => string | null;

/** Characters of each prompt, reply or thinking a step's reasoning shows, at most. */
export const REASONING_CHARS = 4000;

/**
 * Characters of each thinking or reply a plan reads (`sessionParts`' `textChars`): enough to
 * know it is not blank, as its text is read again when it is shown. With
 * {@link REASONING_CHARS} the bench's 35,342-step session's plan read 11 Mi characters of
 * them, and opening its replay peaked at 195 MiB against 189-192.
 */
export const PLAN_TEXT_CHARS = 256;

const BLOCKER_TEXT: Record<ReplayBlocker, string> = {
  incomplete: "the call has no complete recorded result (the log ended or broke before it did)",
  continuation_only: "only its result was recorded; the call itself is not in the log",
  out_of_scope: "its target is outside the project",
  needs_confirmation: "a shell command runs only when confirmed, under bubblewrap",
  missing_payload: "its recorded input is not available",
  unsupported_tool: "Chronicle cannot replay this tool",
};

/** A sentence for a list of blockers (needs_confirmation alone does not block). */
export function blockerDetail(blockers: ReplayBlocker[], extra?: string): string | undefined {
  const hard = blockers.filter((b) => b !== "needs_confirmation");
  if (!hard.length && !extra) return undefined;
  const parts = hard.map((b) => `${b}: ${BLOCKER_TEXT[b]}`);
  return extra
    ? [extra, ...parts.filter((p) => !p.startsWith("out_of_scope"))].join("; ")
    : parts.join("; ");
}

type Json = Record<string, unknown>;

function str(o: Json, ...keys: string[]): string | undefined {
  for (const k of keys) if (typeof o[k] === "string") return o[k] as string;
  return undefined;
}

const CONTENT_KEYS = ["content", "contents", "file_text", "text"];
const DELETE_TOOLS = new Set(["delete_file", "delete", "deletefile", "remove_file"]);

/** The patch text of a request: the raw envelope, or a JSON field holding it. */
function patchText(input: unknown): string | undefined {
  if (typeof input === "string") return input.includes("*** Begin Patch") ? input : undefined;
  if (input && typeof input === "object" && !Array.isArray(input)) {
    for (const v of Object.values(input as Json)) {
      if (typeof v === "string" && v.includes("*** Begin Patch")) return v;
    }
  }
  return undefined;
}

function replacementsOf(o: Json): Replacement[] | undefined {
  const one = (e: Json): Replacement | undefined => {
    const old = str(e, "old_string", "oldString", "old_str");
    const nw = str(e, "new_string", "newString", "new_str");
    if (old === undefined || nw === undefined) return undefined;
    const expected = typeof e.expected_replacements === "number" ? e.expected_replacements : 1;
    return { old, new: nw, all: e.replace_all === true || e.replaceAll === true || expected > 1 };
  };
  if (Array.isArray(o.edits)) {
    const list = (o.edits as Json[]).map((e) => (e && typeof e === "object" ? one(e) : undefined));
    return list.every((e) => e) ? list as Replacement[] : undefined;
  }
  const e = one(o);
  return e ? [e] : undefined;
}

interface Mapped {
  path?: string;
  outside?: string;
}

/** Maps a recorded path into the sandbox: project-absolute or relative paths only. */
export function mapPath(project: string | null, target: string, workdir = ""): Mapped {
  if (target.includes("\0")) return { outside: "the path holds a NUL byte" };
  let rel: string;
  if (target.startsWith("/")) {
    if (!project) return { outside: `${target} is absolute and the session recorded no project` };
    try {
      rel = relativeInside(project, target, "project");
    } catch {
      return { outside: `${target} is outside the project ${project}` };
    }
  } else {
    const joined = normalizePath(workdir ? `${workdir}/${target}` : target);
    if (joined === ".." || joined.startsWith("../")) {
      return { outside: `${target} leaves the project${project ? ` ${project}` : ""}` };
    }
    rel = joined === "." ? "" : joined;
  }
  if (!rel) return { outside: `${target} is the project folder itself, not a file` };
  if (rel === ".git" || rel.startsWith(".git/")) {
    return { outside: `${target} is inside the repository's .git folder` };
  }
  return { path: rel };
}

/** Maps a shell step's working folder into the sandbox ("" is the project root). */
function mapDir(project: string | null, dir: string): Mapped {
  if (!dir) return { path: "" };
  if (dir.startsWith("/")) {
    if (!project) return { outside: `it ran in ${dir} and the session recorded no project` };
    try {
      return { path: relativeInside(project, dir, "project") };
    } catch {
      return { outside: `it ran in ${dir}, outside the project ${project}` };
    }
  }
  const n = normalizePath(dir);
  if (n === ".." || n.startsWith("../")) {
    return { outside: `it ran in ${dir}, outside the project` };
  }
  return { path: n === "." ? "" : n };
}

/**
 * A planned file step's change, read from the text of its recorded input (`PlanStep.input`);
 * null when the input no longer holds the change the plan found (unreadable, or changed). A
 * delete's change is the step itself: its input is not needed.
 */
export function fileAction(
  step: Pick<PlanStep, "action" | "target">,
  inputText: string | null,
): FileAction | null {
  if (step.action === "delete") return { type: "delete" };
  if (!step.action || inputText === null) return null;
  return actionOf(step.action, step.target, parseToolInput(inputText));
}

/** The change of type `type` a call's parsed `input` holds, for `target`; null when none. */
function actionOf(
  type: Exclude<FileAction["type"], "delete">,
  target: string | null,
  input: unknown,
): FileAction | null {
  const o = input && typeof input === "object" && !Array.isArray(input) ? input as Json : {};
  if (type === "write") {
    const content = str(o, ...CONTENT_KEYS);
    return content === undefined ? null : { type, content };
  }
  if (type === "replace") {
    const edits = replacementsOf(o);
    return edits ? { type, edits } : null;
  }
  const section = patchSection(patchText(input) ?? "", target);
  return section ? { type, section } : null;
}

/** The section of patch `text` for `target`, or its only section; undefined when none. */
function patchSection(text: string, target: string | null): PatchSection | undefined {
  const sections = parsePatch(text);
  return sections.find((s) => s.path === target) ??
    (sections.length === 1 ? sections[0] : undefined);
}

function fileStep(
  op: Operation,
  input: unknown,
  project: string | null,
): Pick<PlanStep, "kind" | "target" | "path" | "moveTo"> & {
  action?: FileAction;
  problem?: string;
  outside?: string;
} {
  const o = input && typeof input === "object" && !Array.isArray(input) ? input as Json : {};
  let target = op.target ?? str(o, ...FILE_KEYS) ?? null;
  let action: FileAction | undefined;
  let kind: StepKind = op.kind === "write" ? "write" : "edit";
  let problem: string | undefined;
  const patch = patchText(input);
  if (patch !== undefined) {
    const section = patchSection(patch, target);
    if (!section) problem = `the patch has no section for ${target ?? "this operation"}`;
    else {
      target = section.path;
      kind = section.action === "add" ? "write" : section.action === "delete" ? "delete" : "edit";
      action = { type: "patch", section };
    }
  } else if (DELETE_TOOLS.has((op.tool ?? "").toLowerCase())) {
    kind = "delete";
    action = { type: "delete" };
  } else if (op.kind === "write") {
    action = actionOf("write", target, input) ?? undefined;
    if (!action) problem = "the write's input has no content";
  } else {
    action = actionOf("replace", target, input) ?? undefined;
    if (!action) {
      problem = typeof o.code_edit === "string"
        ? "the edit is a sketch the agent's own model applied, not exact text"
        : "the edit's input names no old and new text";
    }
  }
  if (target === null) return { kind, target, problem: problem ?? "the step names no file" };
  const mapped = mapPath(project, target);
  const moved = action?.type === "patch" && action.section.moveTo
    ? mapPath(project, action.section.moveTo)
    : null;
  return {
    kind,
    target,
    path: mapped.path,
    moveTo: moved?.path,
    action,
    problem,
    outside: mapped.outside ?? moved?.outside,
  };
}

function commandOf(input: unknown): { command?: string | string[]; workdir?: string } {
  if (typeof input === "string") return { command: input };
  if (!input || typeof input !== "object") return {};
  const o = input as Json;
  const c = COMMAND_KEYS.map((k) => o[k]).find((v) => v !== undefined);
  const workdir = str(o, "workdir", "cwd", ...FOLDER_KEYS);
  if (typeof c === "string") return { command: c, workdir };
  if (Array.isArray(c) && c.length && c.every((x) => typeof x === "string")) {
    return { command: c as string[], workdir };
  }
  return { workdir };
}

/** Builds the plan of a session. `text` reads payloads (store, or checked artifacts). */
export function buildPlan(session: CanonicalSession, text: PayloadText): ReplayPlan {
  const planning = planner(session, text);
  planning.add(session);
  return planning.done();
}

/**
 * The plan of a session given a part at a time (the store's `sessionParts`, or an export's
 * parts, in timeline order), `turn` awaited after each: the plan {@link buildPlan} makes of the
 * whole session, which is never held, with the session's own fields (its first part without
 * operations or timeline). Null when there was no part.
 */
export async function planInParts(
  parts: Iterable<CanonicalSession> | AsyncIterable<CanonicalSession>,
  text: PayloadText,
  turn?: () => Promise<unknown>,
): Promise<{ head: CanonicalSession; plan: ReplayPlan } | null> {
  let head: CanonicalSession | undefined;
  let planning: ReturnType<typeof planner> | undefined;
  for await (const part of parts) {
    head ??= { ...part, operations: {}, timeline: [] };
    planning ??= planner(head, text);
    planning.add(part);
    await turn?.();
  }
  return head && planning ? { head, plan: planning.done() } : null;
}

/** A plan made a part of the session at a time: the reasoning pending carries across parts. */
function planner(session: CanonicalSession, text: PayloadText) {
  const project = session.session.project.path ? normalizePath(session.session.project.path) : null;
  const steps: PlanStep[] = [];
  const pending = new Map<string, Reasoning[]>();
  return {
    add(part: Pick<CanonicalSession, "timeline" | "operations">): void {
      for (const t of part.timeline) {
        const step = planStep(part.operations[t.op], t, pending, project, text);
        if (step) steps.push(step);
      }
    },
    done: (): ReplayPlan => ({ session: session.session.id, project, steps }),
  };
}

/**
 * What a plan reads an operation as: the reasoning shown before its connection's next step
 * (a thinking or a reply), a file step (a write or an edit), a shell step, or nothing.
 */
export function planRole(op: Operation): "reasoning" | "file" | "exec" | null {
  if (op.kind === "thinking" || op.kind === "reply") return "reasoning";
  if (op.effect === "fs_write" && (op.kind === "write" || op.kind === "edit")) return "file";
  if (op.effect === "process" && op.kind === "exec") return "exec";
  return null;
}

/** The plan step of one operation, or none (reasoning goes to `pending`, for its connection's next step). */
function planStep(
  op: Operation | undefined,
  t: TimelineEntry,
  pending: Map<string, Reasoning[]>,
  project: string | null,
  text: PayloadText,
): PlanStep | undefined {
  if (!op) return;
  const role = planRole(op);
  if (role === "reasoning") {
    if (op.text?.trim()) {
      const list = pending.get(t.connection) ?? [];
      list.push({ kind: op.kind as Reasoning["kind"], op: t.op });
      pending.set(t.connection, list);
    }
    return;
  }
  if (!role) return;
  const isFile = role === "file";
  const isExec = role === "exec";
  const blockers = [...op.replay.blockers];
  let replayable = op.replay.replayable;
  const requestText = text(op.request);
  const input = parseToolInput(requestText);
  const step: PlanStep = {
    seq: t.seq,
    op: t.op,
    connection: t.connection,
    kind: isExec ? "exec" : op.kind === "write" ? "write" : "edit",
    tool: op.tool,
    target: op.target ?? null,
    reasoning: pending.get(t.connection) ?? [],
    recorded: { is_error: op.is_error ?? null, output: op.response ?? null },
    replayable,
    blockers,
  };
  pending.delete(t.connection);
  const block = (b: ReplayBlocker, why?: string) => {
    if (!blockers.includes(b)) blockers.push(b);
    replayable = false;
    if (why) step.detail = why;
  };
  if (op.request && requestText === null) block("missing_payload");
  if (replayable && isFile) {
    const f = fileStep(op, input, project);
    // the change's type only: its text is read again from the input when the step is shown
    Object.assign(step, {
      kind: f.kind,
      target: f.target,
      path: f.path,
      moveTo: f.moveTo,
      action: f.action?.type,
      input: op.request,
    });
    if (f.outside) block("out_of_scope", f.outside);
    else if (f.problem) block("unsupported_tool", f.problem);
  } else if (replayable && isExec) {
    const c = commandOf(input);
    if (c.command === undefined) block("unsupported_tool", "the call names no command");
    else {
      step.command = c.command;
      step.target = typeof c.command === "string" ? c.command : c.command.join(" ");
      const w = mapDir(project, c.workdir ?? "");
      if (w.outside) block("out_of_scope", w.outside);
      else step.workdir = w.path;
    }
    if (!blockers.includes("needs_confirmation") && replayable) {
      blockers.push("needs_confirmation");
    }
  }
  step.replayable = replayable;
  if (!replayable) step.detail = step.detail ?? blockerDetail(blockers);
  else if (isFile && !step.path) {
    step.replayable = false;
    step.detail = "the step names no file";
  }
  if (!step.replayable && isExec && step.target === null) {
    step.target = op.summary ?? null;
  }
  return step;
}
