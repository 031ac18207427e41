/** Globs match in linear time: no rule, however adversarial, can freeze a scan. */
import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { ChronicleError } from "../../../core/model/mod.ts";
import {
  compileGlobMatcher,
  deadlineIn,
  forEachMatch,
  globMatches,
  scanText,
} from "../../../core/security/mod.ts";

Deno.test("path globs: * within a segment, ** across, ? one character but /", async (t) => {
  const table: [string, string, boolean][] = [
    ["*.env", "prod.env", true],
    ["*.env", "a/prod.env", false],
    ["/proc/*/environ", "/proc/123/environ", true],
    ["/proc/*/environ", "/proc/1/task/2/environ", false],
    ["**/.aws/credentials", "/home/u/.aws/credentials", true],
    ["**/.config/gcloud/**", "/home/u/.config/gcloud/legacy/x.db", true],
    ["id_?sa", "id_rsa", true],
    ["id_?sa", "id_/sa", false],
  ];
  for (const [glob, path, want] of table) {
    await t.step(
      `${glob} ${path}`,
      () => assertEquals(globMatches(compileGlobMatcher(glob, "path"), path), want),
    );
  }
});

/** Steps an NFA pass takes, counted through the deadline's clock. */
function countedDeadline() {
  let ticks = 0;
  return { deadline: deadlineIn(1e12, () => ticks++), ticks: () => ticks };
}

Deno.test("an adversarial rule over a 300 KB base64 blob costs a linear number of steps", () => {
  const g = compileGlobMatcher("*a*a*a*b", "text");
  const cost = (n: number) => {
    const text = "a".repeat(n); // one long run without a b: backtracking is cubic here
    const c = countedDeadline();
    forEachMatch(g, text, () => {}, c.deadline);
    return c.ticks();
  };
  const small = cost(75_000);
  const big = cost(300_000);
  // the deadline is checked every 4096 characters: 4x the text is ~4x the checks
  assert(big <= small * 4 + 4, `${small} -> ${big}`);
  const start = performance.now();
  const r = scanText("a".repeat(300_000), {
    rules: [{ id: "x", name: "adversarial", pattern: "*a*a*a*b", action: "redact", enabled: true }],
  });
  assertEquals(r.findings, []);
  console.log(`*a*a*a*b over 300 KB: ${(performance.now() - start).toFixed(1)} ms`);
});

Deno.test("a scan past its deadline throws a timeout, the guard's cue to block", () => {
  const text = "x".repeat(1 << 20);
  const e = assertThrows(
    () =>
      scanText(text, {
        deadline: deadlineIn(0),
        rules: [{ id: "x", name: "r", pattern: "*x*y", action: "redact", enabled: true }],
      }),
    ChronicleError,
  );
  assertEquals((e as ChronicleError).code, "timeout");
});

Deno.test("text globs find the leftmost-longest matches, one after the other", async (t) => {
  const table: [string, string, string[]][] = [
    ["*a*b", "xxaxxb yab b", ["xxaxxb", "yab"]],
    ["a*", "a aa ab", ["a", "aa", "ab"]],
    ["ACME-??", "ACME-1 ACME-12 ACME-123", ["ACME-1 ", "ACME-12", "ACME-12"]],
    ["*.env", "cat .env prod.env", [".env", "prod.env"]],
  ];
  for (const [glob, text, want] of table) {
    await t.step(`${glob} in ${JSON.stringify(text)}`, () => {
      const found: string[] = [];
      forEachMatch(
        compileGlobMatcher(glob, "text"),
        text,
        (s, e) => void found.push(text.slice(s, e)),
      );
      assertEquals(found, want);
    });
  }
});
