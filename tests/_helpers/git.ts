/** Runs git in a test repository with a fixed author and date and no user configuration. */
const dec = new TextDecoder();

/** The environment tests run git in: a scratch HOME, no system config, a fixed identity and date. */
export function gitTestEnv(home: string, date: string): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Dev",
    GIT_AUTHOR_EMAIL: "dev@example.com",
    GIT_COMMITTER_NAME: "Dev",
    GIT_COMMITTER_EMAIL: "dev@example.com",
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
}

export async function git(dir: string, args: string[], date = "2026-11-30T09:00:00Z") {
  const r = await new Deno.Command("git", {
    args,
    cwd: dir,
    env: gitTestEnv(dir, date),
    clearEnv: true,
  }).output();
  if (!r.success) throw new Error(`git ${args.join(" ")}: ${dec.decode(r.stderr)}`);
  return dec.decode(r.stdout).trim();
}
