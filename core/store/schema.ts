/**
 * The store's schema as an ordered list of migrations. Each runs once, in a transaction, and
 * is recorded in `migrations`. Never edit a shipped migration: add the next one.
 */

import { STATS_ALL_MIGRATION, STATS_MIGRATION } from "./stats_rollup.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** After the SQL: index every stored operation for search again. */
  reindex?: boolean;
  /** After the SQL: recompute every session's statistics (see stats_rollup.ts). */
  restat?: boolean;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "sessions, operations, payloads, search",
    sql: `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,             -- '<source>:<native id>'
  source TEXT NOT NULL,
  native_id TEXT NOT NULL,
  project_path TEXT,
  title TEXT,
  first_prompt TEXT,
  started_at TEXT,
  ended_at TEXT,
  op_count INTEGER NOT NULL DEFAULT 0,
  error_count INTEGER NOT NULL DEFAULT 0,
  info TEXT NOT NULL,              -- SessionInfo JSON
  recording TEXT NOT NULL,         -- Recording JSON
  extensions TEXT NOT NULL DEFAULT '{}',
  updated_at TEXT NOT NULL
);
CREATE INDEX sessions_source ON sessions(source, started_at);
CREATE INDEX sessions_project ON sessions(project_path, started_at);
CREATE INDEX sessions_started ON sessions(started_at);

CREATE TABLE connections (
  session_id TEXT NOT NULL,
  id TEXT NOT NULL,
  file TEXT NOT NULL,
  doc TEXT NOT NULL,               -- Connection JSON
  PRIMARY KEY (session_id, id)
) WITHOUT ROWID;

-- One row per operation. 'doc' is the canonical Operation JSON; the other columns are the
-- parts that queries filter, sort and aggregate on.
CREATE TABLE operations (
  rowid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  op_id TEXT NOT NULL,
  connection TEXT NOT NULL,
  file TEXT NOT NULL,
  ts_ms REAL,
  rank INTEGER NOT NULL,
  line INTEGER NOT NULL,
  block INTEGER NOT NULL,
  kind TEXT NOT NULL,
  effect TEXT NOT NULL,
  tool TEXT,
  target TEXT,
  is_error INTEGER,
  completeness TEXT NOT NULL,
  model TEXT,
  doc TEXT NOT NULL,
  UNIQUE (session_id, op_id)
);
CREATE INDEX operations_order ON operations(session_id, ts_ms, rank, line, block);
CREATE INDEX operations_tool ON operations(tool);

-- Full-text search over operation text, contentless (the text lives in payloads and docs):
-- rowid = operations.rowid.
CREATE VIRTUAL TABLE operations_fts USING fts5(
  body,
  content='',
  contentless_delete=1,
  detail=none,
  prefix='2 3 4',
  tokenize='unicode61 remove_diacritics 2'
);
-- Merge index segments less eagerly: bulk imports write much less, and queries stay fast.
INSERT INTO operations_fts(operations_fts, rank) VALUES ('automerge', 16);

-- Migration 16 makes it a WITHOUT ROWID table keyed by sha256.
CREATE TABLE payloads (
  id INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL
);

CREATE TABLE usage (
  session_id TEXT NOT NULL,
  key TEXT NOT NULL,
  file TEXT NOT NULL,
  model TEXT NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  ts_ms REAL,
  PRIMARY KEY (session_id, key)
) WITHOUT ROWID;

CREATE TABLE session_issues (
  session_id TEXT NOT NULL,
  file TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  doc TEXT NOT NULL                -- SessionIssue JSON
);
CREATE INDEX session_issues_session ON session_issues(session_id);

CREATE TABLE loss_windows (
  session_id TEXT NOT NULL,
  file TEXT NOT NULL,
  doc TEXT NOT NULL                -- LossWindow JSON
);
CREATE INDEX loss_windows_session ON loss_windows(session_id);

-- One row per source unit (file or database): where the next import resumes. Migration 17
-- moves 'state' to source_states.
CREATE TABLE sources (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  checkpoint TEXT,                 -- Checkpoint JSON
  state TEXT,                      -- importer-owned JSON
  sessions TEXT NOT NULL DEFAULT '[]',
  issues TEXT NOT NULL DEFAULT '[]',
  imported_at TEXT NOT NULL
);

CREATE TABLE epochs (
  session_id TEXT NOT NULL,
  file TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  imported_at TEXT NOT NULL,
  checkpoint TEXT,
  PRIMARY KEY (session_id, file, ordinal)
) WITHOUT ROWID;

CREATE TABLE security_rules (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  pattern TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('redact', 'allow')),
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);

CREATE TABLE interceptions (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  session_id TEXT,
  tool TEXT NOT NULL,
  file TEXT,
  rules TEXT NOT NULL,             -- JSON array of rule names
  sample TEXT,                     -- masked, never the secret
  action TEXT NOT NULL             -- 'block' | 'flag' | 'allow'
);
`,
  },
  {
    version: 2,
    name: "payload bytes in pack files",
    // A payload row either holds its bytes (pack IS NULL: older rows, in-memory stores) or
    // says where they are: pack number and byte offset, with an empty 'bytes'.
    sql: `
ALTER TABLE payloads ADD COLUMN pack INTEGER;
ALTER TABLE payloads ADD COLUMN pack_offset INTEGER;
`,
  },
  {
    version: 3,
    name: "search: a prefix index for three characters only",
    // Each prefix length indexed costs as much as the words themselves. Three characters is
    // where search-as-you-type starts; a longer prefix expands to few words, and a shorter one
    // is matched as a whole word.
    sql: `
DROP TABLE operations_fts;
CREATE VIRTUAL TABLE operations_fts USING fts5(
  body,
  content='',
  contentless_delete=1,
  detail=none,
  prefix='3',
  tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO operations_fts(operations_fts, rank) VALUES ('automerge', 16);
`,
    reindex: true,
  },
  {
    version: 4,
    name: "no index on operations.tool",
    // No query looks operations up by tool (statistics scan them), and every insert paid for it.
    sql: "DROP INDEX operations_tool;",
  },
  {
    version: 5,
    name: "change stamps for live views",
    // Every unit an import applies takes the next stamp from the clock; the operations it
    // writes carry it (an operation a full re-read wrote again unchanged keeps its old one),
    // and so does each session it touched. A live view asks for "this session's operations
    // after stamp S" (core/store/changes.ts); reset_stamp says when a re-read dropped some.
    sql: `
CREATE TABLE change_clock (id INTEGER PRIMARY KEY CHECK (id = 1), stamp INTEGER NOT NULL);
INSERT INTO change_clock (id, stamp) VALUES (1, 0);
ALTER TABLE operations ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;
CREATE INDEX operations_changes ON operations(session_id, stamp);
ALTER TABLE sessions ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN reset_stamp INTEGER NOT NULL DEFAULT 0;
`,
  },
  {
    version: 6,
    name: "search: every visible text, with positions",
    // Phrases, identifiers (their words in order) and correct prefix counts need positions:
    // detail=full. Prefix indexes for 2 and 3 characters keep search-as-you-type fast from the
    // second letter; longer prefixes expand to few words. The index now holds tool inputs and
    // whole outputs (see search_text.ts), so it is rebuilt.
    sql: `
DROP TABLE operations_fts;
CREATE VIRTUAL TABLE operations_fts USING fts5(
  body,
  content='',
  contentless_delete=1,
  detail=full,
  prefix='2 3',
  tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO operations_fts(operations_fts, rank) VALUES ('automerge', 16);
`,
    reindex: true,
  },
  {
    version: 7,
    name: "statistics kept up to date at import",
    // Per-session counts and their sums per agent and project (stats_rollup.ts), so the
    // analytics page reads a few thousand rows instead of every operation.
    sql: STATS_MIGRATION,
    restat: true,
  },
  {
    version: 8,
    name: "compressed payloads",
    // A payload is stored as its own bytes (codec 0) or as raw DEFLATE (codec 1), compressed
    // by the import worker; 'stored' is the length of a compressed payload in its pack.
    sql: `
ALTER TABLE payloads ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payloads ADD COLUMN stored INTEGER;
`,
  },
  {
    version: 9,
    name: "shares and canonical imports",
    // A share keeps the SHA-256 of its URL token (never the token) and the redacted export
    // document frozen at creation (gzip JSON): nothing the redaction took out is in the row.
    // A canonical import records the checksum of the session.json it came from, so importing
    // the same export again changes nothing.
    sql: `
CREATE TABLE shares (
  id TEXT PRIMARY KEY,
  token_sha256 TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  title TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT,
  views INTEGER NOT NULL DEFAULT 0,
  last_viewed_at TEXT,
  findings INTEGER NOT NULL,
  document BLOB NOT NULL
);
CREATE INDEX shares_session ON shares(session_id);

CREATE TABLE canonical_imports (
  session_id TEXT PRIMARY KEY,
  session_sha256 TEXT NOT NULL,
  imported_at TEXT NOT NULL
);
`,
  },
  {
    version: 10,
    name: "statistics of everything kept as rows of their own",
    // The analytics page's first view summed every agent's and project's rows per key; the
    // files touched grow with the history (12,000 rows over a 300 MB corpus). The rollup now
    // also keeps everything's rows (source '', project ''), read in the order of an index.
    sql: STATS_ALL_MIGRATION,
  },
  {
    version: 11,
    name: "statistics: tokens per day and model",
    // The 'daymodel' rows of session_stats and stats_rollup (per-day cost estimates): every
    // session's statistics are computed again, which adds them.
    sql: "",
    restat: true,
  },
  {
    version: 12,
    name: "the archive: kept operations, forgotten sessions, names and stars",
    // operations.kept: 1 when the operation is no longer in its agent's log (the log was
    // deleted, or rewritten without it): Chronicle keeps what it saw (sessions.kept_count counts
    // them). forgotten: sessions the user deleted from the store, never imported again.
    // sessions.user_title and starred_at: what the user named and starred (an import never
    // writes them).
    sql: `
ALTER TABLE operations ADD COLUMN kept INTEGER;
ALTER TABLE sessions ADD COLUMN kept_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN user_title TEXT;
ALTER TABLE sessions ADD COLUMN starred_at TEXT;
CREATE INDEX sessions_starred ON sessions(starred_at) WHERE starred_at IS NOT NULL;
CREATE TABLE forgotten (
  session_id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  project_path TEXT,
  title TEXT,
  forgotten_at TEXT NOT NULL
);
`,
  },
  {
    version: 13,
    name: "search backlog",
    // The operations a bulk import wrote whose search text is not in the index yet: a first
    // import makes its sessions browsable first and indexes them after (core/store/backlog.ts).
    // A row may outlive its operation (deleted meanwhile): indexing skips it.
    sql: "CREATE TABLE search_backlog (rowid INTEGER PRIMARY KEY);",
  },
  {
    version: 14,
    name: "search: one prefix index (three characters) and the index's word list",
    // The prefix index for two characters held as many positions as the words themselves: a
    // third of the index (97.9 → 67.0 MB over the 300 MB corpus) and a tenth of a cold
    // import. A two-character prefix is now searched as that word or any of its three-character
    // prefixes (search_query.ts): the ASCII letters and digits always, and the other characters
    // that follow it in some indexed word, which the word list (fts5vocab, no storage of its
    // own) names. The index is filled again from the search backlog by the next import (the
    // server's first pass, or `chronicle import`), in slices, not in this migration's lock.
    sql: `
DROP TABLE operations_fts;
CREATE VIRTUAL TABLE operations_fts USING fts5(
  body,
  content='',
  contentless_delete=1,
  detail=full,
  prefix='3',
  tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO operations_fts(operations_fts, rank) VALUES ('automerge', 16);
CREATE VIRTUAL TABLE operations_fts_words USING fts5vocab(operations_fts, row);
INSERT OR IGNORE INTO search_backlog (rowid) SELECT rowid FROM operations;
`,
  },
  {
    version: 15,
    name: "payloads in frames",
    // A unit's new payloads, once they add up to 4 KiB, go to a pack in Zstandard frames of
    // consecutive payloads (codec 2, payload_codec.ts): the frame is 'stored' bytes at
    // 'pack_offset', the payload 'size' bytes at 'frame_offset' of it inflated. The payloads
    // of a 300 MB corpus took 65 MB stored one by one, 39 MB in frames. Rows written before
    // keep their codec: nothing is rewritten.
    sql: `ALTER TABLE payloads ADD COLUMN frame_offset INTEGER;`,
  },
  {
    version: 16,
    name: "payloads keyed by their SHA-256",
    // Every lookup is by hash, and since frames a row is small (its bytes are in a pack): the
    // table is its own index now, WITHOUT ROWID, instead of a rowid table beside an index of
    // the same hashes (300 MB corpus: 6.9 + 6.0 MB, now 7.3 MB).
    sql: `
CREATE TABLE payloads_by_hash (
  sha256 TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  pack INTEGER,
  pack_offset INTEGER,
  codec INTEGER NOT NULL DEFAULT 0,
  stored INTEGER,
  frame_offset INTEGER
) WITHOUT ROWID;
INSERT INTO payloads_by_hash
  SELECT sha256, size, bytes, pack, pack_offset, codec, stored, frame_offset FROM payloads;
DROP TABLE payloads;
ALTER TABLE payloads_by_hash RENAME TO payloads;
`,
  },
  {
    version: 17,
    name: "importer states in a table of their own",
    // A unit's importer state (a Claude Code session's record ids: tens of KB) made each
    // sources row a page or more: every read of the checkpoints (each pass, each live append)
    // and of the units' notes walked them all. With 1,651 logs (3 GB) that was 50 ms of a live
    // append's 67. The states are rows of source_states now, read one at a time.
    sql: `
CREATE TABLE source_states (path TEXT PRIMARY KEY, state TEXT NOT NULL);
INSERT INTO source_states SELECT path, state FROM sources WHERE state IS NOT NULL;
CREATE TABLE sources_without_state (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  checkpoint TEXT,
  sessions TEXT NOT NULL DEFAULT '[]',
  issues TEXT NOT NULL DEFAULT '[]',
  imported_at TEXT NOT NULL
);
INSERT INTO sources_without_state
  SELECT path, source, epoch, checkpoint, sessions, issues, imported_at FROM sources;
DROP TABLE sources;
ALTER TABLE sources_without_state RENAME TO sources;
`,
  },
  {
    version: 18,
    name: "plain frames to compress",
    // A bulk import writes its payloads' frames uncompressed (codec 3, payload_codec.ts) and
    // compresses them once its search backlog is indexed: this index finds the ones left, in
    // pack order, and is empty otherwise.
    sql: `CREATE INDEX payloads_plain ON payloads (pack, pack_offset) WHERE codec = 3;`,
  },
  {
    version: 19,
    name: "statistics backlog",
    // A bulk import recounts its sessions' statistics after the pass, once each, not after
    // every log it reads (apply.ts's refreshAggregates, settleStats): the sessions waiting.
    sql: `CREATE TABLE stats_backlog (session_id TEXT PRIMARY KEY) WITHOUT ROWID;`,
  },
  {
    version: 20,
    name: "seen records apart from states",
    // The records a log gave (UnitResult.seen: Claude Code's record uuids, 16 bytes each),
    // kept as a set that only grows: each pass appends the keys it added, in no order. A big
    // log's state no longer carries them, slice after slice.
    sql: `CREATE TABLE source_seen (path TEXT NOT NULL, keys BLOB NOT NULL);
CREATE INDEX source_seen_path ON source_seen (path);`,
  },
  {
    version: 21,
    name: "operations name their log by number",
    // Every operation repeated its log's path (a hundred-odd bytes: 12 MB of a 300 MB Codex
    // history's store); now a session's log paths are rows of op_files, and an operation names
    // its own by number (op_files.ts). The table is built anew rather than updated in place: an
    // UPDATE of every row kept a copy of every page it changed in memory (251 MB at 1 GB).
    sql: `CREATE TABLE op_files (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  path TEXT NOT NULL,
  UNIQUE (session_id, path)
);
INSERT INTO op_files (session_id, path) SELECT DISTINCT session_id, file FROM operations;
CREATE TABLE operations_by_file_id (
  rowid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  op_id TEXT NOT NULL,
  connection TEXT NOT NULL,
  file_id INTEGER NOT NULL,
  ts_ms REAL,
  rank INTEGER NOT NULL,
  line INTEGER NOT NULL,
  block INTEGER NOT NULL,
  kind TEXT NOT NULL,
  effect TEXT NOT NULL,
  tool TEXT,
  target TEXT,
  is_error INTEGER,
  completeness TEXT NOT NULL,
  model TEXT,
  doc TEXT NOT NULL,
  stamp INTEGER NOT NULL DEFAULT 0,
  kept INTEGER,
  UNIQUE (session_id, op_id)
);
INSERT INTO operations_by_file_id
  SELECT o.rowid, o.session_id, o.op_id, o.connection, f.id, o.ts_ms, o.rank, o.line, o.block,
    o.kind, o.effect, o.tool, o.target, o.is_error, o.completeness, o.model, o.doc, o.stamp,
    o.kept
  FROM operations o JOIN op_files f ON f.session_id = o.session_id AND f.path = o.file
  ORDER BY o.rowid;
DROP TABLE operations;
ALTER TABLE operations_by_file_id RENAME TO operations;
CREATE INDEX operations_order ON operations(session_id, ts_ms, rank, line, block);
CREATE INDEX operations_changes ON operations(session_id, stamp);`,
  },
  {
    version: 22,
    name: "payload hashes as bytes",
    // The table is keyed by hash, and a bulk import's rows land all over it: a commit rewrites
    // most of the pages it touched. Keyed by the 32 bytes instead of 64 hex characters, the
    // table is 40% smaller and its inserts about as much faster (payloads.ts: SHA_HEX, unhex).
    sql: `
CREATE TABLE payloads_by_bytes (
  sha256 BLOB PRIMARY KEY,
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  pack INTEGER,
  pack_offset INTEGER,
  codec INTEGER NOT NULL DEFAULT 0,
  stored INTEGER,
  frame_offset INTEGER
) WITHOUT ROWID;
INSERT INTO payloads_by_bytes
  SELECT CASE WHEN typeof(sha256) = 'blob' THEN sha256 ELSE unhex(sha256) END, size, bytes, pack,
    pack_offset, codec, stored, frame_offset FROM payloads;
DROP TABLE payloads;
ALTER TABLE payloads_by_bytes RENAME TO payloads;
CREATE INDEX payloads_plain ON payloads (pack, pack_offset) WHERE codec = 3;
`,
  },
  {
    version: 23,
    name: "usage names its log by number",
    // As the operations since 21: a usage row named its log by path (2.9 MB of a 300 MB Claude
    // Code history's store), now by its op_files number.
    sql: `
INSERT OR IGNORE INTO op_files (session_id, path) SELECT DISTINCT session_id, file FROM usage;
CREATE TABLE usage_by_file_id (
  session_id TEXT NOT NULL,
  key TEXT NOT NULL,
  file_id INTEGER NOT NULL,
  model TEXT NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  ts_ms REAL,
  PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
INSERT INTO usage_by_file_id
  SELECT u.session_id, u.key, f.id, u.model, u.input, u.output, u.cache_read, u.cache_write,
    u.ts_ms
  FROM usage u JOIN op_files f ON f.session_id = u.session_id AND f.path = u.file;
DROP TABLE usage;
ALTER TABLE usage_by_file_id RENAME TO usage;
`,
  },
  {
    version: 24,
    name: "search: which operations hold each word, not where",
    // With positions (detail=full) the index was a third of the store: 66 MB of a 300 MB
    // Claude Code history's 188, 28 of them the three-character prefixes' positions. Without
    // (detail=none) it is 9 MB, and faster to build. A phrase (an identifier, a path, a quoted
    // phrase) is now found as its words, and each candidate's text checked for them in order
    // (search_query.ts). The index is filled again from the search backlog by the next import,
    // as in migration 14.
    sql: `
DROP TABLE operations_fts_words;
DROP TABLE operations_fts;
CREATE VIRTUAL TABLE operations_fts USING fts5(
  body,
  content='',
  contentless_delete=1,
  detail=none,
  prefix='3',
  tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO operations_fts(operations_fts, rank) VALUES ('automerge', 16);
CREATE VIRTUAL TABLE operations_fts_words USING fts5vocab(operations_fts, row);
INSERT OR IGNORE INTO search_backlog (rowid) SELECT rowid FROM operations;
`,
  },
  {
    version: 25,
    name: "a doc says when its operation has no time of its own",
    // A doc now leaves out its time where its row's order time is the same, and says
    // `"ts_ms": null` for an operation without one in a row with one (prepare.ts storedDoc).
    // Docs stored before left the time out only when the operation had none: they say so now.
    // (Few rows change: no copy of every page, as an UPDATE of every row would keep.)
    sql: `
UPDATE operations SET doc = json_set(doc, '$.ts_ms', json('null'))
  WHERE ts_ms IS NOT NULL AND json_type(doc, '$.ts_ms') IS NULL;
`,
  },
  {
    version: 26,
    name: "operations name their session by number",
    // Every operation repeated its session's id (about 45 characters) in its row and in each of
    // the table's three indexes: 10 MB of a 300 MB Claude Code history's store, 17 MB of Codex's.
    // A session now has a number (`sessions.num`, its rowid, kept while it exists) and its
    // operations name it by that (`operations.session`; SQL asks `sessionNum(?)`, _sql.ts). Both
    // tables are built anew, as in migration 21.
    sql: `
CREATE TABLE sessions_numbered (
  num INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,         -- '<source>:<native id>'
  source TEXT NOT NULL,
  native_id TEXT NOT NULL,
  project_path TEXT,
  title TEXT,
  first_prompt TEXT,
  started_at TEXT,
  ended_at TEXT,
  op_count INTEGER NOT NULL DEFAULT 0,
  error_count INTEGER NOT NULL DEFAULT 0,
  info TEXT NOT NULL,              -- SessionInfo JSON
  recording TEXT NOT NULL,         -- Recording JSON
  extensions TEXT NOT NULL DEFAULT '{}',
  updated_at TEXT NOT NULL,
  stamp INTEGER NOT NULL DEFAULT 0,
  reset_stamp INTEGER NOT NULL DEFAULT 0,
  kept_count INTEGER NOT NULL DEFAULT 0,
  user_title TEXT,
  starred_at TEXT
);
INSERT INTO sessions_numbered (num, id, source, native_id, project_path, title, first_prompt,
    started_at, ended_at, op_count, error_count, info, recording, extensions, updated_at, stamp,
    reset_stamp, kept_count, user_title, starred_at)
  SELECT rowid, id, source, native_id, project_path, title, first_prompt, started_at, ended_at,
    op_count, error_count, info, recording, extensions, updated_at, stamp, reset_stamp,
    kept_count, user_title, starred_at
  FROM sessions ORDER BY rowid;
DROP TABLE sessions;
ALTER TABLE sessions_numbered RENAME TO sessions;
CREATE INDEX sessions_source ON sessions(source, started_at);
CREATE INDEX sessions_project ON sessions(project_path, started_at);
CREATE INDEX sessions_started ON sessions(started_at);
CREATE INDEX sessions_starred ON sessions(starred_at) WHERE starred_at IS NOT NULL;
-- (an operation of no session was never shown: it goes, and its search text with it)
DELETE FROM operations_fts WHERE rowid IN
  (SELECT rowid FROM operations WHERE session_id NOT IN (SELECT id FROM sessions));
DELETE FROM search_backlog WHERE rowid IN
  (SELECT rowid FROM operations WHERE session_id NOT IN (SELECT id FROM sessions));
CREATE TABLE operations_numbered (
  rowid INTEGER PRIMARY KEY,
  session INTEGER NOT NULL,        -- sessions.num
  op_id TEXT NOT NULL,
  connection TEXT NOT NULL,
  file_id INTEGER NOT NULL,
  ts_ms REAL,
  rank INTEGER NOT NULL,
  line INTEGER NOT NULL,
  block INTEGER NOT NULL,
  kind TEXT NOT NULL,
  effect TEXT NOT NULL,
  tool TEXT,
  target TEXT,
  is_error INTEGER,
  completeness TEXT NOT NULL,
  model TEXT,
  doc TEXT NOT NULL,
  stamp INTEGER NOT NULL DEFAULT 0,
  kept INTEGER,
  UNIQUE (session, op_id)
);
INSERT INTO operations_numbered
  SELECT o.rowid, s.num, o.op_id, o.connection, o.file_id, o.ts_ms, o.rank, o.line, o.block,
    o.kind, o.effect, o.tool, o.target, o.is_error, o.completeness, o.model, o.doc, o.stamp,
    o.kept
  FROM operations o JOIN sessions s ON s.id = o.session_id
  ORDER BY o.rowid;
DROP TABLE operations;
ALTER TABLE operations_numbered RENAME TO operations;
CREATE INDEX operations_order ON operations(session, ts_ms, rank, line, block);
CREATE INDEX operations_changes ON operations(session, stamp);
`,
  },
  {
    version: 27,
    name: "payloads name their frame",
    // A packed payload named its frame's place (pack, offset, codec, length) in its own row, so
    // compressing a bulk import's plain frames rewrote every payload row, and the rows are keyed
    // by hash: each transaction rewrote pages all over the table, more of them the bigger the
    // history (3 GB Claude Code history: 9.8 s of updates and most of 23.7 s of commits). A
    // frame is a row of its own now, numbered in the order frames are written, and compressing
    // or moving one rewrites that row alone. A payload written before frames (one alone in a
    // pack, raw or DEFLATE) is a frame of one, with that codec. 'codec' of a payload row is
    // its inline bytes' codec.
    sql: `
CREATE TABLE frames (
  id INTEGER PRIMARY KEY,
  pack INTEGER NOT NULL,
  pack_offset INTEGER NOT NULL,
  codec INTEGER NOT NULL,          -- payload_codec.ts
  stored INTEGER NOT NULL          -- its bytes in the pack
);
INSERT INTO frames (pack, pack_offset, codec, stored)
  SELECT pack, pack_offset, min(codec), max(coalesce(stored, size)) FROM payloads
  WHERE pack IS NOT NULL GROUP BY pack, pack_offset ORDER BY pack, pack_offset;
CREATE INDEX frames_place ON frames(pack, pack_offset);
CREATE TABLE payloads_in_frames (
  sha256 BLOB PRIMARY KEY,
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL,             -- inline (frame NULL)
  codec INTEGER NOT NULL DEFAULT 0,
  frame INTEGER,                   -- frames.id
  frame_offset INTEGER             -- where it starts in its frame, inflated
) WITHOUT ROWID;
INSERT INTO payloads_in_frames
  SELECT p.sha256, p.size, p.bytes, CASE WHEN f.id IS NULL THEN p.codec ELSE 0 END, f.id,
    CASE WHEN f.id IS NULL THEN NULL ELSE coalesce(p.frame_offset, 0) END
  FROM payloads p LEFT JOIN frames f ON f.pack = p.pack AND f.pack_offset = p.pack_offset;
DROP TABLE payloads;
ALTER TABLE payloads_in_frames RENAME TO payloads;
CREATE INDEX frames_plain ON frames(pack, pack_offset) WHERE codec = 3;
`,
  },
  {
    version: 28,
    name: "a bulk import's new payloads gather apart",
    // The payloads table is keyed by hash: a bulk import's new rows land all over it, and each
    // commit wrote most of its pages to the WAL again, more of them the bigger the history (3 GB
    // Claude Code history: 5.5 s of inserts and most of 4.7 s of commits before every session
    // was browsable). Its rows gather here, a small table, and join the big one in hash order
    // every few tens of thousands (payloads.ts: merge), which writes each of its pages once.
    // Readers read both (PAYLOAD_ROWS).
    sql: `
CREATE TABLE payloads_new (
  sha256 BLOB PRIMARY KEY,
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  codec INTEGER NOT NULL DEFAULT 0,
  frame INTEGER,
  frame_offset INTEGER
) WITHOUT ROWID;
`,
  },
  {
    version: 29,
    name: "search: a joined pair starts with its mark",
    // A pair of words joined (an identifier's, search_text.ts) was the first word, the mark,
    // the second: every pair a word starts began with that word, so the word typed as a prefix
    // (the last word of a query is one) expanded to all of them. On a 3 GB Claude Code
    // history 'error*' named 17,796 terms, most of them pairs, and FTS5 merged all their lists
    // for every such search: 110 ms. A pair is now the mark, the first word, the mark, the
    // second (pairTerm). The index is filled again from the search backlog by the next import,
    // as in migration 24.
    sql: `
DROP TABLE operations_fts_words;
DROP TABLE operations_fts;
CREATE VIRTUAL TABLE operations_fts USING fts5(
  body,
  content='',
  contentless_delete=1,
  detail=none,
  prefix='3',
  tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO operations_fts(operations_fts, rank) VALUES ('automerge', 16);
CREATE VIRTUAL TABLE operations_fts_words USING fts5vocab(operations_fts, row);
INSERT OR IGNORE INTO search_backlog (rowid) SELECT rowid FROM operations;
`,
  },
  {
    version: 30,
    name: "statistics: a search's folder is no file touched",
    // A search's target (Grep's, Glob's, ls's folder or pattern) counted as a file touched: the
    // folders a session searched over and over topped its most touched files, and every one
    // added to its count (stats_rollup.ts: touchesFile). Every session's statistics are
    // computed again, which drops those rows.
    sql: "",
    restat: true,
  },
];
