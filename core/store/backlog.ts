/**
 * The search backlog: operations whose rows are stored (their sessions browsable) but whose
 * search text is not in the index yet. A bulk import (a first import, `import --full`) writes
 * rows only, then indexes the backlog in slices (`indexBacklog`): the sessions are there to
 * open seconds earlier, and the index of a whole pass is built in a few large transactions.
 * Search says how many operations are still waiting (`SearchResult.unindexed`).
 *
 * Every write keeps one rule: an operation is in the index or in the backlog, never both, so
 * nothing is indexed twice. A deferred write queues its rowid; an inline write (a live
 * import) takes its rowid out of a non-empty backlog. A backlog row may outlive its operation
 * (deleted meanwhile, its rowid maybe reused by a new one): indexing reads the operation the
 * rowid names when it gets there, or skips it.
 */
import { decodeStored, type InflatedFrames } from "./payload_codec.ts";
import type { PayloadStore, StoredPayload } from "./payloads.ts";
import { indexText, readIndexedDoc, type StoredOp, storedOpColumns } from "./prepare.ts";
import type { Sql } from "./_sql.ts";
import { INDEXED_TEXT_BYTES, indexedTextOf } from "./search_text.ts";

/** A LEFT JOIN's stored op: every column null when the operation is gone. */
type NullableStoredOp = { [K in keyof StoredOp]: StoredOp[K] | null };

/**
 * Operations indexed per transaction: short write locks. FTS5 holds a transaction's terms in
 * memory until it commits: indexing a 300 MB backlog alone peaked at 202 MB with 4,000 a
 * slice, 137 MB with 1,000, 121 MB with 500, as fast.
 */
export const BACKLOG_SLICE = 500;

/**
 * Bytes of payloads a slice stops at (its last operation may pass them; a slice has one at
 * least): 500 operations are a megabyte or two of payloads, but 500 pasted 28 MiB prompts would
 * be read, sent to the text worker and built at once.
 */
export const BACKLOG_SLICE_BYTES = 16 << 20;

/**
 * Puts operations in the backlog (their rows are written): one statement for them all (a row a
 * call was 0.3 s of a 300 MB Codex import's 3.3 s writer, for 109k operations).
 */
export function queueForSearch(sql: Sql, rowids: readonly number[]): void {
  if (!rowids.length) return;
  sql.stmt("INSERT OR IGNORE INTO search_backlog (rowid) SELECT value FROM json_each(?)")
    .run(JSON.stringify(rowids));
}

/** Takes operations out of the backlog: their text goes in the index now. */
export function unqueue(sql: Sql, rowids: readonly number[]): void {
  if (!rowids.length || !sql.stmt("SELECT 1 FROM search_backlog LIMIT 1").get()) return;
  const del = sql.stmt("DELETE FROM search_backlog WHERE rowid = ?");
  for (const r of rowids) del.run(r);
}

/** How many operations are waiting to be indexed. */
export function backlogSize(sql: Sql): number {
  return sql.count("SELECT count(*) AS n FROM search_backlog");
}

/** One slice of the backlog as stored: what building its search texts needs (`buildTexts`). */
export interface BacklogSlice {
  rowids: number[];
  /**
   * Each operation's change stamp when it was read (null: deleted since it was queued). Every
   * write of an operation's row gives it the writing unit's stamp, so a text is applied only to
   * the version it was built from (`applyTexts`).
   */
  stamps: (number | null)[];
  /** Each operation's stored doc and the columns it is read with (null: deleted). */
  docs: (StoredOp | null)[];
  /** The payloads those documents' inputs and results name, as stored. */
  payloads: StoredPayload[];
  /**
   * The sizes of those inputs and results, as their documents give them: a payload read only as
   * far as it is indexed counts whole (what the text worker's collections are paced by).
   */
  bytes: number;
}

/**
 * What building an operation's search text reads of its row (`o`): its stored doc and columns,
 * and the hashes of its input and result. The hashes come from SQLite's JSON functions: the
 * documents are parsed where the texts are built (a worker, for the backlog), not here.
 */
const TEXT_SOURCE = `o.stamp AS stamp, ${storedOpColumns("o.", { file: false })},
  -- (a prompt's own text too, when its doc leaves it to this payload: prepare.ts)
  json_extract(o.doc, '$.request.sha256') AS input,
  -- a reply's or thinking's own text, when its doc leaves it to the payload (prepare.ts)
  CASE WHEN o.kind NOT IN ('reply', 'thinking') OR json_type(o.doc, '$.text') = 'null'
    THEN json_extract(o.doc, '$.response.sha256') END AS result,
  coalesce(json_extract(o.doc, '$.request.size'), 0) +
    coalesce(json_extract(o.doc, '$.response.size'), 0) AS bytes`;

type TextSourceRow = {
  rowid: number;
  stamp: number | null;
  input: string | null;
  result: string | null;
  /** Bytes of its input and result (0 for a payload held inline, or none). */
  bytes: number;
} & NullableStoredOp;

/** The next slice of the backlog after rowid `after`, or null when there is none. */
export function readBacklog(
  sql: Sql,
  payloads: PayloadStore,
  after = 0,
  max = BACKLOG_SLICE,
): BacklogSlice | null {
  // (rows read as arrays: a slice is thousands of them, and they travel to the text worker)
  const rows = sql.rows<TextSourceRow>(
    `SELECT b.rowid AS rowid, ${TEXT_SOURCE}
     FROM search_backlog b LEFT JOIN operations o ON o.rowid = b.rowid
     WHERE b.rowid > ? ORDER BY b.rowid LIMIT ?`,
    after,
    max,
  );
  return rows.length ? sliceOf(rows.slice(0, sliceEnd(rows)), payloads) : null;
}

/**
 * Where a slice of `rows` ends: once their payloads pass {@link BACKLOG_SLICE_BYTES} (one row
 * at least).
 */
function sliceEnd(rows: readonly TextSourceRow[], from = 0): number {
  let bytes = 0, n = from;
  while (n < rows.length && (n === from || bytes < BACKLOG_SLICE_BYTES)) bytes += rows[n++].bytes;
  return n;
}

/**
 * The operations `rowids` name, in that order, read as backlog slices are (one gone is null),
 * a slice at a time: search builds their texts to check a phrase (search.ts), each slice's
 * gone before the next is read (a batch of candidates that are pasted logs was hundreds of MB).
 */
export function* readOperations(
  sql: Sql,
  payloads: PayloadStore,
  rowids: readonly number[],
): Generator<BacklogSlice> {
  const rows = sql.rows<TextSourceRow>(
    `SELECT r.value AS rowid, ${TEXT_SOURCE}
     FROM json_each(?) r LEFT JOIN operations o ON o.rowid = r.value ORDER BY r.key`,
    JSON.stringify(rowids),
  );
  for (let at = 0; at < rows.length;) {
    const end = sliceEnd(rows, at);
    yield sliceOf(rows.slice(at, end), payloads);
    at = end;
  }
}

function sliceOf(rows: TextSourceRow[], payloads: PayloadStore): BacklogSlice {
  const wanted = new Set<string>();
  for (const r of rows) {
    if (typeof r.input === "string") wanted.add(r.input);
    if (typeof r.result === "string") wanted.add(r.result);
  }
  return {
    rowids: rows.map((r) => r.rowid),
    stamps: rows.map((r) => r.doc === null ? null : r.stamp),
    docs: rows.map((r) => r.doc === null ? null : r as StoredOp),
    // One query a slice: 77,000 lookups one by one took 1.4 s of a 300 MB corpus's backlog.
    // (as far as any of them is read: search_text.ts)
    payloads: payloads.storedMany([...wanted], INDEXED_TEXT_BYTES),
    bytes: rows.reduce((n, r) => n + r.bytes, 0),
  };
}

/**
 * What the index is given of each operation of a slice ("" for one deleted): its index body
 * (search_text.ts `indexBody`), or with `forIndex` false its text itself, which a phrase is
 * checked on. Pure: runs in a worker. `frames` (default: a map of its own) gets the frames it
 * inflated, so a caller can count them.
 */
export function buildTexts(
  slice: BacklogSlice,
  forIndex = true,
  frames: InflatedFrames = new Map(),
): string[] {
  const bytes = new Map<string, Uint8Array>();
  for (const p of slice.payloads) {
    const own = decodeStored(p, frames);
    if (own) bytes.set(p.sha256, own);
  }
  // An operation's own text left to its payload: only as far as it is indexed.
  const text = (sha: string) => {
    const b = bytes.get(sha);
    return b ? indexedTextOf(b) : null;
  };
  return slice.docs.map((doc) => {
    if (doc === null) return "";
    const { op, textIsInput } = readIndexedDoc(doc, text);
    return indexText(op, bytes, forIndex, textIsInput);
  });
}

/**
 * Puts a slice's texts in the index, in the caller's transaction, and takes their operations
 * off the backlog. An operation no longer queued (indexed by a live import meanwhile) is left
 * alone; one written again since the slice was read stays queued for the next read. Returns
 * how many operations left the backlog.
 */
export function applyTexts(sql: Sql, slice: BacklogSlice, texts: readonly string[]): number {
  const now = sql.stmt(
    `SELECT b.rowid AS rowid, o.stamp AS stamp FROM search_backlog b
       LEFT JOIN operations o ON o.rowid = b.rowid
     WHERE b.rowid IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify(slice.rowids)) as { rowid: number; stamp: number | null }[];
  const current = new Map(now.map((r) => [r.rowid, r.stamp]));
  const insert = sql.stmt("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
  const done: number[] = [];
  for (let i = 0; i < slice.rowids.length; i++) {
    const rowid = slice.rowids[i];
    if (!current.has(rowid)) continue;
    const stamp = current.get(rowid) ?? null;
    if (stamp !== null && stamp !== slice.stamps[i]) continue; // written again since
    if (stamp !== null && texts[i]) insert.run(rowid, texts[i]);
    done.push(rowid);
  }
  // off the backlog in one statement (one a row was 0.4 s of a 1 GB corpus's index phase)
  sql.stmt("DELETE FROM search_backlog WHERE rowid IN (SELECT value FROM json_each(?))")
    .run(JSON.stringify(done));
  return done.length;
}

/**
 * Indexes up to `max` operations of the backlog, oldest rowid first, in the caller's
 * transaction, building their texts here. Returns how many it took off the backlog.
 */
export function indexBacklog(sql: Sql, payloads: PayloadStore, max = BACKLOG_SLICE): number {
  const slice = readBacklog(sql, payloads, 0, max);
  return slice ? applyTexts(sql, slice, buildTexts(slice)) : 0;
}
