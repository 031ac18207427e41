/**
 * Tokens and their estimated cost, the same everywhere: input, output, cache read and cache
 * write shown apart (one definition, core/model's Usage), and a cost estimated from the dated
 * price table in core/analytics, labelled as an estimate. A model without a price shows its
 * tokens only.
 */
import type { VNode } from "preact";
import { type CostEstimate, PRICES_AS_OF, tokenTotal } from "../../../core/analytics/prices.ts";
import type { Usage } from "../../../core/model/types.ts";
import { count } from "../format.ts";

/** US dollars as an estimate: cents under $100, whole dollars above. */
export function usd(n: number): string {
  if (n > 0 && n < 0.01) return "< $0.01";
  return n < 100 ? `$${n.toFixed(2)}` : `$${Math.round(n).toLocaleString("en-US")}`;
}

/** Why an estimate is one: the prices' date and the models it could not price. */
export function estimateNote(e: CostEstimate): string {
  const parts = [`Estimated at list prices of ${PRICES_AS_OF}; not a bill.`];
  if (e.unpriced.length) parts.push(`No price for ${e.unpriced.join(", ")}: tokens only.`);
  return parts.join(" ");
}

/** The cost of an estimate as text: "≈ $1.23", or "tokens only" when nothing had a price. */
export function CostText({ estimate }: { estimate: CostEstimate }): VNode {
  return (
    <span class="cost" title={estimateNote(estimate)}>
      {estimate.priced
        ? `${estimate.usd < 0.01 ? "" : "≈ "}${usd(estimate.usd)}${
          estimate.unpriced.length ? "+" : ""
        }`
        : "–"}
    </span>
  );
}

/** Input, output, cache read and cache write, each with its count. */
export function TokenBreakdown({ tokens }: { tokens: Usage }): VNode {
  return (
    <span class="token-breakdown">
      <span>{count(tokens.input)} in</span> · <span>{count(tokens.output)} out</span> ·{" "}
      <span>{count(tokens.cache_read)} cache read</span> ·{" "}
      <span>{count(tokens.cache_write)} cache write</span>
    </span>
  );
}

/** The stat cards of tokens and estimated cost (session overview, analytics). */
export function TokenCards({ estimate }: { estimate: CostEstimate }): VNode {
  return (
    <>
      <div class="stat" title="input + output + cache read + cache write">
        <b>{count(tokenTotal(estimate.tokens))}</b>
        <span>tokens</span>
      </div>
      <div class="stat" title={estimateNote(estimate)}>
        <b>
          <CostText estimate={estimate} />
        </b>
        <span>est. cost</span>
      </div>
    </>
  );
}
