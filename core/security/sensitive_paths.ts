/**
 * The guard's sensitive-path policy: files a tool may never read, whatever they hold (an
 * `.env`, a private key, cloud credentials, a process's environment), and the templates that
 * look like them but are meant to be read (`.env.example`). The built-in list below is the
 * default; `path:` custom rules add to it (`redact` blocks, `allow` lets a file be read by name;
 * its content is still scanned). User rules decide before the built-ins, allow before block.
 *
 * Patterns: `*` any run of characters but `/`, `**` any run, `?` one character but `/`. A
 * pattern without `/` matches the file's name; one with `/` the whole absolute path. Both the
 * path as written and the path behind every symlink are checked.
 */
import { type CompiledGlob, compileGlobMatcher, globMatches } from "./glob_match.ts";
import { type CustomRule, isPathRule, PATH_RULE_PREFIX } from "./glob_rule.ts";

export interface PathRule {
  /** What the block reason calls it: `an .env file`, `a private key`. */
  name: string;
  pattern: string;
  action: "block" | "allow";
}

/** Built-in: templates first (allowed by name), then what is never read. */
export const SENSITIVE_PATHS: readonly PathRule[] = [
  ...[".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults", "*.env.example"]
    .map((pattern): PathRule => ({ name: "an environment template", pattern, action: "allow" })),
  { name: "an .env file", pattern: ".env", action: "block" },
  { name: "an .env file", pattern: ".env.*", action: "block" },
  { name: "an .env file", pattern: "*.env", action: "block" },
  { name: "an .envrc file", pattern: ".envrc", action: "block" },
  ...["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"].map((
    pattern,
  ): PathRule => ({ name: "an SSH private key", pattern, action: "block" })),
  ...["*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx"].map((
    pattern,
  ): PathRule => ({ name: "a private key or key store", pattern, action: "block" })),
  ...[".netrc", "_netrc", ".pgpass", ".git-credentials", ".my.cnf", ".htpasswd"].map((
    pattern,
  ): PathRule => ({ name: "a credentials file", pattern, action: "block" })),
  ...[
    "**/.aws/credentials",
    "**/.aws/sso/cache/*",
    "**/.config/gcloud/**",
    "application_default_credentials.json",
    "**/.azure/*.json",
    "**/.azure/*.bin",
    "**/.docker/config.json",
    "**/.kube/config",
    "**/.config/gh/hosts.yml",
    "**/.ssh/*_rsa",
    "**/.ssh/*_ed25519",
    "**/.ssh/*_ecdsa",
    "**/.claude/.credentials.json",
    "**/.codex/auth.json",
    "**/.gemini/oauth_creds.json",
    "**/.local/share/opencode/auth.json",
    "**/.config/op/**",
    "*.keychain-db",
    "*.keychain",
    "**/.password-store/**",
    "**/.gnupg/private-keys-v1.d/**",
    "**/.gnupg/secring.gpg",
  ].map((pattern): PathRule => ({ name: "cloud or tool credentials", pattern, action: "block" })),
  { name: "a process environment", pattern: "/proc/*/environ", action: "block" },
  { name: "a process environment", pattern: "/proc/*/task/*/environ", action: "block" },
  { name: "a process environment", pattern: "/proc/self/environ", action: "block" },
];

/**
 * Files whose name is harmless but that hold auth when they say so: `.npmrc` with an
 * `_authToken`, `.pypirc` with a password. Checked on the content, by name.
 */
export const AUTH_CONFIG_FILES: ReadonlyMap<string, RegExp> = new Map([
  [".npmrc", /(?:^|[\s:])_(?:auth|authToken|password)\s*=/m],
  [".yarnrc.yml", /npmAuth(?:Token|Ident)\s*:/],
  [".pypirc", /^\s*password\s*[=:]/m],
  [".gem/credentials", /:\w+_api_key:/],
  ["pip.conf", /\/\/[^/\s:]+:[^@\s]+@/],
]);

interface CompiledPathRule extends PathRule {
  glob: CompiledGlob;
  byName: boolean;
}

const compile = (r: PathRule): CompiledPathRule => ({
  ...r,
  glob: compileGlobMatcher(r.pattern, "path"),
  byName: !r.pattern.includes("/"),
});

const BUILTIN = SENSITIVE_PATHS.map(compile);
const userCache = new WeakMap<readonly CustomRule[], CompiledPathRule[]>();

function userRules(rules: readonly CustomRule[] | undefined): CompiledPathRule[] {
  if (!rules?.length) return [];
  let out = userCache.get(rules);
  if (!out) {
    out = rules.filter((r) => r.enabled && isPathRule(r)).map((r) =>
      compile({
        name: `the path rule "${r.name}"`,
        pattern: r.pattern.slice(PATH_RULE_PREFIX.length),
        action: r.action === "allow" ? "allow" : "block",
      })
    );
    // allow before block, each in claim order
    out.sort((a, b) => (a.action === b.action ? 0 : a.action === "allow" ? -1 : 1));
    userCache.set(rules, out);
  }
  return out;
}

function matches(rule: CompiledPathRule, path: string): boolean {
  return globMatches(rule.glob, rule.byName ? path.slice(path.lastIndexOf("/") + 1) : path);
}

export interface PathVerdict {
  action: "block" | "allow";
  /** The rule's name, for the reason. */
  name: string;
}

/**
 * What the policy says of a file, given every name it goes by (as written, and the real path
 * behind symlinks): the first user rule that matches any of them, else the first built-in;
 * null when none does (then only its content decides).
 */
export function pathVerdict(
  paths: readonly string[],
  rules?: readonly CustomRule[],
): PathVerdict | null {
  for (const list of [userRules(rules), BUILTIN]) {
    let block: CompiledPathRule | undefined;
    for (const rule of list) {
      if (!paths.some((p) => matches(rule, p))) continue;
      if (rule.action === "allow") return { action: "allow", name: rule.name };
      block ??= rule;
    }
    if (block) return { action: "block", name: block.name };
  }
  return null;
}

/** The auth pattern for a file that is sensitive only when it holds auth, by its path. */
export function authConfigPattern(path: string): RegExp | null {
  for (const [name, re] of AUTH_CONFIG_FILES) {
    if (path === name || path.endsWith("/" + name)) return re;
  }
  return null;
}
