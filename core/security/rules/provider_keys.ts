/**
 * Provider key formats, in ONE table: every prefix the api_key rule knows, the format of the
 * key behind it and the hint a redaction keeps. The anchor regex, the prefix lookup and the
 * tests are all built from this table; adding a provider means adding one entry (and its test
 * case, which the test suite demands).
 *
 * A prefix that ends in `-` or `_` is found at that separator (the one-pass anchor regex stops
 * there and looks behind); any other prefix (`AKIA`, `SG.`, `hvs.`) is found at its rarest
 * character (an uppercase letter, else the least frequent lowercase one: every anchor costs the
 * scan a check wherever that character occurs), looking behind and ahead from there.
 */
import { hasSequentialRun } from "./_text.ts";

export interface ProviderKey {
  /** Unique name of the format, for tests and docs: `openai_project`, `aws_access_key`. */
  id: string;
  /** What a finding's `detail` says: `openai`, `aws`, `github` ... */
  provider: string;
  /** Literal starts of the key, separator included: `sk-`, `ghp_`, `SG.`, `AKIA`. */
  prefixes: readonly string[];
  /** Sticky regex matched at the key's first character. */
  re: RegExp;
  /** The visible hint kept in the replacement, e.g. `sk-`; a function gets the match. */
  hint: string | ((m: string) => string);
  /** Minimum Shannon entropy of the whole match (default 3). */
  entropy?: number;
  check?: (m: string) => boolean;
}

const head = (n: number) => (m: string) => m.slice(0, n);
const upTo = (sep: string) => (m: string) => m.slice(0, m.indexOf(sep) + 1);
const SLACK_PREFIXES = ["xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xapp-"];

/** Tried in this order for a prefix; the first format that matches wins. */
export const PROVIDER_KEYS: readonly ProviderKey[] = [
  {
    id: "anthropic",
    provider: "anthropic",
    prefixes: ["sk-"],
    re: /sk-ant-[a-z]{2,8}\d{2}-[\w-]{80,200}(?![\w-])/y,
    hint: "sk-ant-",
  },
  {
    id: "openai_project",
    provider: "openai",
    prefixes: ["sk-"],
    re: /sk-(?:proj|svcacct|service|admin)-[\w-]{40,300}(?![\w-])/y,
    hint: "sk-",
  },
  {
    id: "openai_marked",
    provider: "openai",
    prefixes: ["sk-"],
    re: /sk-[\w-]{0,200}T3BlbkFJ[\w-]{10,200}(?![\w-])/y,
    hint: "sk-",
  },
  {
    id: "openai_legacy",
    provider: "openai",
    prefixes: ["sk-"],
    re: /sk-[A-Za-z0-9]{32,100}(?![\w-])/y,
    hint: "sk-",
    entropy: 3.5,
    check: (m) => /\d/.test(m) && /[A-Za-z]/.test(m) && !hasSequentialRun(m, 12),
  },
  {
    id: "stripe",
    provider: "stripe",
    prefixes: ["sk_", "rk_"],
    re: /[sr]k_(?:live|test)_[A-Za-z0-9]{20,120}(?![\w])/y,
    hint: head(8),
  },
  {
    id: "github_token",
    provider: "github",
    prefixes: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
    re: /gh[pousr]_[A-Za-z0-9_]{36,255}(?!\w)/y,
    hint: head(4),
  },
  {
    id: "github_fine_grained",
    provider: "github",
    prefixes: ["github_pat_"],
    re: /github_pat_\w{70,255}(?!\w)/y,
    hint: "github_pat_",
  },
  {
    id: "slack_token",
    provider: "slack",
    prefixes: SLACK_PREFIXES,
    re: /(?:xox[abeoprs](?:\.xox[a-z])?|xapp)-(?:\d+-)+[A-Za-z0-9]{8,}(?:-[A-Za-z0-9]+)*(?![\w-])/y,
    hint: upTo("-"),
    check: (m) => m.length >= 30,
  },
  {
    id: "gitlab",
    provider: "gitlab",
    prefixes: ["glpat-", "gldt-", "glrt-"],
    re: /gl(?:pat|dt|rt)-[\w-]{20,128}(?![\w-])/y,
    hint: head(6),
  },
  {
    id: "grafana_cloud",
    provider: "grafana",
    prefixes: ["glc_"],
    re: /glc_[A-Za-z0-9+/]{32,400}={0,2}(?![A-Za-z0-9+/=])/y,
    hint: "glc_",
  },
  {
    id: "grafana_service_account",
    provider: "grafana",
    prefixes: ["glsa_"],
    re: /glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![\w])/y,
    hint: "glsa_",
  },
  {
    id: "npm",
    provider: "npm",
    prefixes: ["npm_"],
    re: /npm_[A-Za-z0-9]{36}(?![\w])/y,
    hint: "npm_",
  },
  {
    id: "huggingface",
    provider: "huggingface",
    prefixes: ["hf_"],
    re: /hf_[A-Za-z0-9]{34,40}(?![\w])/y,
    hint: "hf_",
    entropy: 3.5,
  },
  {
    id: "groq",
    provider: "groq",
    prefixes: ["gsk_"],
    re: /gsk_[A-Za-z0-9]{48,60}(?![\w])/y,
    hint: "gsk_",
  },
  {
    id: "linear",
    provider: "linear",
    prefixes: ["lin_api_"],
    re: /lin_api_[A-Za-z0-9_]{32,128}(?![\w])/y,
    hint: "lin_api_",
  },
  {
    id: "notion",
    provider: "notion",
    prefixes: ["ntn_"],
    re: /ntn_[0-9]{11}[A-Za-z0-9]{35}(?![\w])/y,
    hint: "ntn_",
  },
  {
    id: "shopify",
    provider: "shopify",
    prefixes: ["shpat_", "shpca_", "shppa_", "shpss_"],
    re: /shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,64}(?![\w])/y,
    hint: head(6),
  },
  {
    id: "vault",
    provider: "vault",
    prefixes: ["hvs.", "hvb.", "hvr."],
    re: /hv[sbr]\.[\w-]{90,300}(?![\w-])/y,
    hint: head(4),
  },
  {
    id: "vercel",
    provider: "vercel",
    prefixes: ["vcp_", "vcc_", "vci_", "vca_", "vcr_", "vck_"],
    re: /vc[pciark]_[A-Za-z0-9]{20,60}(?![\w])/y,
    hint: head(4),
  },
  {
    id: "docker",
    provider: "docker",
    prefixes: ["dckr_pat_"],
    re: /dckr_pat_[\w-]{27,}(?![\w-])/y,
    hint: "dckr_pat_",
  },
  {
    id: "figma",
    provider: "figma",
    prefixes: ["figd_"],
    re: /figd_[\w-]{40,200}(?![\w-])/y,
    hint: "figd_",
  },
  {
    id: "cloudflare",
    provider: "cloudflare",
    prefixes: ["cfk_", "cfut_", "cfat_"],
    re: /cf(?:k|ut|at)_[A-Za-z0-9]{40}[0-9a-f]{8}(?![\w])/y,
    hint: upTo("_"),
  },
  {
    id: "tailscale",
    provider: "tailscale",
    prefixes: ["tskey-"],
    re: /tskey-[a-z]{2,20}-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}(?![\w])/y,
    hint: "tskey-",
  },
  {
    id: "1password",
    provider: "1password",
    prefixes: ["ops_"],
    re: /ops_ey[A-Za-z0-9+/=]{100,1280}(?![A-Za-z0-9+/=])/y,
    hint: "ops_",
  },
  {
    id: "xai",
    provider: "xai",
    prefixes: ["xai-"],
    re: /xai-[A-Za-z0-9]{70,90}(?![\w])/y,
    hint: "xai-",
  },
  {
    id: "sentry",
    provider: "sentry",
    prefixes: ["sntrys_", "sntryu_"],
    re: /sntry[su]_[A-Za-z0-9+/=_-]{40,400}/y,
    hint: head(7),
  },
  {
    id: "pypi",
    provider: "pypi",
    prefixes: ["pypi-"],
    re: /pypi-AgEIcHlwaS5vcmc[\w-]{50,}/y,
    hint: "pypi-",
  },
  {
    id: "digitalocean",
    provider: "digitalocean",
    prefixes: ["doo_", "dop_", "dor_"],
    re: /do[opr]_v1_[a-f0-9]{64}(?![\w])/y,
    hint: head(7),
  },
  {
    id: "postman",
    provider: "postman",
    prefixes: ["PMAK-"],
    re: /PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![\w])/y,
    hint: "PMAK-",
  },
  {
    id: "sendgrid",
    provider: "sendgrid",
    prefixes: ["SG."],
    re: /SG\.[\w-]{16,32}\.[\w-]{30,50}(?![\w-])/y,
    hint: "SG.",
  },
  {
    id: "aws_access_key",
    provider: "aws",
    prefixes: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    re: /A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z2-7]{16}(?![A-Za-z0-9])/y,
    hint: head(4),
  },
  {
    id: "google_api_key",
    provider: "google",
    prefixes: ["AIza"],
    re: /AIza[\w-]{35}(?![\w-])/y,
    hint: "AIza",
    entropy: 3.5,
    check: (m) => !hasSequentialRun(m, 20),
  },
  {
    id: "databricks",
    provider: "databricks",
    prefixes: ["dapi"],
    re: /dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])/y,
    hint: "dapi",
  },
];

// ---------------------------------------------------------------------------------------------
// the matcher, built from the table

/** Separators the anchor regex stops at (it looks behind them for a prefix). */
export type KeySeparator = "-" | "_";

/** Formats by prefix (separator left out), for the prefixes found at each separator. */
export const KEYS_AT_SEPARATOR: Readonly<Record<KeySeparator, ReadonlyMap<string, ProviderKey[]>>> =
  {
    "-": new Map(),
    "_": new Map(),
  };
/** A prefix found at one of its own characters: the anchor, `offset` characters in. */
export interface AnchoredPrefix {
  prefix: string;
  offset: number;
  formats: ProviderKey[];
}
/** Prefixes found ahead (`AKIA`, `SG.`, `dapi`), by their anchor character. */
export const KEYS_AT_ANCHOR: ReadonlyMap<string, readonly AnchoredPrefix[]> = new Map();

/** The longest prefix, without its separator: how far back a separator looks. */
export let LONGEST_PREFIX = 0;

/** Lowercase letters from the most to the least frequent in English text and code. */
const LETTER_FREQUENCY = "etaoinshrdlcumwfgypbvkjxqz";

/** The index of the prefix character to anchor at: the first uppercase one, else the rarest. */
function anchorOffset(prefix: string): number {
  let best = 0;
  let bestRarity = -1;
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix[i];
    const rarity = /[A-Z]/.test(c) ? 100 : LETTER_FREQUENCY.indexOf(c);
    if (rarity > bestRarity) [best, bestRarity] = [i, rarity];
  }
  return best;
}

for (const key of PROVIDER_KEYS) {
  for (const prefix of key.prefixes) {
    const sep = prefix[prefix.length - 1];
    let group: Map<string, ProviderKey[]>;
    let name = prefix;
    if (sep === "-" || sep === "_") {
      group = KEYS_AT_SEPARATOR[sep] as Map<string, ProviderKey[]>;
      name = prefix.slice(0, -1);
      LONGEST_PREFIX = Math.max(LONGEST_PREFIX, name.length);
    } else {
      const offset = anchorOffset(prefix);
      const at = KEYS_AT_ANCHOR as Map<string, AnchoredPrefix[]>;
      const list = at.get(prefix[offset]) ?? [];
      const known = list.find((a) => a.prefix === prefix);
      if (known) known.formats.push(key);
      else list.push({ prefix, offset, formats: [key] });
      at.set(prefix[offset], list);
      continue;
    }
    const list = group.get(name) ?? [];
    list.push(key);
    group.set(name, list);
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const longestFirst = (a: string, b: string) => b.length - a.length || (a < b ? -1 : 1);

/** `(?:sk|ghp|...)`: the prefixes found at a separator, as a regex for a lookbehind. */
export function prefixesBefore(sep: KeySeparator): string {
  return `(?:${[...KEYS_AT_SEPARATOR[sep].keys()].sort(longestFirst).map(escape).join("|")})`;
}

/** `A(?=KIA|SIA|...)|v(?<=hv)(?=s\.|...)|...`: one anchor per character of KEYS_AT_ANCHOR. */
export function prefixAnchors(): string[] {
  return [...KEYS_AT_ANCHOR].map(([c, list]) => {
    const ways = list.map(({ prefix, offset }) => {
      const behind = offset ? `(?<=${escape(prefix.slice(0, offset + 1))})` : "";
      return `${behind}(?=${escape(prefix.slice(offset + 1))})`;
    });
    return `${escape(c)}(?:${ways.join("|")})`;
  });
}
