/**
 * When a session counts as being written: something reached it (a record's time, or a change
 * the server saw) within this window. The server's `/api/live`, the LIVE badge and the list's
 * dot all use it. No imports, so the UI bundle takes it alone.
 */
export const WRITING_WINDOW_MS = 120_000;
