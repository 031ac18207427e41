/**
 * Scanning: rules claim spans of a text in a fixed order, findings are sorted by position and
 * the redacted copy is rebuilt by splicing. `scanSession` applies the same to every message,
 * tool input and tool result of a canonical session and returns redacted copies; the original
 * is never modified.
 */
import type { CanonicalSession, OperationKind, PayloadRef } from "../model/types.ts";
import type { Deadline } from "./budget.ts";
import type { CompiledGlob } from "./glob_match.ts";
import { compileGlob, type CustomRule, forEachGlobMatch, isPathRule } from "./glob_rule.ts";
import { BUILTIN_RULES, type BuiltinRuleName, detectBuiltins, type Severity } from "./rules/mod.ts";

/** One redacted span. Offsets are UTF-16 indexes into the scanned text; lines are 1-based. */
export interface Finding {
  /** Built-in rule name (`api_key` ...) or the custom rule's name. */
  rule: string;
  custom: boolean;
  /** The custom rule's id. */
  rule_id?: string;
  severity: Severity;
  /** What the rule recognised: `openai`, `aws`, `jwt`, `postgres` ... */
  detail?: string;
  start: number;
  end: number;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  /** The text that replaces the span in the redacted copy; never contains the secret. */
  replacement: string;
}

export interface ScanResult {
  findings: Finding[];
  /** The text with every finding replaced; the same string when there is none. */
  redacted: string;
}

export interface ScanOptions {
  /** Custom rules in claim order; disabled ones are ignored. Default: none. */
  rules?: readonly CustomRule[];
  /** The built-in rules to run. Default: all seven. */
  builtins?: readonly BuiltinRuleName[];
  /**
   * Checked while custom rules match and between rules; past it the scan throws
   * `ChronicleError("timeout")`. Default: none (the built-ins are linear and fast).
   */
  deadline?: Deadline;
}

/** The replacement a custom redact rule leaves. */
export const CUSTOM_REPLACEMENT = "****";

interface CompiledRule {
  rule: CustomRule;
  glob: CompiledGlob;
}

interface CompiledRuleSet {
  allow: CompiledRule[];
  redact: CompiledRule[];
}

const EMPTY_SET: CompiledRuleSet = { allow: [], redact: [] };
const compiledCache = new WeakMap<readonly CustomRule[], CompiledRuleSet>();

function compileRuleSet(rules: readonly CustomRule[] | undefined): CompiledRuleSet {
  if (!rules || rules.length === 0) return EMPTY_SET;
  let set = compiledCache.get(rules);
  if (!set) {
    set = { allow: [], redact: [] };
    for (const rule of rules) {
      if (!rule.enabled || isPathRule(rule)) continue;
      (rule.action === "allow" ? set.allow : set.redact).push({
        rule,
        glob: compileGlob(rule.pattern),
      });
    }
    compiledCache.set(rules, set);
  }
  return set;
}

/** Disjoint spans, sorted. */
interface Spans {
  starts: number[];
  ends: number[];
}

/** Sorts spans and merges those that overlap or touch. */
function mergeSpans(spans: [number, number][]): Spans {
  spans.sort((a, b) => a[0] - b[0]);
  const out: Spans = { starts: [], ends: [] };
  for (const [s, e] of spans) {
    const n = out.ends.length;
    if (n && s <= out.ends[n - 1]) out.ends[n - 1] = Math.max(out.ends[n - 1], e);
    else {
      out.starts.push(s);
      out.ends.push(e);
    }
  }
  return out;
}

/** Merges two sorted lists of disjoint spans that do not overlap each other. */
function unionSpans(a: Spans, b: Spans): Spans {
  if (!b.starts.length) return a;
  if (!a.starts.length) return b;
  const out: Spans = { starts: [], ends: [] };
  let i = 0;
  let j = 0;
  while (i < a.starts.length || j < b.starts.length) {
    if (j >= b.starts.length || (i < a.starts.length && a.starts[i] < b.starts[j])) {
      out.starts.push(a.starts[i]);
      out.ends.push(a.ends[i++]);
    } else {
      out.starts.push(b.starts[j]);
      out.ends.push(b.ends[j++]);
    }
  }
  return out;
}

/** A proposed span, before resolution. */
interface Proposal {
  start: number;
  end: number;
  replacement: string;
  detail?: string;
  verify?: () => boolean;
}

/**
 * One rule's claims in a single sweep: proposals (sorted by start) that overlap no allow span,
 * no earlier claim and no earlier proposal of the same rule, and pass their check.
 */
function claimAll(proposals: readonly Proposal[], claimed: Spans, allow: Spans): Proposal[] {
  const won: Proposal[] = [];
  let j = 0;
  let k = 0;
  let lastEnd = -1;
  for (const p of proposals) {
    if (p.end <= p.start || p.start < lastEnd) continue;
    while (j < claimed.ends.length && claimed.ends[j] <= p.start) j++;
    if (j < claimed.starts.length && claimed.starts[j] < p.end) continue;
    while (k < allow.ends.length && allow.ends[k] <= p.start) k++;
    if (k < allow.starts.length && allow.starts[k] < p.end) continue;
    if (p.verify && !p.verify()) continue;
    won.push(p);
    lastEnd = p.end;
  }
  return won;
}

type Draft = Omit<Finding, "line" | "column" | "end_line" | "end_column">;

/**
 * Scans one text. Resolution is fixed: spans matched by allow rules are protected first and
 * never redacted; custom redact rules claim before the built-ins; on overlap the earlier claim
 * wins. The same input and rules always give the same findings.
 */
export function scanText(text: string, options: ScanOptions = {}): ScanResult {
  const set = compileRuleSet(options.rules);
  const allowed: [number, number][] = [];
  const deadline = options.deadline;
  for (const { glob } of set.allow) {
    forEachGlobMatch(glob, text, (s, e) => void allowed.push([s, e]), deadline);
  }
  const allow = mergeSpans(allowed);
  let claimed: Spans = { starts: [], ends: [] };
  const drafts: Draft[] = [];

  const claim = (
    proposals: readonly Proposal[],
    base: Omit<Draft, "start" | "end" | "replacement" | "detail">,
  ) => {
    const won = claimAll(proposals, claimed, allow);
    if (!won.length) return;
    claimed = unionSpans(claimed, { starts: won.map((p) => p.start), ends: won.map((p) => p.end) });
    for (const p of won) {
      const draft: Draft = { ...base, start: p.start, end: p.end, replacement: p.replacement };
      if (p.detail) draft.detail = p.detail;
      drafts.push(draft);
    }
  };

  for (const { rule, glob } of set.redact) {
    const proposals: Proposal[] = [];
    forEachGlobMatch(glob, text, (start, end) => {
      proposals.push({ start, end, replacement: CUSTOM_REPLACEMENT });
    }, deadline);
    claim(proposals, { rule: rule.name, custom: true, rule_id: rule.id, severity: "high" });
  }
  deadline?.check();
  const only = options.builtins ? new Set(options.builtins) : null;
  const candidates = detectBuiltins(text);
  for (const rule of BUILTIN_RULES) {
    if (only && !only.has(rule.name)) continue;
    const proposals = candidates[rule.name].sort((a, b) => a.start - b.start);
    claim(proposals, { rule: rule.name, custom: false, severity: rule.severity });
  }
  if (drafts.length === 0) return { findings: [], redacted: text };

  drafts.sort((a, b) => a.start - b.start);
  const findings = locate(text, drafts);
  const parts: string[] = [];
  let pos = 0;
  for (const f of findings) {
    parts.push(text.slice(pos, f.start), f.replacement);
    pos = f.end;
  }
  parts.push(text.slice(pos));
  return { findings, redacted: parts.join("") };
}

/** Adds 1-based line and column numbers to sorted, disjoint drafts in one pass. */
function locate(text: string, drafts: Draft[]): Finding[] {
  let line = 1;
  let lineStart = 0;
  let nextBreak = text.indexOf("\n");
  const advance = (pos: number) => {
    while (nextBreak >= 0 && nextBreak < pos) {
      line++;
      lineStart = nextBreak + 1;
      nextBreak = text.indexOf("\n", lineStart);
    }
  };
  return drafts.map((d) => {
    advance(d.start);
    const at = { line, column: d.start - lineStart + 1 };
    advance(d.end - 1);
    return {
      ...d,
      line: at.line,
      column: at.column,
      end_line: line,
      end_column: d.end - lineStart + 1,
    };
  });
}

/**
 * The line of `redacted` that holds `finding` (line numbers survive redaction: replacements
 * never contain line breaks), cut to `width` characters around it. Safe to show and to log.
 */
export function maskedSample(redacted: string, finding: Finding, width = 160): string {
  let start = 0;
  for (let l = 1; l < finding.line; l++) {
    const nl = redacted.indexOf("\n", start);
    if (nl < 0) break;
    start = nl + 1;
  }
  const nl = redacted.indexOf("\n", start);
  const line = redacted.slice(start, nl < 0 ? redacted.length : nl);
  const from = Math.max(0, finding.column - 1 - Math.floor(width / 3));
  let sample = line.slice(from, from + width).trim();
  if (from > 0) sample = "…" + sample;
  if (from + width < line.length) sample += "…";
  return sample;
}

/** Counts findings per rule name. */
export function histogramOf(findings: Iterable<Finding>, into: Record<string, number> = {}) {
  for (const f of findings) into[f.rule] = (into[f.rule] ?? 0) + 1;
  return into;
}

// ---------------------------------------------------------------------------------------------
// sessions

/** Supplies the text of a payload reference; null when it cannot be read. */
export type ReadPayload = (ref: PayloadRef) => string | null;

export interface SessionScanOptions extends ScanOptions {
  readPayload: ReadPayload;
}

export type ScannedField =
  | "text"
  | "target"
  | "request"
  | "response"
  | "extensions"
  | "title"
  | "last_prompt";

/** The findings in one field of one operation (or of the session itself, `op: ""`). */
export interface MessageFindings {
  op: string;
  kind?: OperationKind;
  tool?: string;
  field: ScannedField;
  /** For `extensions`: the JSON path of the string that was scanned. */
  path?: string;
  findings: Finding[];
  /** The redacted text of this field. */
  redacted: string;
}

export interface SessionScan {
  session_id: string;
  /** Fields with at least one finding, in timeline order. */
  messages: MessageFindings[];
  histogram: Record<string, number>;
  total: number;
  /** Payloads `readPayload` could not supply; the redacted copy drops them. */
  unreadable: number;
  /** A deep copy of the session with every finding replaced. */
  redacted: CanonicalSession;
}

function payloadText(ref: PayloadRef | undefined, read: ReadPayload): string | null | undefined {
  if (!ref) return undefined;
  if ("inline" in ref) return ref.inline;
  if ("sha256" in ref) return read(ref);
  return undefined; // already redacted or missing: nothing to scan
}

/** Walks a JSON value and redacts every string in it; returns the copy. */
function redactDeep(
  value: unknown,
  path: string,
  scan: (text: string, path: string) => string,
): unknown {
  if (typeof value === "string") return scan(value, path);
  if (Array.isArray(value)) return value.map((v, i) => redactDeep(v, `${path}[${i}]`, scan));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, `${path}.${k}`, scan);
    return out;
  }
  return value;
}

/**
 * Scans every message text, tool input and tool result of a session (plus targets, titles
 * and extension strings, which repeat the same content) and returns per-field findings, a
 * per-rule histogram and a redacted deep copy. Scanned payloads with findings become inline
 * redacted text in the copy; payloads that cannot be read become `{ redacted: true }` so the
 * copy can never leak them.
 */
export function scanSession(session: CanonicalSession, options: SessionScanOptions): SessionScan {
  const copy = structuredClone(session);
  return { ...walkSession(copy, options, true), redacted: copy };
}

/**
 * {@link scanSession}'s findings without the redacted copy: nothing is copied or changed (a
 * scan that only reports, of a session of tens of thousands of steps).
 */
export function sessionFindings(
  session: CanonicalSession,
  options: SessionScanOptions,
): Omit<SessionScan, "redacted"> {
  return walkSession(session, options, false);
}

/** Scans `session`, and when `write` (it is a copy), replaces each finding in it. */
function walkSession(
  session: CanonicalSession,
  options: SessionScanOptions,
  write: boolean,
): Omit<SessionScan, "redacted"> {
  const messages: MessageFindings[] = [];
  const histogram: Record<string, number> = {};
  let total = 0;
  let unreadable = 0;

  const scanField = (
    text: string,
    at: Omit<MessageFindings, "findings" | "redacted">,
  ): string => {
    const r = scanText(text, options);
    if (r.findings.length > 0) {
      messages.push({ ...at, findings: r.findings, redacted: r.redacted });
      histogramOf(r.findings, histogram);
      total += r.findings.length;
    }
    return r.redacted;
  };

  const info = session.session;
  if (info.title) {
    const title = scanField(info.title, { op: "", field: "title" });
    if (write) info.title = title;
  }
  if (info.last_prompt) {
    const last = scanField(info.last_prompt, { op: "", field: "last_prompt" });
    if (write) info.last_prompt = last;
  }

  const order = session.timeline.map((t) => t.op);
  const seen = new Set(order);
  for (const id of Object.keys(session.operations).sort()) if (!seen.has(id)) order.push(id);
  const visited = new Set<string>();
  for (const id of order) {
    const op = session.operations[id];
    if (!op || visited.has(id)) continue;
    visited.add(id);
    const where = { op: id, kind: op.kind, ...(op.tool ? { tool: op.tool } : {}) };
    if (op.text) {
      const text = scanField(op.text, { ...where, field: "text" });
      if (write) op.text = text;
    }
    if (op.target) {
      const target = scanField(op.target, { ...where, field: "target" });
      if (write) op.target = target;
    }
    for (const field of ["request", "response"] as const) {
      const text = payloadText(op[field], options.readPayload);
      if (text === undefined) continue;
      if (text === null) {
        unreadable++;
        const ref = op[field] as { size?: number };
        if (write) {
          op[field] = { redacted: true, ...(ref.size !== undefined ? { size: ref.size } : {}) };
        }
        continue;
      }
      const before = total;
      const redacted = scanField(text, { ...where, field });
      if (write && total > before) op[field] = { inline: redacted };
    }
    if (op.extensions) {
      const extensions = redactDeep(
        op.extensions,
        "extensions",
        (text, path) => scanField(text, { ...where, field: "extensions", path }),
      ) as Record<string, unknown>;
      if (write) op.extensions = extensions;
    }
  }
  const extensions = redactDeep(
    session.extensions,
    "extensions",
    (text, path) => scanField(text, { op: "", field: "extensions", path }),
  ) as Record<string, unknown>;

  if (write) session.extensions = extensions;
  return { session_id: session.session.id, messages, histogram, total, unreadable };
}
