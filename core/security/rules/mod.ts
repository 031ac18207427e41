/**
 * @module
 * The seven built-in rules, one module each, in the order they claim text ("specific before
 * broad"): provider keys, credential URLs, key = value secrets, bearer tokens and JWTs, then
 * the personal data rules.
 *
 * Detection is one pass: a single regex (`ANCHOR_RE`, below) finds the anchor points of all
 * rules (the separator after `sk`/`ghp`/`xoxb`, `://`, `@`, `:` or `=` after a credential key,
 * `Bearer`, a dot after `10`/`192` ...), and each anchor's handler, in its rule's module, reads
 * the span around it with a sticky regex and proposes it into that rule's sink, by name. A
 * proposal is kept only if it passes its rule's checks: anchored formats and word boundaries,
 * placeholder and template values, documented example keys, structural decoding (JWTs), range
 * checks (IPs), entropy where a format has no marker.
 */
import type { BuiltinRule, BuiltinRuleName, Candidate, Push, Sinks } from "./_shared.ts";
import { isDigitCode } from "./_text.ts";
import {
  API_KEY_RULE,
  onKeyAnchor,
  onKeySeparator,
  onPemHeader,
  onSlackWebhook,
} from "./api_key.ts";
import { DB_CONN_RULE, onSchemeSeparator } from "./db_conn.ts";
import { EMAIL_RULE, onAt } from "./email.ts";
import { KEYWORD_END, onAssignment, onFlag, PASSWORD_RULE } from "./password.ts";
import {
  onParenPhoneSeparator,
  onPhone,
  onPhoneSeparator,
  PHONE_GROUP,
  PHONE_RULE,
} from "./phone.ts";
import { onIpv4, onUla, PRIVATE_IP_RULE } from "./private_ip.ts";
import { KEYS_AT_ANCHOR, prefixAnchors, prefixesBefore } from "./provider_keys.ts";
import { AUTH_PREFIX, onAuthorizationScheme, onBearer, onJwt, TOKEN_RULE } from "./token.ts";

export type { BuiltinRule, BuiltinRuleName, Candidate, Severity } from "./_shared.ts";
export { classifyKey, type KeyClass, plausibleSecretValue } from "./password.ts";
export { LOOPBACK_IS_PRIVATE } from "./private_ip.ts";
export { PROVIDER_KEYS, type ProviderKey } from "./provider_keys.ts";

/** The built-in rules in claim order. */
export const BUILTIN_RULES: readonly BuiltinRule[] = [
  API_KEY_RULE,
  DB_CONN_RULE,
  PASSWORD_RULE,
  TOKEN_RULE,
  EMAIL_RULE,
  PHONE_RULE,
  PRIVATE_IP_RULE,
];

export const BUILTIN_RULE_NAMES: readonly BuiltinRuleName[] = BUILTIN_RULES.map((r) => r.name);

/**
 * The anchor points of all seven rules as one regex. Each branch starts with its anchor
 * character and, where it can, the character after it (so V8's quick check rejects most
 * positions without entering the branch); context before the anchor is checked with a
 * lookbehind placed after it, so V8 evaluates lookbehinds only where the anchor occurs. The
 * handler for a hit is chosen by the anchor character (`onAnchor`); every handler verifies its
 * own span. Grouping all rules in one regex is what makes the scan a single pass.
 */
const ANCHOR_RE = new RegExp(
  [
    // "." (prose, code): only before a digit (IPs, phone numbers)
    String
      .raw`\.\d(?:(?<=(?:^|[^\w.])(?:10|127|172|192)\.\d)|(?=\d{3})(?<=\([2-9]\d\d\) ?[2-9]\d\d\.\d)|(?<=${PHONE_GROUP}\.\d))`,
    // ":" (JSON keys, times, URLs)
    String
      .raw`:(?:\/\/(?=[^\s/@"'<>\\]*@|hooks\.slack\.com\/)|[0-9a-fA-F:](?<=(?<![\w:])[fF][cCdD][0-9a-fA-F]{2}:[0-9a-fA-F:])|(?<=${KEYWORD_END}:))`,
    String.raw`_(?<=${prefixesBefore("_")}_)`,
    String
      .raw`-(?:----BEGIN |(?=-[\w-]{0,30}(?i:password|passwd|secret|token|api-key|apikey) +[^\s-])|(?<=${
      prefixesBefore("-")
    }-)|\d(?:(?=\d{3})(?<=\([2-9]\d\d\) ?[2-9]\d\d-\d)|(?<=${PHONE_GROUP}-\d)))`,
    String.raw`=(?<=${KEYWORD_END}=)`,
    // rare characters
    String.raw`@(?=[A-Za-z0-9][\w.-]*\.[A-Za-z])(?<=[\w%+-]@)`,
    String.raw`B(?:(?=earer[ \t])|(?=asic[ \t])(?<=${AUTH_PREFIX}B))`,
    String.raw`T(?=oken[ \t])(?<=${AUTH_PREFIX}T)`,
    String.raw`J(?<=(?:^|[^\w-])eyJ)(?=[\w-]{4,}={0,2}\.eyJ)`,
    String.raw`\+(?=[1-9])(?<![\w+]\+)`,
    // provider keys found at a character of their prefix: AKIA..., SG., hvs. ...
    ...prefixAnchors(),
  ].join("|"),
  "g",
);

const isDigitAt = (text: string, i: number) => isDigitCode(text.charCodeAt(i));

/** Calls the handlers an anchor character at `i` may stand for; each checks its own span. */
function onAnchor(text: string, i: number, sink: Sinks): void {
  if (KEYS_AT_ANCHOR.has(text[i])) onKeyAnchor(text, i, sink.api_key);
  switch (text.charCodeAt(i)) {
    case 46: // .
      onIpv4(text, i, sink.private_ip);
      onParenPhoneSeparator(text, i, sink.phone);
      onPhoneSeparator(text, i, sink.phone);
      return;
    case 58: // :
      if (text.startsWith("//", i + 1)) {
        if (text.startsWith("//hooks.slack.com/", i + 1)) {
          onSlackWebhook(text, i + 8, sink.api_key);
        }
        return onSchemeSeparator(text, i, sink.db_conn);
      }
      if (i >= 4 && (text[i - 4] === "f" || text[i - 4] === "F")) onUla(text, i, sink.private_ip);
      return onAssignment(text, i, 1, sink.password);
    case 95: // _
      return onKeySeparator(text, i, sink.api_key);
    case 45: // -
      if (text.startsWith("-----BEGIN ", i)) return onPemHeader(text, i, sink.api_key);
      if (text[i + 1] === "-") return onFlag(text, i, sink.password);
      onKeySeparator(text, i, sink.api_key);
      if (isDigitAt(text, i + 1)) {
        onParenPhoneSeparator(text, i, sink.phone);
        onPhoneSeparator(text, i, sink.phone);
      }
      return;
    case 61: // =
      return onAssignment(text, i, 1, sink.password);
    case 64: // @
      return onAt(text, i, sink.email);
    case 66: // B
      if (text.startsWith("Bearer", i)) return onBearer(text, i, sink.token);
      return onAuthorizationScheme(text, i, sink.token);
    case 84: // T
      return onAuthorizationScheme(text, i, sink.token);
    case 74: // J
      return onJwt(text, i, sink.token);
    case 43: // +
      return onPhone(text, i, sink.phone);
  }
}

/**
 * Finds every built-in rule's candidates in one pass over the text: one regex finds the anchor
 * points of all seven rules, and each anchor's handler reads the span around it. Returns each
 * rule's candidates under its name, in text order.
 */
export function detectBuiltins(text: string): Record<BuiltinRuleName, Candidate[]> {
  const found = {} as Record<BuiltinRuleName, Candidate[]>;
  const sink = {} as Record<BuiltinRuleName, Push>;
  for (const { name } of BUILTIN_RULES) {
    const bucket: Candidate[] = found[name] = [];
    sink[name] = (start, end, replacement, detail, verify) => {
      if (end > start) {
        bucket.push(
          verify
            ? { start, end, replacement, detail, verify }
            : { start, end, replacement, detail },
        );
      }
    };
  }
  ANCHOR_RE.lastIndex = 0;
  for (let m = ANCHOR_RE.exec(text); m; m = ANCHOR_RE.exec(text)) onAnchor(text, m.index, sink);
  return found;
}
