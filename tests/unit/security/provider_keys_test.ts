/**
 * Every provider key format the scanner knows (the table in core/security/rules/provider_keys.ts)
 * has a true positive, for each of its prefixes, and a near miss. A format added to the table
 * without a case here fails the first test.
 */
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { PROVIDER_KEYS, scanText } from "../../../core/security/mod.ts";
import { FakeSecrets } from "./_fake_secrets.ts";

const fake = new FakeSecrets(2024);
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const WORD = ALNUM + "_-";
const B64 = ALNUM + "+/";
const HEX = "0123456789abcdef";
const UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const an = (n: number) => fake.chars(ALNUM, n);
const hex = (n: number) => fake.chars(HEX, n);
const digits = (n: number) => fake.chars("0123456789", n);
const letters = (n: number) =>
  fake.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", n);

interface KeyCase {
  /** A real-format key for one of the format's prefixes. */
  tp: (prefix: string) => string;
  /** Looks almost like the format (one character short, a wrong class): not a key. */
  near: string;
}

const CASES: Record<string, KeyCase> = {
  anthropic: {
    tp: (p) => `${p}ant-api03-${fake.chars(WORD, 93)}AA`,
    near: `sk-ant-api03-${fake.chars(WORD, 70)}`,
  },
  openai_project: { tp: (p) => `${p}proj-${fake.chars(WORD, 60)}`, near: `sk-proj-${an(30)}` },
  openai_marked: {
    tp: (p) => `${p}${an(20)}T3Blbk${"FJ"}${an(20)}`,
    near: `sk-${an(10)}T3Blbk${"FJ"}${an(5)}`,
  },
  openai_legacy: { tp: (p) => p + an(48), near: `sk-${an(31)}` },
  stripe: { tp: (p) => `${p}live_${an(24)}`, near: `sk_live_${an(19)}` },
  github_token: { tp: (p) => p + an(36), near: `gh${"p"}_${an(35)}` },
  github_fine_grained: { tp: (p) => p + an(82), near: `github_pat_${an(60)}` },
  slack_token: {
    tp: (p) => `${p}${digits(12)}-${digits(13)}-${an(24)}`,
    near: `xox${"b"}-${digits(12)}-${letters(7)}`,
  },
  gitlab: { tp: (p) => p + an(20), near: `glpat-${an(19)}` },
  grafana_cloud: { tp: (p) => p + fake.chars(B64, 40), near: `glc_${an(31)}` },
  grafana_service_account: {
    tp: (p) => `${p}${an(32)}_${hex(8)}`,
    near: `glsa_${an(32)}_${hex(7)}`,
  },
  npm: { tp: (p) => p + an(36), near: `npm_${an(35)}` },
  huggingface: { tp: (p) => p + an(34), near: `hf_${an(33)}` },
  groq: { tp: (p) => p + an(52), near: `gsk_${an(47)}` },
  linear: { tp: (p) => p + an(40), near: `lin_api_${an(31)}` },
  notion: { tp: (p) => p + digits(11) + an(35), near: `ntn_${letters(46)}` },
  shopify: { tp: (p) => p + hex(32), near: `shpat_${hex(31)}` },
  vault: { tp: (p) => p + fake.chars(WORD, 95), near: `hvs.${an(89)}` },
  vercel: { tp: (p) => p + an(24), near: `vcp_${an(19)}` },
  docker: { tp: (p) => p + an(36), near: `dckr_pat_${an(26)}` },
  figma: { tp: (p) => p + fake.chars(WORD, 40), near: `figd_${an(39)}` },
  cloudflare: { tp: (p) => p + an(40) + hex(8), near: `cfk_${an(40)}${hex(7)}` },
  tailscale: { tp: (p) => `${p}auth-${an(12)}-${an(20)}`, near: `tskey-auth-${an(12)}-${an(15)}` },
  "1password": { tp: (p) => `${p}ey${fake.chars(B64, 120)}`, near: `ops_ey${an(99)}` },
  xai: { tp: (p) => p + an(80), near: `xai-${an(69)}` },
  sentry: { tp: (p) => p + an(60), near: `sntrys_${an(39)}` },
  pypi: { tp: (p) => `${p}AgEIcHlwaS5vcmc${an(60)}`, near: `pypi-AgEIcHlwaS5vcmc${an(49)}` },
  digitalocean: { tp: (p) => `${p}v1_${hex(64)}`, near: `dop_v1_${hex(63)}` },
  postman: { tp: (p) => `${p}${hex(24)}-${hex(34)}`, near: `PMAK-${hex(24)}-${hex(33)}` },
  sendgrid: { tp: (p) => `${p}${an(22)}.${an(43)}`, near: `SG.${an(15)}.${an(43)}` },
  aws_access_key: {
    tp: (p) => p + (p === "A3T" ? "X" : "") + fake.chars(UPPER32, 16),
    near: `AK${"IA"}${fake.chars(UPPER32, 15)}`,
  },
  google_api_key: { tp: (p) => p + fake.chars(WORD, 35), near: `AI${"za"}${an(34)}` },
  databricks: { tp: (p) => p + hex(32), near: `dapi${hex(31)}` },
};

Deno.test("every provider key format in the table has a test case, and every case a format", () => {
  assertEquals(
    PROVIDER_KEYS.map((k) => k.id).filter((id) => !CASES[id]),
    [],
    "formats without a case",
  );
  const ids = new Set(PROVIDER_KEYS.map((k) => k.id));
  assertEquals(Object.keys(CASES).filter((id) => !ids.has(id)), [], "cases without a format");
  assertEquals(ids.size, PROVIDER_KEYS.length, "format ids are unique");
});

/** Every prefix the scanner must know: dropping one from the table (its keys would go unseen) fails. */
const KNOWN_PREFIXES = (
  "A3T ABIA ACCA AIza AKIA ASIA PMAK- SG. cfat_ cfk_ cfut_ dapi dckr_pat_ doo_ dop_ dor_ figd_ " +
  "gho_ ghp_ ghr_ ghs_ ghu_ github_pat_ glc_ gldt- glpat- glrt- glsa_ gsk_ hf_ hvb. hvr. hvs. " +
  "lin_api_ npm_ ntn_ ops_ pypi- rk_ shpat_ shpca_ shppa_ shpss_ sk- sk_ sntrys_ sntryu_ tskey- " +
  "vca_ vcc_ vci_ vck_ vcp_ vcr_ xai- xapp- xoxa- xoxb- xoxe- xoxo- xoxp- xoxr- xoxs-"
).split(" ");

Deno.test("the table knows every expected key prefix", () => {
  const known = new Set(PROVIDER_KEYS.flatMap((k) => k.prefixes));
  assertEquals(KNOWN_PREFIXES.filter((p) => !known.has(p)), [], "prefixes missing from the table");
  assertEquals(
    [...known].filter((p) => !KNOWN_PREFIXES.includes(p)),
    [],
    "new prefixes: list them here",
  );
});

Deno.test("every provider key format is found, for each of its prefixes, and masked with its hint", async (t) => {
  for (const key of PROVIDER_KEYS) {
    for (const prefix of key.prefixes) {
      const secret = CASES[key.id].tp(prefix);
      await t.step(`${key.id} ${prefix}`, () => {
        key.re.lastIndex = 0;
        const own = key.re.exec(secret);
        assertEquals(own?.[0], secret, "the case is in this format");
        const text = `found ${secret} in the output`;
        const r = scanText(text);
        assertEquals(r.findings.map((f) => [f.rule, f.detail]), [["api_key", key.provider]]);
        assertEquals(text.slice(r.findings[0].start, r.findings[0].end), secret);
        const hint = typeof key.hint === "string" ? key.hint : key.hint(secret);
        assertEquals(r.redacted, `found ${hint}**** in the output`);
      });
    }
  }
});

Deno.test("a near miss of every provider key format is not an api_key", async (t) => {
  for (const key of PROVIDER_KEYS) {
    const near = CASES[key.id].near;
    await t.step(`${key.id}: ${near.slice(0, 24)}...`, () => {
      const r = scanText(`found ${near} in the output`);
      assertEquals(r.findings.filter((f) => f.rule === "api_key").map((f) => f.detail), []);
    });
  }
});

Deno.test("a key glued to a word is not a key (the prefix needs a boundary)", () => {
  const r = scanText(`xgh${"p"}_${an(36)} and Xnpm_${an(36)}`);
  assert(!r.findings.some((f) => f.rule === "api_key"), JSON.stringify(r.findings));
});
