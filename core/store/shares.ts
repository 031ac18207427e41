/**
 * Share links in the store (table `shares`, migration 9): each row holds the SHA-256 of its
 * URL token, never the token, and the redacted export document frozen when it was made. A
 * revoked share loses its document at once.
 */
import type { Sql } from "./_sql.ts";

/** A share as lists show it (never its token or its document). */
export interface ShareRow {
  id: string;
  session_id: string;
  title: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  views: number;
  last_viewed_at: string | null;
  /** How many findings the redaction replaced when the share was made. */
  findings: number;
}

export interface NewShareRow extends Omit<ShareRow, "revoked_at" | "views" | "last_viewed_at"> {
  token_sha256: string;
  /** The frozen document, compressed. */
  document: Uint8Array;
}

const ROW_COLS =
  "id, session_id, title, created_at, expires_at, revoked_at, views, last_viewed_at, findings";

function toRow(r: Record<string, unknown>): ShareRow {
  return {
    id: String(r.id),
    session_id: String(r.session_id),
    title: String(r.title),
    created_at: String(r.created_at),
    expires_at: String(r.expires_at),
    revoked_at: r.revoked_at === null ? null : String(r.revoked_at),
    views: Number(r.views),
    last_viewed_at: r.last_viewed_at === null ? null : String(r.last_viewed_at),
    findings: Number(r.findings),
  };
}

/** Typed access to the `shares` table (the store's `shareTable`). */
export class ShareTable {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  #stmt(sql: string) {
    return this.#sql.stmt(sql);
  }

  insert(row: NewShareRow): void {
    this.#stmt(
      `INSERT INTO shares (id, token_sha256, session_id, title, created_at, expires_at, findings,
         document) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      row.id,
      row.token_sha256,
      row.session_id,
      row.title,
      row.created_at,
      row.expires_at,
      row.findings,
      row.document,
    );
  }

  /** Every share, newest first (optionally of one session). */
  list(options: { sessionId?: string } = {}): ShareRow[] {
    const rows = options.sessionId
      ? this.#stmt(
        `SELECT ${ROW_COLS} FROM shares WHERE session_id = ? ORDER BY created_at DESC, id`,
      ).all(options.sessionId)
      : this.#stmt(`SELECT ${ROW_COLS} FROM shares ORDER BY created_at DESC, id`).all();
    return (rows as Record<string, unknown>[]).map(toRow);
  }

  get(id: string): ShareRow | null {
    const r = this.#stmt(`SELECT ${ROW_COLS} FROM shares WHERE id = ?`).get(id);
    return r ? toRow(r as Record<string, unknown>) : null;
  }

  /**
   * Revokes a share and drops its document. Returns the share, or null when there is none
   * with that id. Revoking twice keeps the first time.
   */
  revoke(id: string, at: string): ShareRow | null {
    this.#stmt(
      `UPDATE shares SET revoked_at = coalesce(revoked_at, ?), document = X'' WHERE id = ?`,
    ).run(at, id);
    return this.get(id);
  }

  /** Drops the copies of shares that expired before `now` (their rows and counts stay). */
  purgeExpired(now: string): void {
    this.#stmt(
      "UPDATE shares SET document = X'' WHERE expires_at <= ? AND length(document) > 0",
    ).run(now);
  }

  /**
   * The document of the live share whose token hashes to `tokenSha256`, counting the view; null
   * for an unknown, expired or revoked one. A refusal is the same one indexed read whatever the
   * reason (and never waits for the write lock); only a live share is written to.
   */
  open(tokenSha256: string, now: string): Uint8Array | null {
    const r = this.#stmt(
      `SELECT id, document FROM shares
       WHERE token_sha256 = ?1 AND revoked_at IS NULL AND expires_at > ?2`,
    ).get(tokenSha256, now) as { id: string; document: Uint8Array } | undefined;
    if (!r) return null;
    this.#stmt("UPDATE shares SET views = views + 1, last_viewed_at = ? WHERE id = ?").run(
      now,
      r.id,
    );
    return r.document;
  }
}
