/** The CLI entry: dispatches to a command, maps errors to one clear line and an exit code. */
import { ChronicleError } from "../core/model/mod.ts";
import { VERSION } from "../core/version.ts";
import { termSafe } from "../core/security/terminal.ts";
import { UsageError } from "./args.ts";
import { isOsError, osPhrase } from "./os_error.ts";
import { COMMANDS } from "./commands.ts";
import type { CliIo } from "./io.ts";

export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return `Chronicle ${VERSION}: browse, search and secure the sessions of your AI coding agents.

Usage: chronicle [COMMAND] [OPTIONS]

With no command: import new logs, then ${
    COMMANDS.serve ? "serve the UI (options as for serve)" : "list sessions"
  }.

Commands:
${Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`).join("\n")}

Run "chronicle COMMAND --help" for a command's options.
Exit codes: 0 ok, 1 findings or failure, 2 usage error.
Data: $CHRONICLE_HOME or ~/.chronicle. Chronicle never uses the network beyond 127.0.0.1.
`;
}

/** Runs the CLI with injected I/O; returns the exit code. */
export async function runCli(args: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = args;
  try {
    if (first === undefined) {
      if (COMMANDS.serve) return await COMMANDS.serve.run([], io);
      const code = await COMMANDS.import.run([], io);
      return code !== 0 ? code : await COMMANDS.sessions.run(["--limit", "20"], io);
    }
    if (first === "--help" || first === "-h" || first === "help") {
      io.stdout(mainHelp());
      return 0;
    }
    if (first === "--version" || first === "-V") {
      io.stdout(`chronicle ${VERSION}\n`);
      return 0;
    }
    // `chronicle --port 0` is `chronicle serve --port 0`.
    if (first.startsWith("-") && COMMANDS.serve) return await COMMANDS.serve.run(args, io);
    const cmd = COMMANDS[first];
    if (!cmd) throw new UsageError(`unknown command "${first}"`);
    return await cmd.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(
        `chronicle: ${termSafe(e.message)}\nRun "chronicle ${
          first && COMMANDS[first] ? first + " " : ""
        }--help" for usage.\n`,
      );
      return 2;
    }
    // `chronicle sessions | head`: the reader left; nothing to say
    if (e instanceof Deno.errors.BrokenPipe) return 0;
    const msg = e instanceof ChronicleError
      ? e.message
      : isOsError(e)
      ? osPhrase(e)
      : e instanceof Error
      ? e.message
      : String(e);
    io.stderr(`chronicle: ${termSafe(msg.split("\n")[0])}\n`);
    if (io.env.CHRONICLE_DEBUG && e instanceof Error && e.stack) io.stderr(e.stack + "\n");
    return 1;
  }
}
