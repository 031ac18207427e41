/**
 * A real Chronicle server for live tests, in this process: a data folder on disk, the import
 * worker, Deno.watchFs and the serve loop's importing (cli/serve_import.ts), exactly as
 * `chronicle serve` wires them, over a scratch HOME the test writes agent logs into.
 */
import type { CliIo } from "../../cli/io.ts";
import { type RunningServer, signInUrl, startServer } from "../../cli/serve.ts";
import { serveArchive } from "../../cli/serve_archive.ts";
import { type Importing, startImporting } from "../../cli/serve_import.ts";
import { ChronicleStore } from "../../core/store/mod.ts";
import { loadExcludeRules } from "../../runtime/exclude_file.ts";
import { createPackFiles, packDir } from "../../runtime/pack_files.ts";
import { createEventHub } from "../../server/sse.ts";

export const LIVE_TOKEN = "l".repeat(64);

export interface LiveServer {
  url: string;
  store: ChronicleStore;
  importing: Importing;
  server: RunningServer;
  token: string;
  /** The address `chronicle serve` prints: it signs a browser in. */
  signInUrl: string;
  /** Every request presents the install token (a header, as a script would). */
  headers: Record<string, string>;
  /** Stops importing, the server and both connections. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function liveServer(
  options: {
    home: string;
    data: string;
    port?: number;
    intervalS?: number;
    /** The archive as `chronicle serve` wires it: the exclude list, the import lock, its API. */
    archive?: boolean;
    /** Where the server's stderr goes. Default: the test's stderr. */
    stderr?: (text: string) => void;
  },
): Promise<LiveServer> {
  await Deno.mkdir(options.data, { recursive: true });
  const open = () =>
    ChronicleStore.open(`${options.data}/chronicle.db`, {
      packs: createPackFiles(packDir(options.data)),
    });
  const store = open();
  const writer = open();
  const io: CliIo = {
    stdout: () => {},
    stderr: options.stderr ?? ((t) => void console.error(t.trimEnd())),
    stdin: () => Promise.resolve(new Uint8Array()),
    env: { HOME: options.home, CHRONICLE_HOME: options.data },
    cwd: options.home,
    isTerminal: false,
  };
  const events = createEventHub();
  const importing = startImporting({
    store,
    writer,
    io,
    tempRoot: `${options.data}/tmp`,
    intervalS: options.intervalS ?? 3600,
    events,
    ...options.archive
      ? { lockDir: options.data, exclude: () => loadExcludeRules(options.data, options.home) }
      : {},
  });
  const server = await startServer({
    store,
    token: LIVE_TOKEN,
    port: options.port ?? 0,
    events,
    live: importing.live,
    importProgress: importing.progress,
    archive: options.archive
      ? serveArchive({ dir: options.data, store, importer: importing, events })
      : undefined,
  });
  importing.start();
  await importing.firstPass;
  const stop = async () => {
    await importing.stop();
    await server.shutdown();
    writer.close();
    store.close();
  };
  return {
    url: server.url,
    store,
    importing,
    server,
    token: LIVE_TOKEN,
    signInUrl: signInUrl(server.url, LIVE_TOKEN),
    headers: { "x-chronicle-token": LIVE_TOKEN },
    stop,
    close: stop,
  };
}
