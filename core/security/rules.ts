/**
 * The seven built-in rules, in the order they claim text ("specific before broad"): provider
 * keys, credential URLs, key = value secrets, bearer tokens and JWTs, then the personal data
 * rules.
 *
 * Detection is one pass: a single regex (`ANCHOR_RE`) finds the anchor points of all rules (the
 * separator after `sk`/`ghp`/`xoxb`, `://`, `@`, `:` or `=` after a credential key, `Bearer`,
 * a dot after `10`/`192` ...), and a handler per anchor reads the span around it with a sticky
 * regex. A proposal is kept only if it passes its rule's checks: anchored formats and word
 * boundaries, placeholder and template values, documented example keys, structural decoding
 * (JWTs), range checks (IPs), entropy where a format has no marker.
 */
import {
  hasLongRun,
  hasSequentialRun,
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

export type BuiltinRuleName =
  | "api_key"
  | "db_conn"
  | "password"
  | "token"
  | "email"
  | "phone"
  | "private_ip";

/** `high` findings block a tool call; `low` ones are flagged and allowed. */
export type Severity = "high" | "low";

export interface BuiltinRule {
  name: BuiltinRuleName;
  severity: Severity;
  description: string;
}

/** A span a built-in rule proposes; the scan decides which proposals are kept. */
export interface Candidate {
  start: number;
  end: number;
  replacement: string;
  detail: string;
  /**
   * A costlier check, run only when the span is not already claimed (a key after
   * `API_KEY=` is the api_key rule's, so the password rule need not judge it).
   */
  verify?: () => boolean;
}

type Push = (
  start: number,
  end: number,
  replacement: string,
  detail: string,
  verify?: () => boolean,
) => void;

/** Example keys from vendor documentation: never secrets. */
const KNOWN_EXAMPLES = new Set([
  "AKIAIOSFODNN7EXAMPLE",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "AIzaSyabcdefghijklmnopqrstuvwxyz1234567",
  "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
]);

/** True when the character before `i` cannot continue a token: start, punctuation or `\n`. */
function leftBoundary(text: string, i: number): boolean {
  if (i === 0) return true;
  const c = text.charCodeAt(i - 1);
  if (!isAlnumCode(c) && c !== 95 && c !== 45) return true;
  // A JSON-escaped line break (`\n`, `\r`, `\t`) right before the token.
  return (c === 110 || c === 114 || c === 116) && i >= 2 && text.charCodeAt(i - 2) === 92;
}

// ---------------------------------------------------------------------------------------------
// api_key

interface KeySpec {
  detail: string;
  /** Sticky regex matched at the token start. */
  re: RegExp;
  /** The visible hint kept in the replacement, e.g. `sk-`. A function gets the match. */
  hint: string | ((m: string) => string);
  /** Minimum Shannon entropy of the whole match (default 3). */
  entropy?: number;
  check?: (m: string) => boolean;
}

const SK: KeySpec[] = [
  { detail: "anthropic", re: /sk-ant-[a-z]{2,8}\d{2}-[\w-]{80,200}(?![\w-])/y, hint: "sk-ant-" },
  {
    detail: "openai",
    re: /sk-(?:proj|svcacct|service|admin)-[\w-]{40,300}(?![\w-])/y,
    hint: "sk-",
  },
  { detail: "openai", re: /sk-[\w-]{0,200}T3BlbkFJ[\w-]{10,200}(?![\w-])/y, hint: "sk-" },
  {
    detail: "openai",
    re: /sk-[A-Za-z0-9]{32,100}(?![\w-])/y,
    hint: "sk-",
    entropy: 3.5,
    check: (m) => /\d/.test(m) && /[A-Za-z]/.test(m) && !hasSequentialRun(m, 12),
  },
  {
    detail: "stripe",
    re: /[sr]k_(?:live|test)_[A-Za-z0-9]{20,120}(?![\w])/y,
    hint: (m) => m.slice(0, 8),
  },
];

const KEY_SPECS: Record<string, KeySpec[]> = {
  sk: SK,
  rk: SK,
  gh: [{
    detail: "github",
    re: /gh[pousr]_[A-Za-z0-9_]{36,255}(?!\w)/y,
    hint: (m) => m.slice(0, 4),
  }],
  github_pat: [{ detail: "github", re: /github_pat_\w{70,255}(?!\w)/y, hint: "github_pat_" }],
  xox: [{
    detail: "slack",
    re: /(?:xox[abeoprs](?:\.xox[a-z])?|xapp)-(?:\d+-)+[A-Za-z0-9]{8,}(?:-[A-Za-z0-9]+)*(?![\w-])/y,
    hint: (m) => m.slice(0, m.indexOf("-") + 1),
    check: (m) => m.length >= 30,
  }],
  gl: [
    { detail: "gitlab", re: /gl(?:pat|dt|rt)-[\w-]{20,128}(?![\w-])/y, hint: (m) => m.slice(0, 6) },
    {
      detail: "grafana",
      re: /glc_[A-Za-z0-9+/]{32,400}={0,2}(?![A-Za-z0-9+/=])/y,
      hint: "glc_",
    },
    { detail: "grafana", re: /glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![\w])/y, hint: "glsa_" },
  ],
  npm: [{ detail: "npm", re: /npm_[A-Za-z0-9]{36}(?![\w])/y, hint: "npm_" }],
  hf: [{ detail: "huggingface", re: /hf_[A-Za-z0-9]{34,40}(?![\w])/y, hint: "hf_", entropy: 3.5 }],
  gsk: [{ detail: "groq", re: /gsk_[A-Za-z0-9]{48,60}(?![\w])/y, hint: "gsk_" }],
  lin_api: [{ detail: "linear", re: /lin_api_[A-Za-z0-9_]{32,128}(?![\w])/y, hint: "lin_api_" }],
  ntn: [{ detail: "notion", re: /ntn_[0-9]{11}[A-Za-z0-9]{35}(?![\w])/y, hint: "ntn_" }],
  shp: [{
    detail: "shopify",
    re: /shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,64}(?![\w])/y,
    hint: (m) => m.slice(0, 6),
  }],
  hv: [{ detail: "vault", re: /hv[sbr]\.[\w-]{90,300}(?![\w-])/y, hint: (m) => m.slice(0, 4) }],
  vc: [{
    detail: "vercel",
    re: /vc[pciark]_[A-Za-z0-9]{20,60}(?![\w])/y,
    hint: (m) => m.slice(0, 4),
  }],
  dckr_pat: [{ detail: "docker", re: /dckr_pat_[\w-]{27,}(?![\w-])/y, hint: "dckr_pat_" }],
  figd: [{ detail: "figma", re: /figd_[\w-]{40,200}(?![\w-])/y, hint: "figd_" }],
  cf: [{
    detail: "cloudflare",
    re: /cf(?:k|ut|at)_[A-Za-z0-9]{40}[0-9a-f]{8}(?![\w])/y,
    hint: (m) => m.slice(0, m.indexOf("_") + 1),
  }],
  tskey: [{
    detail: "tailscale",
    re: /tskey-[a-z]{2,20}-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}(?![\w])/y,
    hint: "tskey-",
  }],
  ops: [{
    detail: "1password",
    re: /ops_ey[A-Za-z0-9+/=]{100,1280}(?![A-Za-z0-9+/=])/y,
    hint: "ops_",
  }],
  xai: [{ detail: "xai", re: /xai-[A-Za-z0-9]{70,90}(?![\w])/y, hint: "xai-" }],
  sntry: [{
    detail: "sentry",
    re: /sntry[su]_[A-Za-z0-9+/=_-]{40,400}/y,
    hint: (m) => m.slice(0, 7),
  }],
  pypi: [{ detail: "pypi", re: /pypi-AgEIcHlwaS5vcmc[\w-]{50,}/y, hint: "pypi-" }],
  do: [{
    detail: "digitalocean",
    re: /do[opr]_v1_[a-f0-9]{64}(?![\w])/y,
    hint: (m) => m.slice(0, 7),
  }],
  PMAK: [{ detail: "postman", re: /PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![\w])/y, hint: "PMAK-" }],
  SG: [{ detail: "sendgrid", re: /SG\.[\w-]{16,32}\.[\w-]{30,50}(?![\w-])/y, hint: "SG." }],
};

/** Known key prefixes that end right before a `-`, `_` or `.` separator. */
const KEY_PREFIXES_BY_SEPARATOR: Record<string, Set<string>> = {
  "-": new Set(
    "sk xoxa xoxb xoxe xoxo xoxp xoxr xoxs xapp glpat gldt glrt tskey xai pypi PMAK".split(" "),
  ),
  "_": new Set(
    ("sk rk ghp gho ghu ghs ghr github_pat glc glsa npm hf gsk lin_api ntn shpat shpca shppa " +
      "shpss vcp vcc vci vca vcr vck dckr_pat figd cfk cfut cfat ops sntrys sntryu doo dop dor")
      .split(" "),
  ),
  ".": new Set("SG hvs hvb hvr".split(" ")),
};
const PREFIX_SOURCE = {
  dash: "sk|xox[abeoprs]|xapp|gl(?:pat|dt|rt)|tskey|xai|pypi|PMAK",
  underscore:
    "sk|rk|gh[pousr]|github_pat|gl(?:c|sa)|npm|hf|gsk|lin_api|ntn|shp(?:at|ca|pa|ss)|vc[pciark]|dckr_pat|figd|cf(?:k|ut|at)|ops|sntry[su]|do[opr]",
};

function specsFor(prefix: string): KeySpec[] | undefined {
  if (prefix.startsWith("gh")) return prefix === "github_pat" ? KEY_SPECS.github_pat : KEY_SPECS.gh;
  return KEY_SPECS[prefix] ??
    KEY_SPECS[prefix.slice(0, 3)] ??
    KEY_SPECS[prefix.slice(0, 2)] ??
    (prefix.startsWith("xapp") ? KEY_SPECS.xox : undefined) ??
    (prefix.startsWith("sntry") ? KEY_SPECS.sntry : undefined);
}

function plausibleKey(m: string, minEntropy: number): boolean {
  if (KNOWN_EXAMPLES.has(m)) return false;
  if (looksLikePlaceholder(m) || hasLongRun(m)) return false;
  return shannonEntropy(m) >= minEntropy;
}

function tryKeySpecs(text: string, start: number, specs: KeySpec[], emit: Push): number {
  for (const spec of specs) {
    spec.re.lastIndex = start;
    const match = spec.re.exec(text);
    if (!match) continue;
    const m = match[0];
    if (!plausibleKey(m, spec.entropy ?? 3)) continue;
    if (spec.check && !spec.check(m)) continue;
    const hint = typeof spec.hint === "string" ? spec.hint : spec.hint(m);
    emit(start, start + m.length, hint + "****", spec.detail);
    return start + m.length;
  }
  return -1;
}

/** At a separator after a key prefix: which prefix it is, then that provider's formats. */
function onKeySeparator(text: string, sep: number, push: Push): void {
  const prefixes = KEY_PREFIXES_BY_SEPARATOR[text[sep]];
  for (let len = 2; len <= 10 && len <= sep; len++) {
    const prefix = text.slice(sep - len, sep);
    if (!prefixes.has(prefix) || !leftBoundary(text, sep - len)) continue;
    const specs = specsFor(prefix);
    if (specs) tryKeySpecs(text, sep - len, specs, push);
    return;
  }
}

/** AWS access key ids and Google API keys: uppercase prefixes, no separator. */
const CAPS_KEY_RE =
  /A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z2-7]{16}(?![A-Za-z0-9])|AIza[\w-]{35}(?![\w-])/y;

function onCapsKey(text: string, i: number, push: Push): void {
  if (!leftBoundary(text, i)) return;
  CAPS_KEY_RE.lastIndex = i;
  const m = CAPS_KEY_RE.exec(text);
  if (!m) return;
  const key = m[0];
  const google = key.startsWith("AIza");
  if (!plausibleKey(key, google ? 3.5 : 3)) return;
  if (google && hasSequentialRun(key, 20)) return;
  push(i, i + key.length, (google ? "AIza" : key.slice(0, 4)) + "****", google ? "google" : "aws");
}

const PEM_RE = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----/y;
const PEM_BODY_RE = /(?:[A-Za-z0-9+/=\s]|\\[nr])*/y;
const SLACK_WEBHOOK_RE =
  /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[\w/-]{20,}/y;
const DATABRICKS_RE = /dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])/y;

/** A PEM private key block, header to footer (or to the end of its base64 when cut short). */
function onPemHeader(text: string, i: number, push: Push): void {
  PEM_RE.lastIndex = i;
  const head = PEM_RE.exec(text);
  if (!head) return;
  const bodyStart = i + head[0].length;
  PEM_BODY_RE.lastIndex = bodyStart;
  const body = PEM_BODY_RE.exec(text)![0];
  if (body.replace(/\\[nr]|\s/g, "").length < 64) return;
  let end = bodyStart + body.length;
  const footer = `-----END ${head[1]}PRIVATE KEY`;
  if (text.startsWith(footer, end)) {
    const close = text.indexOf("-----", end + footer.length);
    end = close >= 0 && close - end < footer.length + 16 ? close + 5 : end + footer.length;
  }
  push(i, end, `-----BEGIN ${head[1]}PRIVATE KEY-----****`, "private_key");
}

/** `at` is the index of `.slack.com/` in `https://hooks.slack.com/...`. */
function onSlackWebhook(text: string, at: number, push: Push): void {
  const start = at - "https://hooks".length;
  if (start < 0) return;
  SLACK_WEBHOOK_RE.lastIndex = start;
  const m = SLACK_WEBHOOK_RE.exec(text);
  if (m) push(start, start + m[0].length, "https://hooks.slack.com/****", "slack_webhook");
}

function onDatabricks(text: string, i: number, push: Push): void {
  if (!leftBoundary(text, i)) return;
  DATABRICKS_RE.lastIndex = i;
  const m = DATABRICKS_RE.exec(text);
  if (m && plausibleKey(m[0], 3)) push(i, i + m[0].length, "dapi****", "databricks");
}

// ---------------------------------------------------------------------------------------------
// db_conn

const PLACEHOLDER_CREDENTIALS = new Set(
  "password pass passwd pwd secret changeme pw xxx x user username test".split(" "),
);

function isUrlTerminator(c: number): boolean {
  // whitespace, " ' ` < > and backslash (JSON escapes end the URL too)
  return isSpaceCode(c) || c === 34 || c === 39 || c === 96 || c === 60 || c === 62 || c === 92;
}

/** `i` is the index of `://`: read the scheme back and the authority forward. */
function onSchemeSeparator(text: string, i: number, push: Push): void {
  // scheme: letters, digits, + . - (and a jdbc: prefix)
  let s = i;
  while (s > 0 && i - s < 32) {
    const c = text.charCodeAt(s - 1);
    if (isAlnumCode(c) || c === 43 || c === 46 || c === 45) s--;
    else break;
  }
  if (s === i || !isAlphaCode(text.charCodeAt(s))) return;
  if (text.startsWith("jdbc:", s - 5)) s -= 5;
  const p = i + 3;
  const limit = Math.min(text.length, p + 2048);
  // the authority ends at the first / (passwords may hold ? and #); the userinfo at its last @
  let e = p;
  let at = -1;
  let colon = -1;
  for (; e < limit; e++) {
    const c = text.charCodeAt(e);
    if (c === 47 || isUrlTerminator(c)) break;
    if (c === 64) at = e;
    else if (c === 58 && colon < 0) colon = e;
  }
  if (at < 0 || colon < 0 || colon > at) return;
  while (e < limit && !isUrlTerminator(text.charCodeAt(e))) e++;
  const user = text.slice(p, colon);
  const password = text.slice(colon + 1, at);
  if (!password || !isAlnumCode(text.charCodeAt(at + 1)) && text[at + 1] !== "[") return;
  if (!plausibleUrlCredential(user, password)) return;
  // trailing punctuation belongs to the sentence, not the URL
  while (e > at + 1 && /[.,;:)\]}]/.test(text[e - 1])) e--;
  const scheme = text.slice(s, i).toLowerCase();
  push(s, e, `${scheme}://****`, scheme);
}

function plausibleUrlCredential(user: string, password: string): boolean {
  if (/^(?:\*+|(?:%2A)+|x+)$/i.test(password)) return false;
  if (/[{}<>]|\$\{|\$\(|^\$[A-Za-z_]|%s/.test(password)) return false;
  if (PLACEHOLDER_CREDENTIALS.has(password.toLowerCase())) return false;
  if (looksLikePlaceholder(password) || looksLikePlaceholder(user)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// password (key = value secrets)

type KeyClass = "password" | "secret";

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
function onAssignment(text: string, sep: number, sepLength: number, push: Push): void {
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
function onFlag(text: string, i: number, push: Push): void {
  FLAG_RE.lastIndex = i;
  const m = FLAG_RE.exec(text);
  if (!m) return;
  const cls = classifyKey(m[0]);
  if (!cls) return;
  const v = readValue(text, i + m[0].length);
  if (!v) return;
  pushKeyedValue(text, v, cls, push);
}

// ---------------------------------------------------------------------------------------------
// token (Bearer, Authorization schemes, JWT)

const TOKEN_VALUE_RE = /[A-Za-z0-9._~+/=-]+/y;
const JWT_RE = /eyJ[A-Za-z0-9_-]{4,}={0,2}\.[A-Za-z0-9_-]{4,}={0,2}(?:\.[A-Za-z0-9_-]*={0,2})?/y;
const AUTH_SCHEME_RE =
  /[Aa]uthorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(Bearer|bearer|Token|token|Basic|basic|Bot)[ \t]+/y;

function plausibleOpaqueToken(v: string): boolean {
  if (v.length < 12 || v.length > 4096) return false;
  if (looksLikePlaceholder(v) || hasLongRun(v)) return false;
  if (!/\d/.test(v) || !/[A-Za-z]/.test(v)) return false;
  return shannonEntropy(v) >= 3;
}

function emitTokenValue(text: string, start: number, emit: Push, scheme: string): void {
  TOKEN_VALUE_RE.lastIndex = start;
  const m = TOKEN_VALUE_RE.exec(text);
  if (!m) return;
  const v = m[0].replace(/[.]+$/, "");
  if (v.startsWith("eyJ") && isStructuralJwt(v)) {
    emit(start, start + v.length, "eyJ****", "jwt");
  } else if (plausibleOpaqueToken(v)) {
    emit(start, start + v.length, "****", scheme);
  }
}

/** `i` is the index of `Bearer ` (a capital B: lowercase ones come with Authorization). */
function onBearer(text: string, i: number, push: Push): void {
  if (!leftBoundary(text, i)) return;
  let p = i + 6;
  while (text[p] === " " || text[p] === "\t") p++;
  emitTokenValue(text, p, push, "bearer");
}

/** `z` is the index of the `z` in `Authorization`. */
function onAuthorization(text: string, z: number, push: Push): void {
  const start = z - 7; // z is the index of the "z" in "Authorization"
  AUTH_SCHEME_RE.lastIndex = start;
  const m = AUTH_SCHEME_RE.exec(text);
  if (m) emitTokenValue(text, start + m[0].length, push, m[1].toLowerCase());
}

/** `j` is the index of the `J` in `eyJ`. */
function onJwt(text: string, j: number, push: Push): void {
  const start = j - 2;
  if (!leftBoundary(text, start)) return;
  JWT_RE.lastIndex = start;
  const m = JWT_RE.exec(text);
  if (m && isStructuralJwt(m[0].replace(/\.$/, ""))) {
    push(start, start + m[0].length, "eyJ****", "jwt");
  }
}

// ---------------------------------------------------------------------------------------------
// email

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

/** `at` is the index of an `@`: read the local part back and the domain forward. */
function onAt(text: string, at: number, push: Push): void {
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
  if (before === ":" && !text.endsWith("mailto", s - 1)) return;
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

// ---------------------------------------------------------------------------------------------
// phone

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
function onPhone(text: string, i: number, push: Push): void {
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
function onPhoneSeparator(text: string, sep: number, push: Push): void {
  let s = sep;
  while (s > 0 && isDigitCode(text.charCodeAt(s - 1))) s--;
  onPhone(text, s, push);
}

// ---------------------------------------------------------------------------------------------
// private_ip

const IPV4_RE = /(?:10|127|172|192)\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w]|\.\d)/y;
const ULA_RE = /f[cd][0-9a-f]{2}:[0-9a-f:]*[0-9a-f](?![\w:])/iy;
/** Words that make a dotted quad a version number: `Oracle Database 10.2.0.4`, `build 10.0.1.2`. */
const VERSION_CONTEXT_RE =
  /\b(?:version|ver|v|release|build|rev|revision|firmware|kernel|patch|upgraded?|upgrading|downgraded?|database|oracle|windows)\W{0,3}$/i;

/**
 * Loopback (127/8) counts as private, as the issue specifies. Real transcripts are full of
 * `127.0.0.1:<port>` (every local dev server), which cases.jsonl labels "keep" by policy:
 * flipping this to false is the one change that policy needs.
 */
export const LOOPBACK_IS_PRIVATE = true;

function isPrivateV4(ip: string): boolean {
  const o = ip.split(".").map(Number);
  if (o.some((n) => n > 255)) return false;
  return o[0] === 10 || (LOOPBACK_IS_PRIVATE && o[0] === 127) ||
    (o[0] === 172 && o[1] >= 16 && o[1] <= 31) || (o[0] === 192 && o[1] === 168);
}

function isUlaV6(ip: string): boolean {
  const halves = ip.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h ? h.split(":") : []));
  if (groups.some((g) => g.length === 0 || g.length > 4)) return false;
  return halves.length === 2 ? groups.length < 8 : groups.length === 8;
}

/** `dot` is the first dot of a quad starting with 10, 127, 172 or 192. */
function onIpv4(text: string, dot: number, push: Push): void {
  let s = dot;
  while (s > 0 && dot - s < 3 && isDigitCode(text.charCodeAt(s - 1))) s--;
  IPV4_RE.lastIndex = s;
  const m = IPV4_RE.exec(text);
  if (!m || !isPrivateV4(m[0])) return;
  const before = text.slice(Math.max(0, s - 40), s);
  const context = before.slice(before.lastIndexOf("\n") + 1);
  if (VERSION_CONTEXT_RE.test(context)) return;
  push(s, s + m[0].length, "***.***.***.***", "ipv4");
}

/** `colon` follows the first group (`fc00`-`fdff`) of a unique-local IPv6 address. */
function onUla(text: string, colon: number, push: Push): void {
  const s = colon - 4;
  ULA_RE.lastIndex = s;
  const m = ULA_RE.exec(text);
  if (m && isUlaV6(m[0])) push(s, s + m[0].length, "****:****::****", "ipv6");
}

// ---------------------------------------------------------------------------------------------
// one pass for all seven rules

const B = String.raw`(?:^|[^A-Za-z0-9_]|\\[nrt])`;
const KEYWORD_END = String
  .raw`(?i:pass(?:word|wd|phrase|code)?|pwd|pswd|secret|token|key|creds?|credentials?)\d*(?:\\?["'])?[ \t]{0,3}`;
const PHONE_GROUP = String.raw`(?:^|[^\w.+-]|(?:^|[^\w.+-])1[-. ])(?:[2-9]\d\d|0\d{1,4})`;
const AUTH_PREFIX = String.raw`[Aa]uthorization\\?["']?[ \t]*[:=][ \t]*\\?["']?`;

/** `(415) 555-0132`: the separator before the last four digits, back to the parenthesis. */
function onParenPhoneSeparator(text: string, sep: number, push: Push): void {
  const open = sep >= 10 ? text.indexOf("(", sep - 10) : text.indexOf("(");
  if (open >= 0 && open < sep) onPhone(text, open, push);
}

/** `i` is the scheme word (`Basic`, `Token`) after an Authorization key. */
function onAuthorizationScheme(text: string, i: number, push: Push): void {
  const start = text.lastIndexOf("uthorization", i);
  if (start > 0 && i - start < 40) onAuthorization(text, start + 6, push);
}

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
    String.raw`_(?<=(?:${PREFIX_SOURCE.underscore})_)`,
    String
      .raw`-(?:----BEGIN |(?=-[\w-]{0,30}(?i:password|passwd|secret|token|api-key|apikey) +[^\s-])|(?<=(?:${PREFIX_SOURCE.dash})-)|\d(?:(?=\d{3})(?<=\([2-9]\d\d\) ?[2-9]\d\d-\d)|(?<=${PHONE_GROUP}-\d)))`,
    String.raw`=(?<=${KEYWORD_END}=)`,
    // rare characters
    String.raw`@(?=[A-Za-z0-9][\w.-]*\.[A-Za-z])(?<=[\w%+-]@)`,
    "A(?=KIA|SIA|BIA|CCA|3T[A-Z0-9]|Iza)",
    String.raw`B(?:(?=earer[ \t])|(?=asic[ \t])(?<=${AUTH_PREFIX}B))`,
    String.raw`T(?=oken[ \t])(?<=${AUTH_PREFIX}T)`,
    String.raw`J(?<=(?:^|[^\w-])eyJ)(?=[\w-]{4,}={0,2}\.eyJ)`,
    String.raw`S(?=G\.)(?<=${B}S)`,
    String.raw`v(?=[sbr]\.)(?<=(?:^|[^\w])hv)`,
    String.raw`\+(?=[1-9])(?<![\w+]\+)`,
    String.raw`d(?=api[a-f0-9]{32})(?<![\w-]d)`,
  ].join("|"),
  "g",
);

const isDigitAt = (text: string, i: number) => isDigitCode(text.charCodeAt(i));

/** Calls the handlers an anchor character at `i` may stand for; each checks its own span. */
function onAnchor(text: string, i: number, push: Push[]): void {
  switch (text.charCodeAt(i)) {
    case 46: // .
      onIpv4(text, i, push[6]);
      onParenPhoneSeparator(text, i, push[5]);
      onPhoneSeparator(text, i, push[5]);
      return;
    case 58: // :
      if (text.startsWith("//", i + 1)) {
        if (text.startsWith("//hooks.slack.com/", i + 1)) onSlackWebhook(text, i + 8, push[0]);
        return onSchemeSeparator(text, i, push[1]);
      }
      if (i >= 4 && (text[i - 4] === "f" || text[i - 4] === "F")) onUla(text, i, push[6]);
      return onAssignment(text, i, 1, push[2]);
    case 95: // _
      return onKeySeparator(text, i, push[0]);
    case 45: // -
      if (text.startsWith("-----BEGIN ", i)) return onPemHeader(text, i, push[0]);
      if (text[i + 1] === "-") return onFlag(text, i, push[2]);
      onKeySeparator(text, i, push[0]);
      if (isDigitAt(text, i + 1)) {
        onParenPhoneSeparator(text, i, push[5]);
        onPhoneSeparator(text, i, push[5]);
      }
      return;
    case 61: // =
      return onAssignment(text, i, 1, push[2]);
    case 64: // @
      return onAt(text, i, push[4]);
    case 65: // A
      return onCapsKey(text, i, push[0]);
    case 66: // B
      if (text.startsWith("Bearer", i)) return onBearer(text, i, push[3]);
      return onAuthorizationScheme(text, i, push[3]);
    case 84: // T
      return onAuthorizationScheme(text, i, push[3]);
    case 74: // J
      return onJwt(text, i, push[3]);
    case 83: // S
      return onKeySeparator(text, i + 2, push[0]);
    case 118: // v
      return onKeySeparator(text, i + 2, push[0]);
    case 43: // +
      return onPhone(text, i, push[5]);
    case 100: // d
      return onDatabricks(text, i, push[0]);
  }
}

/**
 * Finds every built-in rule's candidates in one pass over the text: one regex finds the anchor
 * points of all seven rules, and each anchor's handler reads the span around it. Returns one
 * list per rule, in BUILTIN_RULES order, each in text order.
 */
export function detectBuiltins(text: string): Candidate[][] {
  const buckets: Candidate[][] = BUILTIN_RULES.map(() => []);
  const pushers: Push[] = buckets.map((bucket) => (start, end, replacement, detail, verify) => {
    if (end > start) {
      bucket.push(
        verify ? { start, end, replacement, detail, verify } : { start, end, replacement, detail },
      );
    }
  });
  ANCHOR_RE.lastIndex = 0;
  for (let m = ANCHOR_RE.exec(text); m; m = ANCHOR_RE.exec(text)) onAnchor(text, m.index, pushers);
  return buckets;
}

// ---------------------------------------------------------------------------------------------

/** The built-in rules in claim order. */
export const BUILTIN_RULES: readonly BuiltinRule[] = [
  {
    name: "api_key",
    severity: "high",
    description:
      "Provider API keys with known formats (OpenAI, Anthropic, AWS, GitHub, Slack, Google, ...) and private key blocks",
  },
  {
    name: "db_conn",
    severity: "high",
    description: "Connection URLs that carry a password (postgres://user:pass@host ...)",
  },
  {
    name: "password",
    severity: "high",
    description: "Passwords and secrets assigned to a key (password=..., client_secret: ...)",
  },
  {
    name: "token",
    severity: "high",
    description: "Bearer and Authorization header tokens, and JWTs that decode as JWTs",
  },
  {
    name: "email",
    severity: "low",
    description: "E-mail addresses",
  },
  {
    name: "phone",
    severity: "low",
    description: "Phone numbers in international or separated national formats",
  },
  {
    name: "private_ip",
    severity: "low",
    description: "Private and loopback IPv4 addresses and IPv6 unique-local addresses",
  },
];

export const BUILTIN_RULE_NAMES: readonly BuiltinRuleName[] = BUILTIN_RULES.map((r) => r.name);
