/**
 * @module
 * The archive's rules, pure: the exclude list (what is kept out of the store: log files by glob,
 * project folders) as the data folder's `exclude.json` holds it, validated strictly, edited and
 * compiled for an import pass. Forgetting sessions is the store's (`ChronicleStore.forget`); the
 * file itself is read and written by runtime/exclude_file.ts.
 */
export * from "./exclude.ts";
