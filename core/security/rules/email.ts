/** email: e-mail addresses, except reserved domains, asset names, package versions and SSH remotes. */
import type { BuiltinRule, Push } from "./_shared.ts";
import { isAlnumCode, isAlphaCode } from "./_text.ts";

export const EMAIL_RULE: BuiltinRule = {
  name: "email",
  severity: "low",
  description: "E-mail addresses",
};

/** File extensions that follow `name@` in asset and package names, never top-level domains. */
const FILE_EXTENSIONS = new Set(
  ("png jpg jpeg gif svg webp ico bmp tif tiff avif js mjs cjs jsx ts tsx mts cts css scss sass " +
    "less map json jsonl yaml yml toml lock txt log html htm xml php java class jar py pyc go rs " +
    "rb swift kt c h cc cpp hpp cs md mdx sh bash zsh zip tar gz tgz bz2 xz pdf exe dll so dylib " +
    "wasm vue svelte min bin dat csv tsv ini cfg conf env").split(" "),
);
/** RFC 2606 / 6761 names and service addresses that show up in every agent transcript. */
const ALLOWED_EMAIL_DOMAINS =
  /(?:^|\.)(?:example\.(?:com|org|net)|example|test|invalid|localhost)$/;
const ALLOWED_EMAILS = new Set(["noreply@anthropic.com"]);

function isLocalCode(c: number): boolean {
  // letters digits . _ % + -
  return isAlnumCode(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

/** True when the word that holds index `i` (up to 256 characters back) has a `://` before it. */
function inUrl(text: string, i: number): boolean {
  for (let k = i - 1; k >= 0 && i - k < 256; k--) {
    const c = text.charCodeAt(k);
    if (c <= 32 || c === 34 || c === 39 || c === 96) return false;
    if (c === 47 && text[k - 1] === "/" && text[k - 2] === ":") return true;
  }
  return false;
}

/** `at` is the index of an `@`: read the local part back and the domain forward. */
export function onAt(text: string, at: number, push: Push): void {
  // the domain first: most `@`s (package@1.2.3, decorators, handles) fail here, cheaply
  let e = at + 1;
  let lastDot = -1;
  while (e < text.length && e - at < 256) {
    const c = text.charCodeAt(e);
    if (c === 46) lastDot = e;
    else if (!isAlnumCode(c) && c !== 45) break;
    e++;
  }
  while (e > at + 1 && (text[e - 1] === "." || text[e - 1] === "-")) {
    e--;
    if (lastDot === e) lastDot = text.lastIndexOf(".", e - 1);
  }
  if (lastDot <= at + 1 || e - lastDot - 1 < 2 || !isAlphaCode(text.charCodeAt(lastDot + 1))) {
    return;
  }
  let s = at;
  while (s > 0 && at - s < 64 && isLocalCode(text.charCodeAt(s - 1))) s--;
  // `\n` escapes glue an `n` onto the local part: drop it
  if (s > 0 && text[s - 1] === "\\" && /[nrt]/.test(text[s])) s++;
  while (s < at && (text[s] === "." || text[s] === "-")) s++;
  if (s === at || text[at - 1] === ".") return;
  const before = s > 0 ? text[s - 1] : "";
  if (before === "/" || before === "@" || before === "\\") return;
  // `scheme://user:secret@host` is the credential URL rule's; `file:3:ann@mail.com` a mailbox
  if (before === ":" && !text.endsWith("mailto", s - 1) && inUrl(text, s - 1)) return;
  const domain = text.slice(at + 1, e).toLowerCase();
  const labels = domain.split(".");
  if (labels.some((l) => l.length === 0 || l.length > 63)) return;
  if (labels.some((l) => l.startsWith("-") || l.endsWith("-"))) return;
  const tldRaw = text.slice(lastDot + 1, e);
  // real addresses write a TLD in one case; `z@aPeb95Si.ebcpputyvjB` is base64 noise
  if (tldRaw !== tldRaw.toLowerCase() && tldRaw !== tldRaw.toUpperCase()) return;
  const tld = labels[labels.length - 1];
  if (!/^(?:[a-z]{2,24}|xn--[a-z0-9-]{2,59})$/.test(tld) || FILE_EXTENSIONS.has(tld)) return;
  const local = text.slice(s, at);
  // `git@github.com:org/repo.git` is an SSH remote, not a mailbox
  if (local === "git" || (text[e] === ":" && /[\w~./-]/.test(text[e + 1] ?? ""))) return;
  if (ALLOWED_EMAIL_DOMAINS.test(domain)) return;
  if (ALLOWED_EMAILS.has(`${local.toLowerCase()}@${domain}`)) return;
  push(s, e, `***@***.${tld}`, "email");
}
