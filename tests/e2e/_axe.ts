/** axe-core's accessibility check of a page, as the browser tests run it. */
import { loadAxeSource, type Page } from "../_helpers/test_deps.ts";

let source: Promise<string> | null = null;

/** Serious and critical axe-core violations on the page as it is now: rule, then its nodes. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) {
    // Evaluated through the debugging protocol, which the page's CSP (script-src 'self') allows.
    await page.evaluate(await (source ??= loadAxeSource()));
  }
  const found = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const r = await (globalThis as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations as { id: string; impact: string; nodes: { target: string[] }[] }[];
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
