/**
 * What tokens cost, as an estimate: list prices in US dollars per million tokens for the
 * models the agents use (Claude, GPT / Codex, Gemini families), dated, shipped with Chronicle
 * (never fetched). A model not in the table has no price: its tokens are shown, never a guess.
 *
 * Token counts have one definition everywhere (`Usage` in core/model): `input` is input NOT
 * read from or written to a cache, `cache_read` and `cache_write` are the cached parts, and
 * `output` includes reasoning tokens. Importers convert each agent's counts to it.
 */
import type { Usage } from "../model/types.ts";

/** The day the prices below were read from the providers' public price lists. */
export const PRICES_AS_OF = "2025-11-01";

/** US dollars per million tokens of each kind. */
export interface Price {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

const p = (input: number, output: number, cache_read: number, cache_write = input): Price => ({
  input,
  output,
  cache_read,
  cache_write,
});

/**
 * Model ids (as {@link normalizeModel} leaves them) and their standard prices. Anthropic's cache
 * write is its 5-minute write; OpenAI and Google charge no separate write, so a write is
 * priced as input. Long-context tiers (over 200k tokens a request) are not applied.
 */
export const PRICES: Readonly<Record<string, Price>> = {
  // Anthropic
  "claude-opus-4-5": p(5, 25, 0.5, 6.25),
  "claude-opus-4-1": p(15, 75, 1.5, 18.75),
  "claude-opus-4": p(15, 75, 1.5, 18.75),
  "claude-opus-4-0": p(15, 75, 1.5, 18.75),
  "claude-sonnet-4-5": p(3, 15, 0.3, 3.75),
  "claude-sonnet-4": p(3, 15, 0.3, 3.75),
  "claude-sonnet-4-0": p(3, 15, 0.3, 3.75),
  "claude-3-7-sonnet": p(3, 15, 0.3, 3.75),
  "claude-3-5-sonnet": p(3, 15, 0.3, 3.75),
  "claude-haiku-4-5": p(1, 5, 0.1, 1.25),
  "claude-3-5-haiku": p(0.8, 4, 0.08, 1),
  "claude-3-opus": p(15, 75, 1.5, 18.75),
  "claude-3-haiku": p(0.25, 1.25, 0.03, 0.3),
  // OpenAI
  "gpt-5": p(1.25, 10, 0.125),
  "gpt-5-codex": p(1.25, 10, 0.125),
  "gpt-5-chat": p(1.25, 10, 0.125),
  "gpt-5.1": p(1.25, 10, 0.125),
  "gpt-5.1-codex": p(1.25, 10, 0.125),
  "gpt-5-mini": p(0.25, 2, 0.025),
  "gpt-5.1-codex-mini": p(0.25, 2, 0.025),
  "gpt-5-nano": p(0.05, 0.4, 0.005),
  "gpt-4.1": p(2, 8, 0.5),
  "gpt-4.1-mini": p(0.4, 1.6, 0.1),
  "gpt-4.1-nano": p(0.1, 0.4, 0.025),
  "gpt-4o": p(2.5, 10, 1.25),
  "gpt-4o-mini": p(0.15, 0.6, 0.075),
  "o3": p(2, 8, 0.5),
  "o4-mini": p(1.1, 4.4, 0.275),
  "codex-mini": p(1.5, 6, 0.375),
  // Google
  "gemini-3-pro-preview": p(2, 12, 0.2),
  "gemini-2.5-pro": p(1.25, 10, 0.125),
  "gemini-2.5-flash": p(0.3, 2.5, 0.03),
  "gemini-2.5-flash-lite": p(0.1, 0.4, 0.01),
  "gemini-2.0-flash": p(0.1, 0.4, 0.025),
  "gemini-2.0-flash-lite": p(0.075, 0.3, 0.075),
};

/**
 * A model id as the price table spells it: lower case, without a provider prefix
 * (`anthropic/`, `models/`), a context-window tag (`[1m]`), a release date (`-20250514`,
 * `-2025-08-07`) or `-latest`.
 */
export function normalizeModel(model: string): string {
  return model.trim().toLowerCase()
    .replace(/^.*\//, "")
    .replace(/\[[^\]]*\]$/, "")
    .replace(/-latest$/, "")
    .replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, "");
}

/** The price of a model, or undefined when the table does not know it. */
export function priceOf(model: string): Price | undefined {
  return PRICES[normalizeModel(model)];
}

/** All the tokens of a usage: input, output, cache read and cache write added up. */
export function tokenTotal(u: Usage): number {
  return u.input + u.output + u.cache_read + u.cache_write;
}

/** The estimated cost in US dollars of a model's usage, or null for a model without a price. */
export function costOf(model: string, u: Usage): number | null {
  const price = priceOf(model);
  if (!price) return null;
  return (u.input * price.input + u.output * price.output + u.cache_read * price.cache_read +
    u.cache_write * price.cache_write) / 1e6;
}

/** An estimate over several models' usage. */
export interface CostEstimate {
  /** US dollars for the models with a price (0 when none has one). */
  usd: number;
  /** Whether any model had a price (else there is no estimate to show). */
  priced: boolean;
  /** Models without a price, whose tokens the estimate leaves out. */
  unpriced: string[];
  /** The tokens of each kind over every model, priced or not. */
  tokens: Usage;
}

/** Adds up the cost and the tokens of usage rows, one per model (or per model and day, ...). */
export function estimateCost(rows: readonly (Usage & { model: string })[]): CostEstimate {
  const out: CostEstimate = {
    usd: 0,
    priced: false,
    unpriced: [],
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
  };
  const unpriced = new Set<string>();
  for (const r of rows) {
    out.tokens.input += r.input;
    out.tokens.output += r.output;
    out.tokens.cache_read += r.cache_read;
    out.tokens.cache_write += r.cache_write;
    const usd = costOf(r.model, r);
    if (usd === null) {
      if (tokenTotal(r) > 0) unpriced.add(r.model);
    } else {
      out.usd += usd;
      out.priced = true;
    }
  }
  out.unpriced = [...unpriced].sort();
  return out;
}
