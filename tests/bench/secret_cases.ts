/**
 * Per-rule precision and recall of the built-in rules on the labelled cases in
 * shared/fixtures/secrets/cases.jsonl. Run: deno run --allow-read tests/bench/secret_cases.ts
 */
import { scanText } from "../../core/security/mod.ts";

/** Maps the case file's category names onto rule names. */
export const CATEGORY_RULE: Record<string, string> = {
  api_key: "api_key",
  password: "password",
  bearer_jwt: "token",
  db_url: "db_conn",
  email: "email",
  phone: "phone",
  private_ip: "private_ip",
};

export interface SecretCase {
  category: string;
  text: string;
  expect: "redact" | "keep";
  source: string;
}

export const CASES_PATH = new URL("../../fixtures/secrets/cases.jsonl", import.meta.url);

export function loadCases(text: string): SecretCase[] {
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

export interface RuleScore {
  rule: string;
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

/**
 * A case counts for rule R as a true positive when it is a `redact` case of R's category and
 * R fires; a false negative when R stays silent on it; a false positive when R fires on any
 * other case (a `keep` case, or a case of another category).
 */
export function scoreCases(cases: SecretCase[]): { scores: RuleScore[]; misses: string[] } {
  const scores = new Map<string, RuleScore>();
  for (const rule of Object.values(CATEGORY_RULE)) {
    scores.set(rule, { rule, tp: 0, fp: 0, fn: 0, precision: 0, recall: 0 });
  }
  const misses: string[] = [];
  cases.forEach((c, i) => {
    const fired = new Set(scanText(c.text).findings.map((f) => f.rule));
    const want = CATEGORY_RULE[c.category];
    if (c.expect === "redact") {
      if (fired.has(want)) scores.get(want)!.tp++;
      else {
        scores.get(want)!.fn++;
        misses.push(`#${i} missed ${want}: ${c.text}`);
      }
    }
    for (const rule of fired) {
      if (c.expect === "redact" && rule === want) continue;
      scores.get(rule)!.fp++;
      misses.push(`#${i} false ${rule}: ${c.text}`);
    }
  });
  for (const s of scores.values()) {
    s.precision = s.tp + s.fp === 0 ? 1 : s.tp / (s.tp + s.fp);
    s.recall = s.tp + s.fn === 0 ? 1 : s.tp / (s.tp + s.fn);
  }
  return { scores: [...scores.values()], misses };
}

if (import.meta.main) {
  const cases = loadCases(await Deno.readTextFile(CASES_PATH));
  const { scores, misses } = scoreCases(cases);
  console.log(`${cases.length} cases`);
  console.log("rule        TP  FP  FN  precision  recall");
  for (const s of scores) {
    console.log(
      `${s.rule.padEnd(11)} ${String(s.tp).padStart(3)} ${String(s.fp).padStart(3)} ${
        String(s.fn).padStart(3)
      }  ${s.precision.toFixed(3).padStart(9)}  ${s.recall.toFixed(3).padStart(6)}`,
    );
  }
  for (const m of misses) console.log(m);
}
