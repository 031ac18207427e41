/**
 * `chronicle open`: prints (and opens in the browser) the address of the running Chronicle
 * server, carrying the install token, so the browser signs in. Finds the server through the
 * `server.json` that `chronicle serve` writes in the data folder, and checks it answers.
 */
import { dataDir, readOrCreateToken } from "../runtime/data_dir.ts";
import { TOKEN_HEADER } from "../core/security/local_access.ts";
import { helpOrVersion, parseArgs, UsageError } from "./args.ts";
import type { Command } from "./io.ts";
import { openBrowser, type ServerFile, signInUrl } from "./serve.ts";

export const OPEN_HELP = `Usage: chronicle open [--print]

Prints the address of the running Chronicle server with your install token in it, and opens
it in the default browser; the browser trades the token for a cookie and drops it from the
address. Start the server first with \`chronicle serve\`.

  --print      print the address only; do not open a browser
  -h, --help   show this help
`;

export const openCommand: Command = async (args, io) => {
  const p = parseArgs(args, { print: { type: "boolean" } });
  const early = helpOrVersion(p, OPEN_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const dir = dataDir(io.env);
  let info: ServerFile;
  try {
    info = JSON.parse(await Deno.readTextFile(`${dir}/server.json`));
  } catch {
    io.stderr("Chronicle is not running: start it with `chronicle serve`.\n");
    return 1;
  }
  const token = await readOrCreateToken(dir);
  try {
    const res = await fetch(new URL("api/health", info.url), {
      headers: { [TOKEN_HEADER]: token },
      signal: AbortSignal.timeout(3000),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`it answered ${res.status}`);
  } catch (e) {
    io.stderr(
      `Chronicle is not answering at ${info.url} (${
        (e as Error).message
      }): start it with \`chronicle serve\`.\n`,
    );
    return 1;
  }
  const url = signInUrl(info.url, token);
  io.stdout(url + "\n");
  if (!p.values.print) await openBrowser(url, io);
  return 0;
};
