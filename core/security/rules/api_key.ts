/**
 * api_key: provider keys with a known format (the table in provider_keys.ts), PEM private key
 * blocks and Slack webhook URLs.
 */
import { type BuiltinRule, leftBoundary, plausibleKey, type Push } from "./_shared.ts";
import {
  KEYS_AT_ANCHOR,
  KEYS_AT_SEPARATOR,
  type KeySeparator,
  LONGEST_PREFIX,
  type ProviderKey,
} from "./provider_keys.ts";

export const API_KEY_RULE: BuiltinRule = {
  name: "api_key",
  severity: "high",
  description:
    "Provider API keys with known formats (OpenAI, Anthropic, AWS, GitHub, Slack, Google, ...) and private key blocks",
};

function tryFormats(text: string, start: number, formats: ProviderKey[], push: Push): void {
  for (const key of formats) {
    key.re.lastIndex = start;
    const match = key.re.exec(text);
    if (!match) continue;
    const m = match[0];
    if (!plausibleKey(m, key.entropy ?? 3)) continue;
    if (key.check && !key.check(m)) continue;
    const hint = typeof key.hint === "string" ? key.hint : key.hint(m);
    push(start, start + m.length, hint + "****", key.provider);
    return;
  }
}

/** At a `-` or `_` after a key prefix: the shortest known prefix on a boundary, then its formats. */
export function onKeySeparator(text: string, sep: number, push: Push): void {
  const prefixes = KEYS_AT_SEPARATOR[text[sep] as KeySeparator];
  for (let len = 2; len <= LONGEST_PREFIX && len <= sep; len++) {
    const formats = prefixes.get(text.slice(sep - len, sep));
    if (!formats || !leftBoundary(text, sep - len)) continue;
    return tryFormats(text, sep - len, formats, push);
  }
}

/** At the anchor character of a prefix found ahead (`AKIA`, `SG.`, `hvs.`). */
export function onKeyAnchor(text: string, i: number, push: Push): void {
  const list = KEYS_AT_ANCHOR.get(text[i]);
  if (!list) return;
  for (const { prefix, offset, formats } of list) {
    const start = i - offset;
    if (start < 0 || !text.startsWith(prefix, start) || !leftBoundary(text, start)) continue;
    return tryFormats(text, start, formats, push);
  }
}

const PEM_RE = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----/y;
const PEM_BODY_RE = /(?:[A-Za-z0-9+/=\s]|\\[nr])*/y;
const SLACK_WEBHOOK_RE =
  /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[\w/-]{20,}/y;

/** A PEM private key block, header to footer (or to the end of its base64 when cut short). */
export function onPemHeader(text: string, i: number, push: Push): void {
  PEM_RE.lastIndex = i;
  const header = PEM_RE.exec(text);
  if (!header) return;
  const bodyStart = i + header[0].length;
  PEM_BODY_RE.lastIndex = bodyStart;
  const body = PEM_BODY_RE.exec(text)![0];
  if (body.replace(/\\[nr]|\s/g, "").length < 64) return;
  let end = bodyStart + body.length;
  const footer = `-----END ${header[1]}PRIVATE KEY`;
  if (text.startsWith(footer, end)) {
    const close = text.indexOf("-----", end + footer.length);
    end = close >= 0 && close - end < footer.length + 16 ? close + 5 : end + footer.length;
  }
  push(i, end, `-----BEGIN ${header[1]}PRIVATE KEY-----****`, "private_key");
}

/** `at` is the index of `.slack.com/` in `https://hooks.slack.com/...`. */
export function onSlackWebhook(text: string, at: number, push: Push): void {
  const start = at - "https://hooks".length;
  if (start < 0) return;
  SLACK_WEBHOOK_RE.lastIndex = start;
  const m = SLACK_WEBHOOK_RE.exec(text);
  if (m) push(start, start + m[0].length, "https://hooks.slack.com/****", "slack_webhook");
}
