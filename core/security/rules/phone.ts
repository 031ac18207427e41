/** phone: international numbers, NANP numbers with separators, national numbers with a trunk 0. */
import type { BuiltinRule, Push } from "./_shared.ts";
import { isAlnumCode, isDigitCode } from "./_text.ts";

export const PHONE_RULE: BuiltinRule = {
  name: "phone",
  severity: "low",
  description: "Phone numbers in international or separated national formats",
};

/** A leading digit group of a number (area code or trunk prefix), for the anchor regex. */
export const PHONE_GROUP = String.raw`(?:^|[^\w.+-]|(?:^|[^\w.+-])1[-. ])(?:[2-9]\d\d|0\d{1,4})`;

/**
 * International numbers (`+` and 8-15 digits), NANP numbers with separators, and national
 * numbers with a trunk `0` and dashes (`090-1234-5678`, `09-7625400`).
 * Bare digit runs (timestamps, ids) never count: they need a `+` or separators.
 */
const PHONE_RE = new RegExp(
  [
    String.raw`\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,5}\)?){1,5}`,
    String.raw`(?:1[ .-])?\([2-9]\d\d\) ?[2-9]\d\d[-. ]\d{4}\b`,
    String.raw`(?:1[-.])?[2-9]\d\d([-.])[2-9]\d\d\1\d{4}\b`,
    String.raw`0\d{1,4}-\d{1,4}-\d{4}\b`,
    String.raw`0\d-\d{6,8}\b`,
  ].join("|"),
  "y",
);

/** `i` is where a number may start (its `+`, `(` or first digit). */
export function onPhone(text: string, i: number, push: Push): void {
  let s = i;
  // a NANP country code written before the area code: 1-415-555-0132
  if (s >= 2 && text[s - 2] === "1" && /[-. ]/.test(text[s - 1])) s -= 2;
  const before = s > 0 ? text.charCodeAt(s - 1) : 32;
  if (isAlnumCode(before) || before === 43 || before === 46 || before === 95) {
    if (s === i) return;
    s = i;
  }
  PHONE_RE.lastIndex = s;
  const m = PHONE_RE.exec(text);
  if (!m) return;
  let v = m[0];
  const e = s + v.length;
  const after = e < text.length ? text.charCodeAt(e) : 32;
  if (isAlnumCode(after) || after === 95) return;
  if ((after === 46 || after === 45) && isDigitCode(text.charCodeAt(e + 1))) return;
  v = v.replace(/[ .-]+$/, "");
  const digits = v.replace(/\D/g, "").length;
  if (v.startsWith("+")) {
    if (digits < 8 || digits > 15) return;
  } else if (v.startsWith("0")) {
    // 090-1234-5678 has 10 or 11 digits; 09-7625400 has 9 or 10
    const groups = v.split("-").length;
    if (groups === 3 ? digits < 10 || digits > 11 : digits < 9 || digits > 10) return;
  } else if (digits < 10 || digits > 11) {
    return;
  }
  push(s, s + v.length, v.startsWith("+") ? "+***-***-****" : "***-***-****", "phone");
}

/** `sep` is a separator after a leading digit group: go back to the group's first digit. */
export function onPhoneSeparator(text: string, sep: number, push: Push): void {
  let s = sep;
  while (s > 0 && isDigitCode(text.charCodeAt(s - 1))) s--;
  onPhone(text, s, push);
}

/** `(415) 555-0132`: the separator before the last four digits, back to the parenthesis. */
export function onParenPhoneSeparator(text: string, sep: number, push: Push): void {
  const open = sep >= 10 ? text.indexOf("(", sep - 10) : text.indexOf("(");
  if (open >= 0 && open < sep) onPhone(text, open, push);
}
