/**
 * @module
 * Share links: a session's redacted export document frozen at creation behind a random
 * 32-byte URL-safe token, of which only the SHA-256 is kept. Opening a link renders the frozen
 * document as one escaped, script-free HTML page; an unknown, expired or revoked token gets the
 * same 404 page, after the same work. Shares are served on loopback only: exposing one is the
 * user's deliberate choice (a reverse proxy or tunnel they run), never Chronicle's.
 */
import { joinBytes } from "../bytes.ts";
import { jsonLines, jsonLinesPacker, MEMBER_CHARS } from "../json_lines.ts";
import { collectEvery, releaseGarbage } from "../gc.ts";
import {
  type DocStep,
  type ExportDocument,
  htmlChunks,
  renderHtml,
  type SteppedDocument,
} from "../export/mod.ts";
import { sha256Hex } from "../model/mod.ts";
import { ChronicleError } from "../model/errors.ts";
import type { NewShareRow, ShareRow } from "../store/shares.ts";

export type { ShareRow };

/** Bytes of randomness in a share token. */
export const SHARE_TOKEN_BYTES = 32;
/** Characters of a token: base64url of 32 bytes, unpadded. */
export const SHARE_TOKEN_LENGTH = 43;
export const DEFAULT_SHARE_DAYS = 7;
export const MAX_SHARE_DAYS = 365;
/** The path a share is served under; the token follows. */
export const SHARE_PATH = "/share/";

/** What shares need from the store (core/store's `ShareTable`). */
export interface ShareRecords {
  insert(row: NewShareRow): void;
  list(options?: { sessionId?: string }): ShareRow[];
  get(id: string): ShareRow | null;
  revoke(id: string, at: string): ShareRow | null;
  open(tokenSha256: string, now: string): Uint8Array | null;
  purgeExpired(now: string): void;
}

export interface ShareDeps {
  records: ShareRecords;
  now?: () => Date;
  /** Fills a buffer with random bytes. Default `crypto.getRandomValues`. */
  random?: (bytes: Uint8Array) => Uint8Array;
}

/** A share as the user sees it right after making it: the only time its token is shown. */
export interface CreatedShare {
  share: ShareRow;
  token: string;
  /** `/share/<token>`: the path on the Chronicle server. */
  path: string;
}

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The SHA-256 (hex) a token is stored as. */
export function tokenHash(token: string): string {
  return sha256Hex(token);
}

/** Checks the number of days a share lives; throws a `usage` error otherwise. */
export function validDays(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > MAX_SHARE_DAYS) {
    throw new ChronicleError(
      "usage",
      `A share lives 1 to ${MAX_SHARE_DAYS} whole days, not ${JSON.stringify(days)}`,
    );
  }
  return days;
}

/**
 * Freezes a redacted document into a new share living `days` days. The document must be the
 * redacted one: a share of an unredacted document is refused.
 */
export function createShare(
  deps: ShareDeps,
  doc: SteppedDocument,
  options: { days?: number } = {},
): CreatedShare {
  if (!doc.redaction.enabled) {
    throw new ChronicleError("usage", "A share is always redacted: its document was not");
  }
  const days = validDays(options.days ?? DEFAULT_SHARE_DAYS);
  const random = deps.random ?? ((b: Uint8Array) => crypto.getRandomValues(b));
  const token = base64url(random(new Uint8Array(SHARE_TOKEN_BYTES)));
  const id = "shr_" + Array.from(random(new Uint8Array(6)), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  const now = deps.now?.() ?? new Date();
  // The masked samples served the preview; the frozen copy keeps only the counts.
  const frozen: SteppedDocument = {
    ...doc,
    redaction: { ...doc.redaction, samples: [], samples_capped: false },
  };
  const row: NewShareRow = {
    id,
    token_sha256: tokenHash(token),
    session_id: doc.session.id,
    title: doc.session.title,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + days * 86_400_000).toISOString(),
    findings: doc.redaction.total,
    document: packDocument(frozen),
  };
  deps.records.purgeExpired(row.created_at);
  deps.records.insert(row);
  return { share: deps.records.get(id)!, token, path: SHARE_PATH + token };
}

/**
 * Every share (newest first, optionally of one session). Shares that expired lose their
 * frozen copy here: what was shared does not outlive its link.
 */
export function listShares(deps: ShareDeps, options: { sessionId?: string } = {}): ShareRow[] {
  deps.records.purgeExpired((deps.now?.() ?? new Date()).toISOString());
  return deps.records.list(options);
}

/** Revokes a share by id (the link stops working at once); throws `not_found` when unknown. */
export function revokeShare(deps: ShareDeps, id: string): ShareRow {
  const row = deps.records.revoke(id, (deps.now?.() ?? new Date()).toISOString());
  if (!row) throw new ChronicleError("not_found", `No share "${id.slice(0, 100)}"`);
  return row;
}

/** The state of a share at a time: live, expired or revoked. */
export function shareState(row: ShareRow, now: Date = new Date()): "live" | "expired" | "revoked" {
  if (row.revoked_at) return "revoked";
  return row.expires_at > now.toISOString() ? "live" : "expired";
}

/** The longest token looked up; anything longer is hashed from this prefix, which cannot match. */
const MAX_TOKEN_CHARS = 256;

/**
 * How a frozen document is kept: gzip of JSON lines (core/json_lines.ts), the document without
 * its steps first, then each top-level step (with its threads) on a line of its own. A share of
 * a 35,000-step session is opened and served a step at a time, never parsed or rendered whole.
 * Shares made before this are one JSON document on one line, read as they are.
 */
function packDocument(doc: SteppedDocument): Uint8Array {
  // the pages building the document emptied, given back before it is packed (making the bench's
  // 35,342-step session's share peaked at 266-273 MiB without, 214-218 with)
  releaseGarbage();
  const { steps, ...head } = doc;
  const packer = jsonLinesPacker();
  const members: Uint8Array[] = [];
  const keep = (member: Uint8Array | null) => member && members.push(member);
  keep(packer.add(head));
  // each member's lines are garbage once packed (a 35,000-step session's are 50 Mi characters)
  const packed = collectEvery(16 << 20);
  for (const step of steps) {
    if (keep(packer.add(step))) packed(MEMBER_CHARS);
  }
  keep(packer.flush());
  return joinBytes(members);
}

/** A frozen document as it is read back: its head, and its steps one at a time. */
export interface OpenedShare {
  head: Omit<ExportDocument, "steps">;
  steps: Iterable<DocStep>;
}

/** Reads a frozen document: its head at once, its steps as they are asked for. */
function unpackDocument(bytes: Uint8Array): OpenedShare {
  const lines = jsonLines(bytes);
  const first = lines.values().next().value as ExportDocument;
  if (Array.isArray(first.steps)) {
    const { steps, ...head } = first; // a share made before the lines
    return { head, steps };
  }
  return {
    head: first,
    steps: { [Symbol.iterator]: () => lines.values(1) as Generator<DocStep> },
  };
}

/**
 * The frozen document behind a token, counting the view; null for an unknown, expired or
 * revoked token, and for a malformed one, after the same hash and lookup. Its steps are read
 * as they are asked for.
 */
export function openSharedDocument(deps: ShareDeps, token: string): OpenedShare | null {
  const hash = tokenHash(token.slice(0, MAX_TOKEN_CHARS));
  const bytes = deps.records.open(hash, (deps.now?.() ?? new Date()).toISOString());
  return bytes ? unpackDocument(bytes) : null;
}

/** {@link openSharedDocument}, the document whole. */
export function openShare(deps: ShareDeps, token: string): ExportDocument | null {
  const opened = openSharedDocument(deps, token);
  return opened && { ...opened.head, steps: [...opened.steps] };
}

const BANNER = "Shared from Chronicle. Redacted when the link was made; the link expires or can " +
  "be revoked by its owner.";

/** A live share as its HTML page. */
export function sharePage(doc: ExportDocument): string {
  return renderHtml(doc, { banner: BANNER });
}

/** A live share's HTML page in pieces, a step each, as its steps are read (`sharePage`'s bytes). */
export function sharePageChunks(opened: OpenedShare): Iterable<string> {
  return htmlChunks({ ...opened.head, steps: opened.steps }, { banner: BANNER });
}

/** The one page every refused token gets: the same bytes whatever the reason. */
export const SHARE_NOT_FOUND_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found</title></head>
<body><h1>Not found</h1><p>This share link does not exist, has expired or was revoked.</p></body>
</html>
`;
