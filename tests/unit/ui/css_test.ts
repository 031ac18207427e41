/**
 * The stylesheets are whole: every block closes where it should, so no rule is swallowed by
 * an unclosed @media block (a merge can leave one; the browser then applies the rules after it
 * only at that width, silently).
 */
import { assertEquals } from "../../_helpers/assert.ts";

for (const name of ["app.css", "live.css"]) {
  Deno.test(`ui/src/${name} closes every block, and its at-rule blocks (@media, @keyframes) hold rules only`, async () => {
    const css = (await Deno.readTextFile(new URL(`../../../ui/src/${name}`, import.meta.url)))
      .replace(/\/\*[\s\S]*?\*\//g, "");
    let depth = 0;
    let media = 0;
    let deepest = 0;
    const opened: string[] = [];
    for (const m of css.matchAll(/([^{}]*)([{}])/g)) {
      if (m[2] === "{") {
        opened.push(m[1].trim());
        depth++;
        if (m[1].trim().startsWith("@")) media++;
        deepest = Math.max(deepest, depth - media);
      } else {
        const open = opened.pop() ?? "";
        if (open.startsWith("@")) media--;
        depth--;
      }
      assertEquals(depth >= 0, true, "a closing brace without its block");
    }
    assertEquals(depth, 0, `unclosed: ${opened.join(" > ")}`);
    assertEquals(deepest <= 1, true, "a rule nested in a rule");
  });
}
