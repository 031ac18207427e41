/** Runs git in a test repository with a fixed author and date and no user configuration. */
const dec = new TextDecoder();

export async function git(dir: string, args: string[], date = "2026-11-30T09:00:00Z") {
  const r = await new Deno.Command("git", {
    args,
    cwd: dir,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Dev",
      GIT_AUTHOR_EMAIL: "dev@example.com",
      GIT_COMMITTER_NAME: "Dev",
      GIT_COMMITTER_EMAIL: "dev@example.com",
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    },
    clearEnv: true,
  }).output();
  if (!r.success) throw new Error(`git ${args.join(" ")}: ${dec.decode(r.stderr)}`);
  return dec.decode(r.stdout).trim();
}
