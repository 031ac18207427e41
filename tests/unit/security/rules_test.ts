import { assert, assertEquals } from "../../_helpers/assert.ts";
import { FIXTURES } from "../../_helpers/fixtures.ts";
import { type BuiltinRuleName, classifyKey, scanText } from "../../../core/security/mod.ts";
import { CATEGORY_RULE, loadCases, scoreCases } from "../../bench/secret_cases.ts";
import { FakeSecrets } from "./_fake_secrets.ts";

const cases = loadCases(await Deno.readTextFile(`${FIXTURES}/secrets/cases.jsonl`));

/**
 * Labelled cases the engine deliberately decides the other way, with the reason. Everything
 * else in cases.jsonl must come out as labelled.
 */
const POLICY_FLIPS: Record<number, string> = {
  141: "the issue puts loopback (127/8) in private_ip; the case file labels it keep by policy",
};

Deno.test("every labelled case in cases.jsonl comes out as labelled", async (t) => {
  assertEquals(cases.length, 143);
  for (const [i, c] of cases.entries()) {
    if (POLICY_FLIPS[i]) continue;
    await t.step(`#${i} ${c.expect} ${c.category}: ${c.text.slice(0, 60)}`, () => {
      const r = scanText(c.text);
      if (c.expect === "keep") {
        assertEquals(r.findings.map((f) => `${f.rule}:${c.text.slice(f.start, f.end)}`), []);
        assertEquals(r.redacted, c.text);
      } else {
        const want = CATEGORY_RULE[c.category];
        assert(r.findings.some((f) => f.rule === want), `${want} did not fire`);
        assertEquals(r.findings.filter((f) => f.rule !== want).map((f) => f.rule), []);
      }
    });
  }
});

Deno.test("the policy flips in cases.jsonl are decided as the issue asks", () => {
  const r = scanText(cases[141].text);
  assertEquals(r.findings.map((f) => f.rule), ["private_ip"]);
});

Deno.test("per-rule precision and recall on cases.jsonl stay at their measured level", () => {
  const { scores } = scoreCases(cases);
  for (const s of scores) {
    assertEquals(s.recall, 1, `${s.rule} recall`);
    // private_ip loses one to the loopback policy flip (#141)
    assert(s.precision >= (s.rule === "private_ip" ? 0.875 : 1), `${s.rule} precision`);
  }
});

const fake = new FakeSecrets(11);
const keys = {
  openai: fake.openai(),
  anthropic: fake.anthropic(),
  aws: fake.aws(),
  github: fake.github(),
  slack: fake.slack(),
  google: fake.google(),
  stripe: fake.stripe(),
  jwt: fake.jwt(),
  password: fake.password(),
  pem: fake.pem(),
};

interface RuleCase {
  name: string;
  input: string;
  /** The rules expected, in order; [] for a tricky negative. */
  rules: BuiltinRuleName[];
  /** The exact redacted text, when it matters. */
  redacted?: string;
}

const TABLE: RuleCase[] = [
  // api_key
  {
    name: "an OpenAI project key in a dotenv line",
    input: `OPENAI_API_KEY=${keys.openai}`,
    rules: ["api_key"],
    redacted: "OPENAI_API_KEY=sk-****",
  },
  {
    name: "an Anthropic key inside a JSON-escaped transcript line",
    input: `{"content":"export ANTHROPIC_API_KEY=${keys.anthropic}\\nnext"}`,
    rules: ["api_key"],
    redacted: '{"content":"export ANTHROPIC_API_KEY=sk-ant-****\\nnext"}',
  },
  {
    name: "a key right after a JSON-escaped line break",
    input: `"AWS keys:\\n${keys.aws}\\n"`,
    rules: ["api_key"],
    redacted: '"AWS keys:\\nAKIA****\\n"',
  },
  {
    name: "a GitHub token in a shell history",
    input: `gh auth login --with-token ${keys.github}`,
    rules: ["api_key"],
  },
  { name: "a Slack bot token in YAML", input: `slack:\n  bot: ${keys.slack}`, rules: ["api_key"] },
  { name: "a Google key in a JS object", input: `{ key: '${keys.google}' }`, rules: ["api_key"] },
  { name: "a Stripe live key", input: `stripe.api_key = "${keys.stripe}"`, rules: ["api_key"] },
  {
    name: "a PEM private key block, whole",
    input: `cat id_rsa\n${keys.pem}\ndone`,
    rules: ["api_key"],
    redacted: "cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----****\ndone",
  },
  {
    name: "a PEM header without a body is prose",
    input: 'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
    rules: [],
  },
  { name: "sk- inside a word is no key", input: `task-${keys.github.slice(4)}`, rules: [] },
  { name: "a key glued to more word characters is no key", input: `x${keys.aws}`, rules: [] },
  {
    name: "a masked GitHub token",
    input: "GITHUB_TOKEN=ghp_************************************",
    rules: [],
  },
  { name: "a truncated Anthropic key", input: "sk-ant-api03-abcdef", rules: [] },
  {
    name: "a base64 blob",
    input: "data:font/woff2;base64,d09GMgABAAAAAAZgAA0AAAAADEQAAAYKAAEAAAAAAAAAAAAA",
    rules: [],
  },

  // db_conn
  {
    name: "a postgres URL is one finding, not an e-mail and a password",
    input: `DATABASE_URL=postgres://admin:${keys.password}@db.prod.acme.io:5432/app`,
    rules: ["db_conn"],
    redacted: "DATABASE_URL=postgres://****",
  },
  {
    name: "a password with @ and / in the userinfo",
    input: "mongodb://svc:p@ss/w0rd@mongo.internal.net:27017/db?authSource=admin",
    rules: ["db_conn"],
  },
  {
    name: "an https URL with basic-auth credentials",
    input: "curl https://deploy:Zq81xLmw02@registry.acme.io/v2/",
    rules: ["db_conn"],
  },
  {
    name: "a credential URL ends at the sentence's punctuation",
    input: "use redis://:s3cr3tR3dis@cache.local:6379.",
    rules: ["db_conn"],
    redacted: "use redis://****.",
  },
  { name: "a URL without a password", input: "postgres://app@db.local/app", rules: [] },
  { name: "a URL with a path @", input: "https://github.com/acme/api/tree/main@v2", rules: [] },
  { name: "a templated URL", input: "postgres://$DB_USER:$DB_PASS@$DB_HOST/db", rules: [] },

  // password
  {
    name: "a YAML password",
    input: `database:\n  password: ${keys.password}\n`,
    rules: ["password"],
  },
  {
    name: "a password in an escaped JSON document",
    input: `{\\"password\\": \\"${keys.password}\\"}`,
    rules: ["password"],
    redacted: '{\\"password\\": \\"****\\"}',
  },
  {
    name: "a token in a URL query stops at the next parameter",
    input: `GET /callback?access_token=${fake.alnum(32)}&state=xyz`,
    rules: ["password"],
    redacted: "GET /callback?access_token=****&state=xyz",
  },
  {
    name: "a --password flag with a space",
    input: `db-cli --password ${keys.password} --host db`,
    rules: ["password"],
  },
  {
    name: "an X-Api-Key header",
    input: `-H "X-Api-Key: ${fake.hex(32)}"`,
    rules: ["password"],
  },
  {
    name: "a TypeScript parameter type",
    input: "export function login(token: string): Promise<void> {",
    rules: [],
  },
  {
    name: "a Python type annotation",
    input: "def connect(password: Optional[str] = None):",
    rules: [],
  },
  { name: "a config lookup", input: "password = os.environ.get('DB_PASSWORD')", rules: [] },
  { name: "an awaited call", input: "password = await vault.read(path)", rules: [] },
  { name: "a ternary", input: 'log(ok ? "PASS" : "FAIL", name)', rules: [] },
  { name: "prose with the word pass", input: "The import pass: discover every unit", rules: [] },
  { name: "a password given in prose", input: "the password: Hunter2-Blue", rules: ["password"] },
  { name: "a heading in prose", input: "URIs with credentials: `https?://[^/]+`", rules: [] },
  {
    name: "minified code",
    input: "{password:e,passwordVerification:t,token:e.tokens.length-1,end:-1,open:i.can_open}",
    rules: [],
  },
  { name: "a fetch option", input: "fetch(url, { credentials: same-origin })", rules: [] },
  { name: "a generic type", input: "type T = { token: Pick<Token, 'type'> }", rules: [] },
  { name: "a camelCase variable", input: "const opts = {token: lastEventId}", rules: [] },
  { name: "optional chaining", input: "token: options?.resumptionToken", rules: [] },
  { name: "a user:secret example", input: 'auth = "admin:secret"', rules: [] },
  {
    name: "a package version",
    input: '"@secretlint/secretlint-rule-1password": "13.0.7",',
    rules: [],
  },
  { name: "a not-a-secret value", input: 'client_secret = "notasecret"', rules: [] },
  { name: "a declaration", input: "const apiKey = loadKey(config);", rules: [] },
  {
    name: "a variable passed along",
    input: "client = Client(api_key=api_key, secret=secret)",
    rules: [],
  },
  {
    name: "token counts",
    input: '"usage": {"input_tokens": 1234, "output_tokens": 99}',
    rules: [],
  },
  { name: "a max_tokens setting", input: "max_tokens: 4096", rules: [] },
  { name: "a tokenizer name", input: 'tokenizer: "cl100k_base"', rules: [] },
  { name: "a form label", input: 'password: "Enter your password"', rules: [] },
  { name: "a pagination token", input: 'next_page_token: "CAESGgoYCJ2M6pGlz8QCEJiV"', rules: [] },
  { name: "a secret's file path", input: "client_secret: ./secrets/client.json", rules: [] },
  {
    name: "a bcrypt hash is not the password",
    input: 'password: "$2b$12$abcdefghijklmnopqrstuv"',
    rules: [],
  },

  // token
  {
    name: "a Bearer JWT in a curl header keeps the scheme",
    input: `curl -H "Authorization: Bearer ${keys.jwt}" https://api`,
    rules: ["token"],
    redacted: 'curl -H "Authorization: Bearer eyJ****" https://api',
  },
  { name: "a JWT as a cookie value", input: `Cookie: session=${keys.jwt}`, rules: ["token"] },
  {
    name: "a JWT in an access_token field goes to the token rule",
    input: `{"access_token": "${keys.jwt}"}`,
    rules: ["token"],
    redacted: '{"access_token": "eyJ****"}',
  },
  {
    name: "an opaque bearer token",
    input: `Authorization: Bearer ${fake.alnum(40)}`,
    rules: ["token"],
  },
  {
    name: "a Basic header",
    input: `Authorization: Basic ${btoa("deploy:" + fake.alnum(12))}`,
    rules: ["token"],
  },
  {
    name: "Bearer as a word in prose",
    input: "Use Bearer authentication for every request",
    rules: [],
  },
  { name: "a token_type field", input: '"token_type": "Bearer", "expires_in": 3600', rules: [] },
  {
    name: "three base64 parts that are not JSON",
    input: "eyJub3QganNvbg.eyJub3QganNvbg.c2lnbmF0dXJl",
    rules: [],
  },

  // email
  {
    name: "an address in a git log",
    input: "Author: Dev One <dev.one@acme-corp.com>",
    rules: ["email"],
  },
  {
    name: "an address after a JSON-escaped line break",
    input: '"a\\nops@acme.io"',
    rules: ["email"],
    redacted: '"a\\n***@***.io"',
  },
  { name: "a mailto link", input: '<a href="mailto:sales@acme.io">', rules: ["email"] },
  { name: "a decorator", input: "@Component({ selector: 'app' })", rules: [] },
  {
    name: "a scoped package with a version",
    input: "deno add npm:@preact/signals@1.3.0",
    rules: [],
  },
  { name: "a retina asset", input: "logo@3x.webp", rules: [] },
  { name: "a reserved example domain", input: "admin@example.org", rules: [] },
  { name: "base64 noise around an @", input: "QmFz@aPeb95Si.ebcpputyvjB", rules: [] },

  // phone
  { name: "a NANP number with dots", input: "call 415.555.0199 today", rules: ["phone"] },
  { name: "an E.164 number", input: "phone: +14155550199", rules: ["phone"] },
  {
    name: "a UK number in international form",
    input: "Office: +44 (0)20 7946 0958",
    rules: ["phone"],
  },
  {
    name: "a national number with spaces only is not matched",
    input: "ref 020 7946 0958",
    rules: [],
  },
  { name: "a mixed-separator run is not a NANP number", input: "415-555.0199", rules: [] },
  { name: "a date", input: "released 2024-05-17", rules: [] },
  { name: "a time with milliseconds", input: "12:01:33.456", rules: [] },
  { name: "a diff hunk header", input: "@@ -120,7 +120,9 @@ function x()", rules: [] },
  { name: "a semver range", input: '"deno": "^2.1.4"', rules: [] },
  { name: "a UUID", input: "id 550e8400-e29b-41d4-a716-446655440000", rules: [] },
  { name: "SVG path numbers", input: '<path d="M 01-3127-603 L2 3"/>', rules: [] },
  { name: "a timezone offset", input: "2024-01-01T10:00:00+0530", rules: [] },

  // private_ip
  { name: "a docker bridge address", input: "gateway 172.17.0.1", rules: ["private_ip"] },
  {
    name: "a CIDR keeps its prefix",
    input: "10.0.0.0/8",
    rules: ["private_ip"],
    redacted: "***.***.***.***/8",
  },
  { name: "loopback is in scope", input: "listening on 127.0.0.1:8000", rules: ["private_ip"] },
  { name: "a public address", input: "1.1.1.1 and 93.184.216.34", rules: [] },
  { name: "a version with a v prefix", input: "v10.1.2.3", rules: [] },
  { name: "a dotted quad with a fifth part", input: "10.1.2.3.4", rules: [] },
  { name: "a firmware version", input: "firmware 10.4.1.2 installed", rules: [] },
  { name: "an IPv6 ULA with too many groups", input: "fd00:1:2:3:4:5:6:7:8", rules: [] },
];

Deno.test("built-in rules: true positives and tricky negatives", async (t) => {
  for (const c of TABLE) {
    await t.step(c.name, () => {
      const r = scanText(c.input);
      assertEquals(r.findings.map((f) => f.rule), c.rules);
      if (c.redacted !== undefined) assertEquals(r.redacted, c.redacted);
      for (const f of r.findings) {
        // the replacement never carries the secret, and redacted text never does either
        const secret = c.input.slice(f.start, f.end);
        assert(!f.replacement.includes(secret), `replacement leaks ${secret}`);
        if (secret.length >= 8) assert(!r.redacted.includes(secret), `redacted leaks ${secret}`);
      }
    });
  }
});

Deno.test("classifyKey() reads a key by its last word", async (t) => {
  const table: [string, ReturnType<typeof classifyKey>][] = [
    ["DB_PASSWORD", "password"],
    ["PGPASSWORD", "password"],
    ["db_pass", "password"],
    ["--password", "password"],
    ["client_secret", "secret"],
    ["aws_secret_access_key", "secret"],
    ["apiKey", "secret"],
    ["X-Api-Key", "secret"],
    ["GH_TOKEN", "secret"],
    ["_authToken", "secret"],
    ["bot_token1", "secret"],
    ["PASSWORD_MIN_LENGTH", null],
    ["passwordVariable", null],
    ["credentialsId", null],
    ["csrf-token", null],
    ["max_tokens", null],
    ["next_page_token", null],
    ["public_key", null],
    ["key", null],
    ["bypass", null],
  ];
  for (const [key, want] of table) {
    await t.step(key, () => assertEquals(classifyKey(key), want));
  }
});

Deno.test("each finding names its rule and keeps a hint of the kind", () => {
  const text = [
    `key ${keys.openai}`,
    `jwt ${keys.jwt}`,
    "mail dev@acme.io",
    "tel +1 415 555 0132",
    "ip 192.168.10.20",
    `pg postgres://u:${keys.password}@h.io/db`,
  ].join("\n");
  const r = scanText(text);
  assertEquals(
    r.redacted,
    [
      "key sk-****",
      "jwt eyJ****",
      "mail ***@***.io",
      "tel +***-***-****",
      "ip ***.***.***.***",
      "pg postgres://****",
    ].join("\n"),
  );
  assertEquals(r.findings.map((f) => [f.rule, f.line, f.column]), [
    ["api_key", 1, 5],
    ["token", 2, 5],
    ["email", 3, 6],
    ["phone", 4, 5],
    ["private_ip", 5, 4],
    ["db_conn", 6, 4],
  ]);
});
