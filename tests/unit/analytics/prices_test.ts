/** Cost estimates: the arithmetic per token kind, model ids as agents write them, unknown models. */
import {
  costOf,
  estimateCost,
  normalizeModel,
  priceOf,
  PRICES_AS_OF,
  tokenTotal,
} from "../../../core/analytics/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";

const M = 1_000_000;

Deno.test("costOf() prices each kind of token at its own rate", () => {
  // Sonnet 4: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million.
  const u = { input: 2 * M, output: M, cache_read: 10 * M, cache_write: M };
  assertEquals(costOf("claude-sonnet-4-20250514", u), 6 + 15 + 3 + 3.75);
  assertEquals(
    costOf("gpt-5-codex", { input: M, output: M, cache_read: M, cache_write: 0 }),
    11.375,
  );
  assertEquals(
    costOf("gemini-2.5-flash", { input: M, output: 0, cache_read: 0, cache_write: 0 }),
    0.3,
  );
  assertEquals(tokenTotal(u), 14 * M);
});

Deno.test("model ids are read the way agents write them", async (t) => {
  const cases = [
    { name: "a dated Claude id", input: "claude-opus-4-1-20250805", expected: "claude-opus-4-1" },
    {
      name: "a provider prefix",
      input: "anthropic/claude-sonnet-4-5",
      expected: "claude-sonnet-4-5",
    },
    { name: "Gemini's models/ prefix", input: "models/gemini-2.5-pro", expected: "gemini-2.5-pro" },
    { name: "a context tag", input: "claude-sonnet-4-5[1m]", expected: "claude-sonnet-4-5" },
    { name: "an ISO-dated OpenAI id", input: "gpt-4.1-2025-04-14", expected: "gpt-4.1" },
    { name: "-latest", input: "codex-mini-latest", expected: "codex-mini" },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assertEquals(normalizeModel(c.input), c.expected));
  }
});

Deno.test("an unknown model has no price: its tokens are counted, its cost never guessed", () => {
  assertEquals(priceOf("claude-opus-4-8"), undefined);
  assertEquals(costOf("mock-model", { input: M, output: M, cache_read: 0, cache_write: 0 }), null);
  const est = estimateCost([
    { model: "claude-haiku-4-5", input: M, output: M, cache_read: 0, cache_write: 0 },
    { model: "gpt-5.6-sol", input: 5, output: 7, cache_read: 1, cache_write: 0 },
    { model: "empty-model", input: 0, output: 0, cache_read: 0, cache_write: 0 },
  ]);
  assertEquals(est.usd, 6);
  assertEquals(est.priced, true);
  assertEquals(est.unpriced, ["gpt-5.6-sol"]);
  assertEquals(est.tokens, { input: M + 5, output: M + 7, cache_read: 1, cache_write: 0 });
  const none = estimateCost([{ model: "x", input: 1, output: 1, cache_read: 0, cache_write: 0 }]);
  assertEquals([none.priced, none.usd, none.unpriced], [false, 0, ["x"]]);
});

Deno.test("the price table is dated", () => {
  assert(/^\d{4}-\d{2}-\d{2}$/.test(PRICES_AS_OF));
});
