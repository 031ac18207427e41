/**
 * @module
 * Analytics over stored sessions, for the API's analytics pages and the session overview:
 * tool distribution, operation kinds, activity per day, errors and tokens per model. It holds
 * the ONE error heuristic ({@link isErrorResult}) that the server and the UI bundle both use.
 * `error_heuristic.ts` is pure and safe to bundle into the browser.
 */
export * from "./error_heuristic.ts";
export * from "./stats.ts";
export * from "./prices.ts";
