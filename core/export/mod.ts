/**
 * @module
 * Sessions as documents people read and send: a redacted export document (prompts, replies,
 * optional thinking, tool calls with inputs, truncated results and diffs, sub-agents nested,
 * errors marked, a header with agent, model, project, times and tokens), rendered as Markdown
 * or as one self-contained HTML page, and frozen by shares. Redaction is core/security's, run
 * on every text the document shows; the renderers escape everything.
 */
import { AGENTS } from "../model/agents.ts";
import type { CanonicalSession } from "../model/types.ts";
import type { OperationRecord, SessionOutline } from "../model/delta.ts";
import type { CustomRule } from "../security/mod.ts";
import {
  buildDocument,
  buildDocumentInTurns,
  type BuildOptions,
  type ExportDocument,
  type ExportLimits,
  type SteppedDocument,
} from "./document.ts";
import { htmlChunks, renderHtml } from "./html.ts";
import { markdownChunks, renderMarkdown } from "./markdown.ts";
import { createRedactor } from "./redactor.ts";

export * from "./document.ts";
export { textStream } from "../text_stream.ts";
export * from "./redactor.ts";
export * from "./tool_view.ts";
export { esc, EXPORT_CSP, htmlChunks, markdownHtml, renderHtml } from "./html.ts";
export type { HtmlOptions } from "./html.ts";
export { code, fence, hasRawHtml, plain, prose, renderMarkdown } from "./markdown.ts";

export type DocumentFormat = "md" | "html";
export const DOCUMENT_FORMATS: readonly DocumentFormat[] = ["md", "html"];

/** Display names of the agents, by source id. */
export const AGENT_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  AGENTS.map((a) => [a.id, a.name]),
);

export interface DocumentOptions {
  /** Redact (default true). False is for an explicit `--no-redact`. */
  redact?: boolean;
  /** The user's custom rules, in claim order. */
  rules?: readonly CustomRule[];
  /** Include thinking (default false). */
  thinking?: boolean;
  limits?: Partial<ExportLimits>;
  /**
   * The user's name for the session, the document's title when set (`documentOf` reads it
   * from the store); the canonical session's own title is left as its agent recorded it.
   */
  title?: string | null;
  /**
   * Keep no step: the header and the redaction summary only (every text redacted as the
   * document would redact it), for the preview before a share or export. Default false.
   */
  summaryOnly?: boolean;
  now?: () => Date;
}

/** The redacted export document of a session, with the agent names filled in. */
export function sessionDocument(
  session: CanonicalSession,
  readPayload: (sha256: string) => string | null,
  options: DocumentOptions = {},
): ExportDocument {
  return buildDocument(session, readPayload, buildOptions(options));
}

function buildOptions(options: DocumentOptions): BuildOptions {
  return {
    redactor: createRedactor({ enabled: options.redact ?? true, rules: options.rules }),
    thinking: options.thinking,
    limits: options.limits,
    agentNames: AGENT_NAMES,
    title: options.title,
    now: options.now,
    summaryOnly: options.summaryOnly,
  };
}

/** Where sessions come from: the store, or anything with the same reads. */
export interface SessionSource {
  loadSession(id: string): CanonicalSession | null;
  payload(sha256: string): Uint8Array | null;
  /** The session's summary: the user's name for it titles the document. */
  getSession?(id: string): { user_title: string | null } | null;
}

const decoder = new TextDecoder();

/** The export document of a stored session; null when there is no such session. */
export function documentOf(
  source: SessionSource,
  id: string,
  options: DocumentOptions = {},
): ExportDocument | null {
  const session = source.loadSession(id);
  if (!session) return null;
  return sessionDocument(session, textReader(source), {
    ...options,
    title: options.title ?? source.getSession?.(id)?.user_title,
  });
}

/**
 * {@link documentOf} a page at a time, awaiting `turn` between pages of the session's load and
 * of the document (a server's turn of the event loop: requests go between, see core/paged.ts's
 * `pagedTurns`).
 */
export async function documentInTurns(
  source: SessionSource & {
    sessionOutline(id: string): SessionOutline | null;
    operationPages(id: string): Iterable<OperationRecord[]>;
  },
  id: string,
  options: DocumentOptions & { turn: () => Promise<unknown> },
): Promise<SteppedDocument | null> {
  // never the session whole: its outline, then its steps a page at a time as they are drawn
  const outline = source.sessionOutline(id);
  if (!outline) return null;
  const session = { outline, pages: source.operationPages(id) };
  return await buildDocumentInTurns(session, textReader(source), {
    ...buildOptions({ ...options, title: options.title ?? source.getSession?.(id)?.user_title }),
    turn: options.turn,
  });
}

const textReader = (source: SessionSource) => (sha: string): string | null => {
  const bytes = source.payload(sha);
  return bytes ? decoder.decode(bytes) : null;
};

/** A document as the text of a file in one of the formats. */
export function renderDocument(doc: SteppedDocument, format: DocumentFormat): string {
  return format === "md" ? renderMarkdown(doc) : renderHtml(doc);
}

/** {@link renderDocument}'s text in pieces, a step each: for a download streamed as rendered. */
export function documentChunks(doc: SteppedDocument, format: DocumentFormat): Iterable<string> {
  return format === "md" ? markdownChunks(doc) : htmlChunks(doc);
}

/** The file extension of a format. */
export function extensionOf(format: DocumentFormat): string {
  return format === "md" ? ".md" : ".html";
}
