/**
 * How to install, configure and run each agent CLI offline against a scripted model server:
 * the pinned npm package, the wire protocol, the config files written into the scratch HOME,
 * the environment and the command line. Settings follow issue 6 ("What is known to work").
 *
 * @module
 */
import type { SourceId } from "../../core/model/types.ts";
import type { Protocol } from "./servers/mod.ts";
import type { AgentId } from "./translate.ts";
import { REPO_ROOT } from "./chronicle.ts";

export interface RunContext {
  /** Scratch HOME of this run. */
  home: string;
  /** Scratch project (cwd of the CLI). */
  project: string;
  /** Scratch temp folder (TMPDIR). */
  tmp: string;
  /** Base URL of the scripted model server, e.g. http://127.0.0.1:40123 */
  serverUrl: string;
  /** The installed CLI's executable. */
  bin: string;
  /** A fresh UUID for agents that accept a session id. */
  sessionId: string;
  /** What the scenario needs switched on beyond the defaults (`Scenario.needs`). */
  needs: readonly string[];
}

export interface AgentSpec {
  id: AgentId;
  /** Chronicle's source id for this agent's logs. */
  source: SourceId;
  displayName: string;
  npmPackage: string;
  /** Pinned version: the one that wrote fixtures/realclients. */
  version: string;
  /** Executable name under node_modules/.bin. */
  binName: string;
  protocol: Protocol;
  /** Write config files into the scratch HOME / project. */
  setup(ctx: RunContext): Promise<void>;
  env(ctx: RunContext): Record<string, string>;
  argv(ctx: RunContext, prompt: string): string[];
  /** The command line that resumes the session the first run left, with another prompt. */
  resumeArgv(ctx: RunContext, prompt: string): string[];
  /** Files or folders (relative to HOME) holding the agent's logs, copied by --update-fixtures. */
  logRoots: string[];
  /** Seconds before one CLI process is killed, when the default (180) is too short. */
  timeoutSeconds?: number;
}

async function writeFile(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

const claude: AgentSpec = {
  id: "claude",
  source: "claude-code",
  displayName: "Claude Code",
  npmPackage: "@anthropic-ai/claude-code",
  version: "2.1.197",
  binName: "claude",
  protocol: "anthropic",
  async setup() {},
  env: (ctx) => ({
    ANTHROPIC_BASE_URL: ctx.serverUrl,
    ANTHROPIC_API_KEY: "sk-ant-mock-dummy",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    // Needed for --dangerously-skip-permissions as root.
    IS_SANDBOX: "1",
  }),
  argv: (ctx, prompt) => [
    ctx.bin,
    "-p",
    prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--dangerously-skip-permissions",
    "--session-id",
    ctx.sessionId,
  ],
  resumeArgv: (ctx, prompt) => [
    ctx.bin,
    "-p",
    prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--dangerously-skip-permissions",
    "--resume",
    ctx.sessionId,
  ],
  logRoots: [".claude/projects"],
};

const codex: AgentSpec = {
  id: "codex",
  source: "codex",
  displayName: "Codex CLI",
  npmPackage: "@openai/codex",
  version: "0.171.0",
  binName: "codex",
  protocol: "openai-responses",
  async setup(ctx) {
    await writeFile(
      `${ctx.home}/.codex/config.toml`,
      [
        // A known model slug, so Codex offers its free-form apply_patch tool.
        'model = "gpt-5.5"',
        'model_provider = "mock"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.mock]",
        'name = "mock"',
        `base_url = "${ctx.serverUrl}/v1"`,
        'env_key = "MOCK_API_KEY"',
        'wire_api = "responses"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
        "[features]",
        // The collaboration tools (spawn_agent, wait_agent, ...), for a scenario that spawns.
        `multi_agent_v2 = ${ctx.needs.includes("spawn")}`,
        "plugins = false",
        "remote_plugin = false",
        "in_app_updates = false",
        "api_key_model_discovery = false",
        "apps = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
      ].join("\n"),
    );
  },
  env: (ctx) => ({ CODEX_HOME: `${ctx.home}/.codex`, MOCK_API_KEY: "sk-mock-dummy" }),
  argv: (ctx, prompt) => [
    ctx.bin,
    "exec",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--json",
    "-C",
    ctx.project,
    prompt,
  ],
  resumeArgv: (ctx, prompt) => [
    ctx.bin,
    "exec",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "--json",
    "-C",
    ctx.project,
    "resume",
    "--last",
    prompt,
  ],
  logRoots: [".codex/sessions"],
};

/** A port nothing listens on: package managers the CLI might start fail at once. */
const DEAD_REGISTRY = "http://127.0.0.1:9/";

const opencode: AgentSpec = {
  id: "opencode",
  source: "opencode",
  displayName: "OpenCode",
  npmPackage: "opencode-ai",
  version: "1.18.33",
  binName: "opencode",
  protocol: "openai-chat",
  async setup(ctx) {
    await writeFile(
      `${ctx.home}/.config/opencode/opencode.json`,
      JSON.stringify(
        {
          $schema: "https://opencode.ai/config.json",
          model: "mock/mock-model",
          autoupdate: false,
          share: "disabled",
          // read: reading a .env is "ask" by default, which a headless run answers no.
          permission: { edit: "allow", bash: "allow", webfetch: "allow", read: "allow" },
          provider: {
            mock: {
              npm: "@ai-sdk/openai-compatible",
              name: "Mock",
              options: { baseURL: `${ctx.serverUrl}/v1`, apiKey: "sk-mock-dummy" },
              models: { "mock-model": { name: "Mock Model", tool_call: true } },
            },
          },
        },
        null,
        2,
      ),
    );
  },
  env: () => ({
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_TERMINAL_TITLE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    NPM_CONFIG_REGISTRY: DEAD_REGISTRY,
    BUN_CONFIG_REGISTRY: DEAD_REGISTRY,
  }),
  argv: (ctx, prompt) => [
    ctx.bin,
    "run",
    "--print-logs",
    "--log-level",
    "DEBUG",
    "--format",
    "json",
    "-m",
    "mock/mock-model",
    "--dir",
    ctx.project,
    prompt,
  ],
  resumeArgv: (ctx, prompt) => [
    ctx.bin,
    "run",
    "--print-logs",
    "--log-level",
    "DEBUG",
    "--format",
    "json",
    "-m",
    "mock/mock-model",
    "--dir",
    ctx.project,
    "--continue",
    prompt,
  ],
  logRoots: [
    ".local/share/opencode/opencode.db",
    ".local/share/opencode/opencode.db-wal",
    ".local/share/opencode/opencode.db-shm",
    // Outputs too large for the database, referenced from it ("Full output saved to").
    ".local/share/opencode/tool-output",
  ],
  // Its snapshot tracking costs ~0.3 s per call on an idle machine and seconds on the shared
  // 2-core one under load (s4-long's 42 calls, or startup alone ~60 s at a load of 20).
  timeoutSeconds: 600,
};

const gemini: AgentSpec = {
  id: "gemini",
  source: "gemini",
  displayName: "Gemini CLI",
  npmPackage: "@google/gemini-cli",
  version: "0.61.0",
  binName: "gemini",
  protocol: "gemini",
  async setup(ctx) {
    await writeFile(
      `${ctx.home}/.gemini/settings.json`,
      JSON.stringify(
        {
          security: {
            auth: { selectedType: "gemini-api-key" },
            folderTrust: { enabled: false },
          },
          general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          model: { name: "gemini-2.5-flash" },
        },
        null,
        2,
      ),
    );
  },
  env: (ctx) => ({
    GOOGLE_GEMINI_BASE_URL: ctx.serverUrl,
    GEMINI_API_KEY: "mock-dummy-key",
    GEMINI_CLI_NO_RELAUNCH: "true",
  }),
  argv: (ctx, prompt) => [
    ctx.bin,
    "--yolo",
    "--output-format",
    "stream-json",
    "--session-id",
    ctx.sessionId,
    "-p",
    prompt,
  ],
  resumeArgv: (ctx, prompt) => [
    ctx.bin,
    "--yolo",
    "--output-format",
    "stream-json",
    "--resume",
    "latest",
    "-p",
    prompt,
  ],
  logRoots: [".gemini/tmp", ".gemini/projects.json"],
};

/** Qwen Code: a Gemini CLI fork speaking OpenAI chat.completions to any base URL. */
const qwen: AgentSpec = {
  id: "qwen",
  source: "qwen",
  displayName: "Qwen Code",
  npmPackage: "@qwen-code/qwen-code",
  version: "0.15.10",
  binName: "qwen",
  protocol: "openai-chat",
  async setup(ctx) {
    await writeFile(
      `${ctx.home}/.qwen/settings.json`,
      JSON.stringify(
        {
          security: { auth: { selectedType: "openai" }, folderTrust: { enabled: false } },
          general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          model: { name: "mock-model" },
        },
        null,
        2,
      ),
    );
  },
  env: (ctx) => ({
    OPENAI_BASE_URL: `${ctx.serverUrl}/v1`,
    OPENAI_API_KEY: "sk-mock-dummy",
    OPENAI_MODEL: "mock-model",
    QWEN_CODE_NO_RELAUNCH: "true",
    QWEN_DISABLE_AUTO_TITLE: "1",
    NPM_CONFIG_REGISTRY: DEAD_REGISTRY,
  }),
  argv: (ctx, prompt) => [
    ctx.bin,
    "--yolo",
    "--auth-type",
    "openai",
    "--output-format",
    "stream-json",
    "--session-id",
    ctx.sessionId,
    "-p",
    prompt,
  ],
  resumeArgv: (ctx, prompt) => [
    ctx.bin,
    "--yolo",
    "--auth-type",
    "openai",
    "--output-format",
    "stream-json",
    "--resume",
    ctx.sessionId,
    "-p",
    prompt,
  ],
  logRoots: [".qwen/projects", ".qwen/tmp"],
  // The first shell call of each process takes 10-40 s to start on the shared 2-core machine
  // (s4-long alone takes ~150 s), more while `chronicle serve` imports beside it (live).
  timeoutSeconds: 600,
};

/**
 * GitHub Copilot CLI in offline mode: `COPILOT_OFFLINE` with a BYOK provider
 * (`COPILOT_PROVIDER_BASE_URL`, OpenAI chat.completions), so it needs no GitHub login and
 * sends nothing beyond 127.0.0.1. The native binary unpacks its JavaScript package into
 * `$XDG_CACHE_HOME/copilot/pkg` on first start (~235 MB, ~7 s): one cache outside the scratch
 * HOMEs serves every run.
 */
const copilot: AgentSpec = {
  id: "copilot",
  source: "copilot",
  displayName: "GitHub Copilot CLI",
  npmPackage: "@github/copilot",
  version: "1.0.102",
  binName: "copilot",
  protocol: "openai-chat",
  async setup() {},
  env: (ctx) => ({
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_BASE_URL: `${ctx.serverUrl}/v1`,
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_PROVIDER_API_KEY: "sk-mock-dummy",
    COPILOT_MODEL: "mock-model",
    COPILOT_PROVIDER_MAX_PROMPT_TOKENS: "128000",
    COPILOT_PROVIDER_MAX_OUTPUT_TOKENS: "8192",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_ALLOW_ALL: "1",
    XDG_CACHE_HOME: `${REPO_ROOT}/.cache/conformance/copilot-pkg-cache`,
    NPM_CONFIG_REGISTRY: DEAD_REGISTRY,
  }),
  argv: (ctx, prompt) => [
    ctx.bin,
    "-p",
    prompt,
    "--allow-all-tools",
    "--no-auto-update",
    "--disable-builtin-mcps",
    "--disable-client-telemetry",
    "--output-format",
    "json",
    "--session-id",
    ctx.sessionId,
  ],
  resumeArgv: (ctx, prompt) => [
    ctx.bin,
    "-p",
    prompt,
    "--allow-all-tools",
    "--no-auto-update",
    "--disable-builtin-mcps",
    "--disable-client-telemetry",
    "--output-format",
    "json",
    "--resume",
    ctx.sessionId,
  ],
  logRoots: [".copilot/session-state", ".copilot/history-session-state"],
};

export const AGENTS: readonly AgentSpec[] = [claude, codex, opencode, gemini, qwen, copilot];

export function agentById(id: string): AgentSpec | undefined {
  return AGENTS.find((a) => a.id === id || a.source === id);
}
