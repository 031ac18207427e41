/**
 * A throw-away project and home folder for guard tests, on the real file system: an `.env`
 * with a (generated, fake) token, its template, clean sources, a lockfile, symlinks that hide
 * secrets behind harmless names, a `secrets/` folder whose `key` holds a token, a 2 MiB log with a key at its end, UTF-16 and binary files
 * holding keys, and home-folder credentials.
 */
import { FakeSecrets } from "./_fake_secrets.ts";

export interface GuardProject {
  root: string;
  proj: string;
  home: string;
  other: string;
  token: string;
  cleanup(): Promise<void>;
}

export async function makeGuardProject(): Promise<GuardProject> {
  const fake = new FakeSecrets(99);
  const token = fake.github();
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "chronicle-guard-proj-" }));
  const proj = `${root}/proj`;
  const home = `${root}/home`;
  const other = `${root}/other`;
  for (
    const d of [
      proj,
      `${proj}/src`,
      `${proj}/config`,
      `${proj}/secrets`,
      home,
      `${home}/.ssh`,
      `${home}/.aws`,
      other,
      `${other}/inner`,
    ]
  ) {
    await Deno.mkdir(d, { recursive: true });
  }
  const w = (p: string, t: string | Uint8Array) =>
    typeof t === "string" ? Deno.writeTextFile(p, t) : Deno.writeFile(p, t);
  await w(`${proj}/.env`, `GITHUB_TOKEN=${token}\nDEBUG=1\n`);
  await w(`${proj}/.env.staging`, "DB_HOST=staging.internal\nFEATURE_FLAGS=on\n");
  await w(`${proj}/.env.example`, "GITHUB_TOKEN=your-token-here\nDEBUG=1\n");
  await w(`${proj}/src/app.ts`, 'export const greeting = "hello";\n// TODO: more\n');
  await w(
    `${proj}/src/util.ts`,
    "export function add(a: number, b: number) {\n  return a + b;\n}\n",
  );
  await w(`${proj}/secrets/key`, `DEPLOY_TOKEN=${fake.github()}\n`);
  await w(`${proj}/README.md`, "# proj\n\nRun `npm test`.\n");
  await w(`${proj}/notes.md`, "Ask jane.roe@acme-corp.io about the release.\n");
  await w(
    `${proj}/config/prod.json`,
    `{"database": "postgres://app:${fake.alnum(8)}Q9!x@db.internal:5432/app"}\n`,
  );
  await w(
    `${proj}/package-lock.json`,
    `{"packages": {"node_modules/x": {"integrity": "sha512-${fake.alnum(86)}=="}}}\n`,
  );
  await w(`${proj}/big.log`, "INFO all good\n".repeat(150_000) + `AWS_SECRET=${fake.aws()}\n`);
  const utf16 = (s: string, bom: boolean) => {
    const out = new Uint8Array((bom ? 2 : 0) + s.length * 2);
    if (bom) out.set([0xff, 0xfe]);
    for (let i = 0; i < s.length; i++) out[(bom ? 2 : 0) + i * 2] = s.charCodeAt(i);
    return out;
  };
  await w(
    `${proj}/utf8-bom.txt`,
    new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(`KEY=${fake.openai()}\n`)]),
  );
  await w(`${proj}/utf16.txt`, utf16(`token = "${fake.github()}"\r\n`, true));
  await w(`${proj}/utf16-nobom.txt`, utf16(`export KEY=${fake.anthropic()}\r\n`, false));
  const binary = new Uint8Array(4096);
  crypto.getRandomValues(binary);
  for (let i = 0; i < binary.length; i += 7) binary[i] = 0;
  const key = new TextEncoder().encode(`\0\0${fake.openai()}\0\0`);
  binary.set(key, 2000);
  await w(`${proj}/store.db`, binary);
  await Deno.symlink(`${proj}/.env`, `${proj}/link-to-env`);
  await Deno.symlink(`${proj}/.env`, `${proj}/yarn.lock`);
  await w(`${other}/creds.txt`, `password = "${fake.password()}"\n`);
  await Deno.symlink(`${other}/inner`, `${proj}/sub`);
  await w(`${home}/.ssh/id_rsa`, fake.pem() + "\n");
  await w(`${home}/.aws/credentials`, "[default]\naws_access_key_id = x\n");
  await w(`${home}/.netrc`, "machine example.org login me password hunter22\n");
  await w(`${home}/.npmrc`, "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n");
  return {
    root,
    proj,
    home,
    other,
    token,
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}
