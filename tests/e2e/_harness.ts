/**
 * Browser test harness: builds the UI, imports fixtures (and synthetic logs) into a store,
 * serves it on 127.0.0.1 with the real server, and drives Debian's Chromium through
 * playwright-core. Screenshots go to tests/e2e/screenshots/ (gitignored).
 */
import { type Browser, loadPlaywright, type Page } from "../_helpers/test_deps.ts";
import { type RunningServer, signInUrl, startServer } from "../../cli/serve.ts";
import type { ReplayService } from "../../server/replay_service.ts";
import type { GitEngine } from "../../core/git/mod.ts";
import type { ChronicleStore } from "../../core/store/mod.ts";
import type { AppDeps, ArchiveService, SecurityService } from "../../server/deps.ts";
import { createEventHub, type EventHub } from "../../server/sse.ts";
import { buildUi } from "../../ui/build.ts";
import { fixtureStore } from "../unit/server/_helpers.ts";

export const SCREENSHOTS = new URL("./screenshots/", import.meta.url).pathname;
export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

let built: Promise<void> | null = null;
/** Builds ui/dist once per test process. */
export function ensureUi(): Promise<void> {
  built ??= buildUi({ minify: true });
  return built;
}

export interface Fixture {
  store: ChronicleStore;
  server: RunningServer;
  token: string;
  /** The address `chronicle serve` prints: it signs a browser in (a cookie). */
  signInUrl: string;
  close(): Promise<void>;
}

/** Imports real-client scenarios and any synthetic HOMEs into a fresh store and serves it. */
export async function serveFixtures(
  options: {
    scenarios: string[];
    homes?: string[];
    /** Builds the security engine over the fixture store. */
    security?: (store: ChronicleStore) => SecurityService;
    /** Builds replay mode over the fixture store. */
    replay?: (store: ChronicleStore) => ReplayService;
    /** The git engine for "code at this moment". */
    git?: GitEngine;
    /** `GET /api/doctor`'s report (the route answers 503 without it). */
    doctor?: AppDeps["doctor"];
    /** Forgetting and the exclude list (the routes answer 503 without it). */
    archive?: (store: ChronicleStore, events: EventHub) => ArchiveService;
    /** How far a first import is, as the server's background importer says. */
    importProgress?: AppDeps["importProgress"];
  },
): Promise<Fixture> {
  await ensureUi();
  const store = await fixtureStore(options.scenarios, options.homes);
  const token = "e2e".padEnd(64, "0");
  const events = createEventHub();
  const server = await startServer({
    events,
    archive: options.archive?.(store, events),
    store,
    token,
    port: 0,
    security: options.security?.(store),
    replay: options.replay?.(store),
    git: options.git,
    doctor: options.doctor,
    importProgress: options.importProgress,
  });
  return {
    store,
    server,
    token,
    signInUrl: signInUrl(server.url, token),
    async close() {
      await server.shutdown();
      store.close();
    },
  };
}

export interface BrowserSession {
  browser: Browser;
  page: Page;
  /** Another page in the same (signed-in) browser context. */
  newPage(): Promise<Page>;
  /** Console errors and CSP violations seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * A headless Chromium page signed in to `fixture`'s server the way its owner is: it opens the
 * printed address and keeps the cookie the server trades it for (every route needs it).
 */
export async function openBrowser(
  options: {
    width?: number;
    height?: number;
    dark?: boolean;
    /** The zone the browser lives in (IANA name); the machine's own by default. */
    timezoneId?: string;
    fixture: Fixture;
  },
): Promise<BrowserSession> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    throw new Error(
      `Cannot run browser tests: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
    );
  }
  // playwright-core probes /proc/sys/fs/binfmt_misc (is-wsl) when it loads, which Deno allows
  // only with --allow-all; this variable makes it skip the probe, so the test task's narrower
  // permissions suffice.
  Deno.env.set("__IS_WSL_TEST__", "1");
  const { chromium } = await loadPlaywright();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1440, height: options.height ?? 900 },
    colorScheme: options.dark ? "dark" : "light",
    timezoneId: options.timezoneId,
  });
  // Waits are for an event, not a deadline: on a loaded machine the first replay or export
  // starts a worker whose modules Deno checks first, which can take longer than Playwright's
  // 30 s default. A step that never comes still fails, after two minutes.
  context.setDefaultTimeout(120_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  const res = await page.goto(options.fixture.signInUrl);
  if (!res?.ok() || page.url().includes("token=")) {
    throw new Error(`signing in failed: ${res?.status()} at ${page.url()}`);
  }
  return {
    browser,
    page,
    newPage: () => context.newPage(),
    problems,
    async close() {
      await context.close();
      await browser.close();
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  const path = `${SCREENSHOTS}${name}.png`;
  await page.screenshot({ path });
  return path;
}

/** Runs in the page: records when the first step row is painted (the frame after it appears). */
export const FIRST_ROW_PROBE = `
  new MutationObserver((_, obs) => {
    if (!document.querySelector(".op-prompt")) return;
    obs.disconnect();
    requestAnimationFrame(() => { globalThis.__firstRow = Math.round(performance.now()); });
  }).observe(document, { childList: true, subtree: true });
`;
