/**
 * `chronicle serve`: serve the UI and API on 127.0.0.1 at once, import what changed in the
 * background (newest sessions first; cli/serve_import.ts), keep importing changed logs, and
 * follow the sessions people view live. `chronicle` with no command does the same.
 */
import { createGitEngine, type GitEngine, gitEnv } from "../core/git/mod.ts";
import type { ImportProgress, LiveService } from "../core/live/mod.ts";
import type { ChronicleStore } from "../core/store/mod.ts";
import { VERSION } from "../core/version.ts";
import { readOrCreateToken } from "../runtime/data_dir.ts";
import { denoProcessRunner } from "../runtime/process_runner.ts";
import { type AppDeps, createApp, type SecurityService } from "../server/app.ts";
import { buildDoctorReport } from "../core/doctor/mod.ts";
import { doctorProbes } from "./doctor.ts";
import { TOKEN_PARAM } from "../server/auth.ts";
import { type CheckRunner, createCheckWorker } from "../server/check_runner.ts";
import { createSecurityService } from "../server/security_service.ts";
import { oneAtATime, type SessionWork } from "../server/session_work.ts";
import { createReplayService, type ReplayService } from "../server/replay_service.ts";
import { createEventHub, type EventHub } from "../server/sse.ts";
import { helpOrVersion, parseArgs, str, UsageError } from "./args.ts";
import { openUserStore } from "./context.ts";
import {
  changeGuardHook,
  expectedGuardCommand,
  guardHookStatus,
  installGuardProgram,
} from "./guard.ts";
import { takeGuardJournal, writeGuardRules } from "../guard/files.ts";
import { dataDir } from "../runtime/data_dir.ts";
import type { CliIo, Command } from "./io.ts";
import { startImporting } from "./serve_import.ts";
import { serveArchive } from "./serve_archive.ts";
import { loadExcludeRules } from "../runtime/exclude_file.ts";

export const SERVE_HELP = `Usage: chronicle serve [--port N] [--no-import] [--open]

Serves Chronicle's browser UI and JSON API on http://127.0.0.1:PORT/ at once, and imports
new and changed agent logs in the background (newest sessions first; the UI shows how far
it is), then keeps importing changed logs and updates the sessions you watch live. Only
loopback, and only its owner: the server refuses requests whose Host is not
127.0.0.1/localhost with its port, and every request without the install token (in the
data folder, 0600). It prints an address carrying the token; the browser trades it for a
cookie (--open opens it).

Options:
  --port N          port to listen on (default 4173; 0 picks a free one)
  --no-import       do not import, neither at start nor in the background
  --interval SECS   seconds between background imports (default 5)
  --open            open the UI in the default browser
  -h, --help        show this help
`;

export const DEFAULT_PORT = 4173;

export interface ServeOptions {
  store: ChronicleStore;
  token: string;
  /** 0 picks a free port. */
  port: number;
  security?: SecurityService;
  /** Where heavy work on one whole session waits its turn (server/session_work.ts). */
  sessionWork?: SessionWork;
  replay?: ReplayService;
  git?: GitEngine;
  events?: EventHub;
  /** Live views of sessions; shut down with the server. */
  live?: LiveService;
  importProgress?: () => ImportProgress;
  /** `GET /api/doctor`'s report. */
  doctor?: AppDeps["doctor"];
  /** Forgetting and the exclude list. */
  archive?: AppDeps["archive"];
  /** Called once the socket is bound. */
  onListen?: (url: string) => void;
  signal?: AbortSignal;
}

export interface RunningServer {
  url: string;
  port: number;
  events: EventHub;
  /** Resolves when the server has stopped. */
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** Binds the app to 127.0.0.1 (never another address) and starts serving. */
export function startServer(options: ServeOptions): Promise<RunningServer> {
  const events = options.events ?? createEventHub();
  let boundPort = options.port;
  const handler = createApp({
    store: options.store,
    token: options.token,
    port: () => boundPort,
    security: options.security,
    sessionWork: options.sessionWork,
    replay: options.replay,
    git: options.git,
    events,
    live: options.live,
    importProgress: options.importProgress,
    doctor: options.doctor,
    archive: options.archive,
    version: VERSION,
  });
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port,
      signal: options.signal,
      onListen: () => {},
    }, handler);
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      return Promise.reject(
        new Error(`Cannot listen on 127.0.0.1:${options.port}: the port is in use (try --port 0)`),
      );
    }
    return Promise.reject(e);
  }
  boundPort = server.addr.port;
  const url = `http://127.0.0.1:${boundPort}/`;
  options.onListen?.(url);
  return Promise.resolve({
    url,
    port: boundPort,
    events,
    finished: server.finished,
    shutdown: async () => {
      // Event streams never end by themselves: end them, or the server waits for them.
      events.close();
      await options.live?.close();
      await server.shutdown();
    },
  });
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PORT;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new UsageError(`--port takes a number 0..65535, not "${raw}"`);
  }
  return Number(raw);
}

/** The address that signs a browser in: the server's URL with the token (auth.ts trades it). */
export function signInUrl(serverUrl: string, token: string): string {
  return `${serverUrl}?${TOKEN_PARAM}=${encodeURIComponent(token)}`;
}

/** What `chronicle open` needs to find the running server (`server.json`, 0600). */
export interface ServerFile {
  url: string;
  port: number;
  pid: number;
}

async function writeServerFile(dir: string, info: ServerFile): Promise<void> {
  const path = `${dir}/server.json`;
  await Deno.writeTextFile(path, JSON.stringify(info) + "\n", { mode: 0o600 });
  await Deno.chmod(path, 0o600);
}

async function removeServerFile(dir: string, pid: number): Promise<void> {
  try {
    const info = JSON.parse(await Deno.readTextFile(`${dir}/server.json`)) as ServerFile;
    if (info.pid === pid) await Deno.remove(`${dir}/server.json`);
  } catch {
    // gone already, or another server's
  }
}

export async function openBrowser(url: string, io: CliIo): Promise<void> {
  const cmd = Deno.build.os === "darwin"
    ? "open"
    : Deno.build.os === "windows"
    ? "explorer"
    : "xdg-open";
  try {
    const child = new Deno.Command(cmd, { args: [url], stdout: "null", stderr: "null" }).spawn();
    await child.status;
  } catch {
    io.stderr(`Could not open a browser; open ${url} yourself.\n`);
  }
}

export const serveCommand: Command = async (args, io) => {
  const p = parseArgs(args, {
    port: { type: "string" },
    host: { type: "string" },
    "no-import": { type: "boolean" },
    interval: { type: "string" },
    open: { type: "boolean" },
  });
  const early = helpOrVersion(p, SERVE_HELP, io);
  if (early !== null) return early;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const host = str(p.values.host);
  if (host !== undefined && host !== "127.0.0.1" && host !== "localhost") {
    throw new UsageError(
      `refusing to listen on "${host}": Chronicle serves 127.0.0.1 only (your transcripts stay local)`,
    );
  }
  const port = parsePort(str(p.values.port));
  const interval = p.values.interval === undefined ? 5 : Number(p.values.interval);
  if (!Number.isFinite(interval) || interval < 1) {
    throw new UsageError("--interval takes a number of seconds >= 1");
  }
  const importing = p.values["no-import"] !== true;

  const { store, dir } = await openUserStore(io);
  // Imports write through their own connection: a bulk pass keeps a transaction open across
  // units, and what the server writes meanwhile (a rule) must not join it.
  const writer = importing ? (await openUserStore(io)).store : null;
  const token = await readOrCreateToken(dir);
  const events = createEventHub();
  const importer = writer
    ? startImporting({
      store,
      writer,
      io,
      tempRoot: `${dir}/tmp`,
      intervalS: interval,
      events,
      terminal: io.isTerminal,
      lockDir: dir,
      exclude: () => loadExcludeRules(dir, io.env.HOME ?? ""),
    })
    : null;
  try {
    // security checks run in a worker with no permissions, started by the first check and
    // stopped when idle: the API answers during a long one
    const checks = createCheckWorker();
    // heavy work on one whole session, one at a time: the API's and the security checks'
    const sessionWork = oneAtATime();
    const security = securityFor(store, io, { events, checks, sessionWork });
    const stop = new AbortController();
    const replay = createReplayService(store, { dataDir: dir, env: io.env, sessionWork });
    // The port is bound (or reported busy) before anything is imported.
    const server = await startServer({
      store,
      token,
      port,
      security,
      sessionWork,
      replay,
      events,
      git: createGitEngine(denoProcessRunner, { env: gitEnv(io.env) }),
      live: importer?.live,
      importProgress: importer?.progress,
      archive: serveArchive({ dir, store, importer, events }),
      doctor: ({ verifyPacks }) =>
        buildDoctorReport(
          doctorProbes(io, {
            store,
            verifyPacks,
            self: { url: server.url, port: server.port, pid: Deno.pid },
          }),
        ),
      signal: stop.signal,
    });
    // what the guard journals shows up live (it decides without the server)
    const journalTimer = setInterval(() => {
      try {
        security.ingestInterceptions?.();
      } catch (e) {
        io.stderr(`chronicle: reading the guard's journal failed: ${(e as Error).message}\n`);
      }
    }, 1000);
    const signIn = signInUrl(server.url, token);
    io.stdout(
      `Chronicle is serving ${server.url}  (Ctrl-C to stop)\n` +
        `Open it with this address (it carries your install token; \`chronicle open\` prints it again):\n` +
        `  ${signIn}\n`,
    );
    await writeServerFile(dir, { url: server.url, port: server.port, pid: Deno.pid });
    // The first import runs in the background: the UI answers meanwhile and fills in.
    importer?.start();
    if (p.values.open) await openBrowser(signIn, io);

    const onSignal = () => {
      // Streams first (the server waits for open responses), then the server stops.
      events.close();
      if (importer) void importer.stop().finally(() => stop.abort());
      else stop.abort();
    };
    Deno.addSignalListener("SIGINT", onSignal);
    if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", onSignal);
    try {
      await server.finished;
    } finally {
      clearInterval(journalTimer);
      checks.close();
      await removeServerFile(dir, Deno.pid);
      await importer?.stop();
      replay.close();
      events.close();
      Deno.removeSignalListener("SIGINT", onSignal);
      if (Deno.build.os !== "windows") Deno.removeSignalListener("SIGTERM", onSignal);
    }
    return 0;
  } finally {
    writer?.close();
    store.close();
  }
};

/**
 * The security engine for the API: the guard hook install wired to cli/guard.ts, and the
 * guard's files in the data folder (the rules it reads, the journal it appends to).
 */
export function securityFor(
  store: ChronicleStore,
  io: CliIo,
  options: { events?: EventHub; checks?: CheckRunner; sessionWork?: SessionWork } = {},
): SecurityService {
  const { events, checks } = options;
  const dir = dataDir(io.env);
  return createSecurityService({
    store,
    runCheck: checks?.run,
    sessionWork: options.sessionWork,
    guardFiles: {
      takeJournal: () => takeGuardJournal(dir),
      writeRules: (rules) => writeGuardRules(dir, rules),
    },
    onInterception: (i) => events?.publish("interception", i),
    guard: {
      status: async () => guardHookStatus(io.env, await expectedGuardCommand(io)),
      change: async ({ install, dryRun }) =>
        changeGuardHook(io.env, {
          install,
          dryRun,
          command: install && !dryRun
            ? await installGuardProgram(io)
            : await expectedGuardCommand(io),
        }),
    },
  });
}
