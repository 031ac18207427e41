/** password: passwords and secrets assigned to a key (`password=...`, `client_secret: ...`, `--token v`). */
import { type BuiltinRule, KNOWN_EXAMPLES, type Push } from "./_shared.ts";
import {
  hasLongRun,
  isAlnumCode,
  isAlphaCode,
  isDigitCode,
  isSpaceCode,
  isStructuralJwt,
  isTemplate,
  isUuid,
  isWordCode,
  looksLikePlaceholder,
  shannonEntropy,
} from "./_text.ts";

export const PASSWORD_RULE: BuiltinRule = {
  name: "password",
  severity: "high",
  description: "Passwords and secrets assigned to a key (password=..., client_secret: ...)",
};

/** The end of a credential key, right before its `=` or `:` (for the anchor regex). */
export const KEYWORD_END = String
  .raw`(?i:pass(?:word|wd|phrase|code)?|pwd|pswd|secret|token|key|creds?|credentials?)\d*(?:\\?["'])?[ \t]{0,3}`;

export type KeyClass = "password" | "secret";

const KEY_PREFIXES = new Set(
  ("api access secret private auth client encryption signing master app service account " +
    "subscription admin license consumer webhook session").split(" "),
);
const TOKEN_EXCLUDED_PREFIXES = new Set(
  ("csrf xsrf next page continuation cursor sync max min num input output prompt completion " +
    "cache total pad eos bos unk sep mask cls start end stop cancel cancellation resume " +
    "reasoning thinking count special").split(" "),
);

/**
 * The last two words of a key, lowercase, trailing digits dropped: `DB_PASSWORD` -> password, db;
 * `clientSecret` -> secret, client; `x-api-key` -> key, api.
 */
function lastWords(key: string): [string, string] {
  const words: string[] = [];
  let end = key.length;
  while (end > 0 && isDigitCode(key.charCodeAt(end - 1))) end--;
  let i = end;
  while (words.length < 2 && end > 0) {
    // skip separators (and digits glued to the end of the previous word)
    while (end > 0 && !isAlphaCode(key.charCodeAt(end - 1))) end--;
    i = end;
    while (i > 0 && isAlphaCode(key.charCodeAt(i - 1))) {
      const c = key.charCodeAt(i - 1);
      i--;
      // a capital after a lowercase letter starts a camelCase word: clientSecret
      if (c >= 65 && c <= 90 && i > 0) {
        const before = key.charCodeAt(i - 1);
        if (before >= 97 && before <= 122) break;
      }
    }
    if (i < end) words.push(key.slice(i, end).toLowerCase());
    end = i;
  }
  return [words[0] ?? "", words[1] ?? ""];
}

/** Classifies a key by its last word: `password`-like, `secret`-like, or not a credential. */
export function classifyKey(key: string): KeyClass | null {
  const [last, prev] = lastWords(key);
  if (!last) return null;
  if (/^(?:[a-z]*password|[a-z]*passwd|pwd|pass|passphrase|passcode|pswd)$/.test(last)) {
    return "password";
  }
  if (/^[a-z]*secret$/.test(last)) return "secret";
  if (/^(?:[a-z]*creds?|credentials?)$/.test(last)) return "secret";
  if (last === "key") return KEY_PREFIXES.has(prev) ? "secret" : null;
  if (/^(?:api|access|secret|private|auth|client|master|signing|encryption|app)key$/.test(last)) {
    return "secret";
  }
  if (/^[a-z]*token$/.test(last)) {
    const embedded = last.slice(0, -5);
    if (TOKEN_EXCLUDED_PREFIXES.has(embedded)) return null;
    if (embedded === "" && TOKEN_EXCLUDED_PREFIXES.has(prev)) return null;
    return "secret";
  }
  return null;
}

/** Values that are words of the language, not secrets: types, literals, stand-ins. */
const STOP_VALUES = new Set(
  ("true false null nil none undefined required optional string str int integer number bool " +
    "boolean object any unknown bytes buffer hidden empty default value test testing secret " +
    "password passwd token unset n/a tbd todo redacted masked env secretstr secretstring " +
    "await new this self function lambda require import yield typeof return void " +
    "same-origin include omit")
    .split(" "),
);
/** Type annotations (`token: string`, `password: Optional[str]`) are not values. */
const TYPE_ANNOTATION_RE =
  /^(?:(?:string|str|String|&str|number|int|i32|i64|u32|u64|bool|boolean|bytes|any|unknown|Buffer|Uint8Array|SecretStr|SecretString|z\.string)(?![\w@#$%!&*+=-])|Optional\[|Option<)/;

const KEYWORD_IN_VALUE_RE = /pass|pwd|secret|token|key|cred/i;
/** `getPass()`, `request.headers['x']`: a call or a subscript, not a literal. */
function isIndirectReference(value: string): boolean {
  const first = value.charCodeAt(0);
  if (!isAlphaCode(first) && first !== 95 && first !== 36) return false;
  let i = 1;
  while (i < value.length) {
    const c = value.charCodeAt(i);
    if (isWordCode(c) || c === 46 || c === 36 || c === 45) i++;
    else break;
  }
  while (value[i] === " " || value[i] === "\t") i++;
  return value[i] === "(" || value[i] === "[";
}
const DOTTED_IDENTIFIER_RE = /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/;
/** Minified or inline code after `password:` / `token=`: object literals, operators, keywords. */
const CODE_RE =
  /[,;]\s*[A-Za-z_$!][\w$]*\s*[:=(.]|[,;]\s*(?:var|let|const|return|function)\b|&&|\|\||[=!]==?|=>|\?\.|\)\s*[{;,.]|\}\s*(?:else|return|function)|\b(?:function|return|null|void)\b|^[(!]|\{[a-z-]{3,}(?::|$)|;[A-Za-z]/;
/** `13.0.7`, `^3.3.1-next.19+2c93303`: a package version, as in `"...-1password": "13.0.7"`. */
const VERSION_RE = /^[~^=v]?\d+(?:\.\d+){1,3}(?:[-+][\w.+-]*)?$/;
/** A generic type (`Pick<Token`), or a camelCase name with no digit (`lastEventId`). */
const TYPE_OR_NAME_RE = /^[A-Za-z_$][\w$.]*<|^[a-z]+(?:[A-Z][a-z]*)+$/;
const IDENTIFIER_RE = /^[A-Za-z_][\w]*$/;
const ENV_NAME_RE = /^[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+$/;
const PATH_EXTENSIONS = new Set("json pem key p12 pfx crt txt yaml yml env toml".split(" "));

/** `./secrets/client.json`, `~/.aws/credentials`, `service-account.json`: a file, not a value. */
function isFilePath(value: string): boolean {
  if (/^(?:~?\/|\.\.?\/)/.test(value)) return value.indexOf("/", 2) > 0 && !/\s/.test(value);
  const dot = value.lastIndexOf(".");
  return dot > 0 && PATH_EXTENSIONS.has(value.slice(dot + 1)) && /^[\w.-]+$/.test(value);
}

function charClasses(v: string): number {
  let n = 0;
  if (/[a-z]/.test(v)) n++;
  if (/[A-Z]/.test(v)) n++;
  if (/\d/.test(v)) n++;
  if (/[^A-Za-z0-9]/.test(v)) n++;
  return n;
}

/** Decides whether a captured value is a literal secret rather than a reference or a stand-in. */
export function plausibleSecretValue(value: string, cls: KeyClass, quoted: boolean): boolean {
  if (value.length < (cls === "password" ? 4 : 8) || value.length > 500) return false;
  if (value.startsWith("$") || isTemplate(value)) return false;
  if (looksLikePlaceholder(value) || KNOWN_EXAMPLES.has(value)) return false;
  if (STOP_VALUES.has(value.toLowerCase()) || TYPE_ANNOTATION_RE.test(value)) return false;
  if (isIndirectReference(value)) return false;
  if (!quoted && (DOTTED_IDENTIFIER_RE.test(value) || CODE_RE.test(value))) return false;
  if (!quoted && TYPE_OR_NAME_RE.test(value)) return false;
  if (/^[\w.-]+:(?:secret|password|pass|pwd|changeme)$/i.test(value)) return false; // user:secret
  if (VERSION_RE.test(value)) return false;
  if (!quoted && IDENTIFIER_RE.test(value) && KEYWORD_IN_VALUE_RE.test(value)) return false;
  if (/\s/.test(value) && KEYWORD_IN_VALUE_RE.test(value)) return false;
  if (ENV_NAME_RE.test(value) || isUuid(value) || isFilePath(value)) return false;
  if (/^\d+$/.test(value) && (cls === "secret" || value.length < 6)) return false;
  if (/^[^A-Za-z0-9]+$/.test(value)) return false;
  if (value.startsWith("eyJ") && isStructuralJwt(value)) return false; // the token rule's
  if (cls === "secret") {
    if (hasLongRun(value) || shannonEntropy(value) < 3 || charClasses(value) < 2) return false;
  }
  return true;
}

interface CapturedValue {
  start: number;
  end: number;
  quoted: boolean;
}

/** Reads the value after a separator: quoted up to its closing quote, else one bare word. */
function readValue(text: string, from: number): CapturedValue | null {
  let p = from;
  while (p < text.length && (text[p] === " " || text[p] === "\t")) p++;
  let quote = "";
  if (text[p] === "\\" && (text[p + 1] === '"' || text[p + 1] === "'")) {
    quote = text.slice(p, p + 2);
  } else if (text[p] === '"' || text[p] === "'" || text[p] === "`") quote = text[p];
  if (quote) {
    const start = p + quote.length;
    // the closing quote, on the same line and within 600 characters
    const window = text.slice(start, start + 600);
    const close = window.indexOf(quote);
    const lineEnd = window.indexOf("\n");
    if (close >= 0 && (lineEnd < 0 || close <= lineEnd)) {
      return { start, end: start + close, quoted: true };
    }
  }
  const start = p;
  let e = p;
  const limit = Math.min(text.length, p + 300);
  while (e < limit) {
    const c = text.charCodeAt(e);
    if (isSpaceCode(c) || c === 34 || c === 39 || c === 96) break;
    if (c === 92 && /[nrt"']/.test(text[e + 1] ?? "")) break;
    if (c === 38 && /^[\w.-]+=/.test(text.slice(e + 1, e + 42))) break; // next query parameter
    e++;
  }
  // trailing , ; : and closers that have no opener in the value: `(token: string): number`
  for (let trimmed = true; trimmed && e > start;) {
    trimmed = false;
    const last = text[e - 1];
    if (last === "," || last === ";" || last === ":") {
      e--;
      trimmed = true;
      continue;
    }
    const open = last === ")" ? "(" : last === "]" ? "[" : last === "}" ? "{" : "";
    if (open) {
      const v = text.slice(start, e);
      if (v.split(last).length > v.split(open).length) {
        e--;
        trimmed = true;
      }
    }
  }
  if (e === start) return null;
  return { start, end: e, quoted: false };
}

/** Code such as `const password = await vault.get()` assigns an expression, not a literal. */
const DECLARATION_RE = /(?:^|[^\w$])(?:const|let|var|val|def|my|local)\s+[\w$]*$/;

/** `sep` is the index of `=`, `:`, `:=` or `=>` right after a key ending in a keyword. */
export function onAssignment(text: string, sep: number, sepLength: number, push: Push): void {
  // read the key back from the separator
  let k = sep;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  const quotedKey = text[k - 1] === '"' || text[k - 1] === "'";
  if (quotedKey) k--;
  if (text[k - 1] === "\\") k--;
  const keyEnd = k;
  while (k > 0 && keyEnd - k < 64) {
    const c = text.charCodeAt(k - 1);
    if (isWordCode(c) || c === 46 || c === 45) k--;
    else break;
  }
  const key = text.slice(k, keyEnd);
  const cls = classifyKey(key);
  if (!cls) return;
  // what stands before the key: `a ? "PASS" : "FAIL"` is a ternary, `this pass: ...` prose
  let b = quotedKey ? k - 2 : k - 1;
  while (b >= 0 && (text[b] === " " || text[b] === "\t")) b--;
  if (text[b] === "?" && (quotedKey || b < k - 1)) return;
  const afterWord = b >= 0 && b < k - 1 && isAlnumCode(text.charCodeAt(b));
  // after another word, only an explicit password counts: "URIs with credentials: ..." is prose
  if (text[sep] === ":" && !quotedKey && afterWord) {
    if (cls !== "password" || lastWords(key)[0] === "pass") return;
  }
  let from = sep + sepLength;
  while (text[from] === "=" || text[from] === ">") from++; // == === =>
  const v = readValue(text, from);
  if (!v) return;
  if (!v.quoted && DECLARATION_RE.test(text.slice(Math.max(0, k - 16), k))) return;
  pushKeyedValue(text, v, cls, push);
}

/** Proposes the value of a password or secret key, masked, if it looks like a real one. */
function pushKeyedValue(text: string, v: CapturedValue, cls: KeyClass, push: Push): void {
  push(
    v.start,
    v.end,
    "****",
    cls === "password" ? "password" : "secret",
    () => plausibleSecretValue(text.slice(v.start, v.end), cls, v.quoted),
  );
}

const FLAG_RE = /--[\w-]{0,30}(?:password|passwd|secret|token|api-key|apikey)(?= +[^\s-])/iy;

/** `--password value` on a command line; `i` is the index of `--`. */
export function onFlag(text: string, i: number, push: Push): void {
  FLAG_RE.lastIndex = i;
  const m = FLAG_RE.exec(text);
  if (!m) return;
  const cls = classifyKey(m[0]);
  if (!cls) return;
  const v = readValue(text, i + m[0].length);
  if (!v) return;
  pushKeyedValue(text, v, cls, push);
}
