// deno-lint-ignore-file no-import-prefix -- test-only packages are pinned here on purpose (see below)
/**
 * Test-only dependencies, pinned here rather than in deno.json's `imports`: `deno task start`
 * then never downloads them (Deno fetches every package `imports` names before any task runs).
 */
export type { Browser, Page } from "npm:playwright-core@1.65.1";
/** Loads playwright-core on demand (it probes the system when it loads). */
export const loadPlaywright = () => import("npm:playwright-core@1.65.1");
export { lintSource } from "npm:@secretlint/core@13.0.7";
export { creator as secretlintRecommended } from "npm:@secretlint/secretlint-rule-preset-recommend@13.0.7";
/**
 * axe-core, the accessibility rules engine (Deque, MPL-2.0): the e2e suite injects its source into
 * each page (it runs in the browser) and asks for serious and critical violations.
 */
export const loadAxeSource = async (): Promise<string> =>
  ((await import("npm:axe-core@4.14.1")) as unknown as { default: { source: string } }).default
    .source;
