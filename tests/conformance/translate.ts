/**
 * Turns a neutral scenario into one agent's native script (the tool names and input shapes
 * that agent's CLI offers the model) and into the list of calls Chronicle must import.
 *
 * @module
 */
import type { OperationKind } from "../../core/model/types.ts";
import { matchOf, type NeutralThread, type Scenario, type ScriptedStep } from "./scenarios.ts";
import type { NativeCall, NativeScript, Thread } from "./script.ts";

export type AgentId = "claude" | "codex" | "opencode" | "gemini" | "qwen" | "copilot";

/** One tool call the scenario scripts, as Chronicle must show it. */
export interface ExpectedCall {
  thread: "main" | "sub";
  /** Which run of the main thread: 0, or 1 for the resumed run. */
  segment: number;
  step: ScriptedStep;
  tool: string;
  input: unknown;
  /** Canonical kinds accepted for this call (usually one). */
  kinds: OperationKind[];
  error: boolean;
  result_has?: string | string[];
}

export interface Translated {
  script: NativeScript;
  /** Every scripted call, main thread first then sub-agent, each in script order. */
  calls: ExpectedCall[];
}

interface NativeStep {
  call: NativeCall;
  kinds: OperationKind[];
}

type Translator = (s: ScriptedStep, project: string) => NativeStep;

const abs = (project: string, p: string) => p === "." ? project : `${project}/${p}`;
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const lines = (s: string, prefix: string) =>
  s.replace(/\n$/, "").split("\n").map((l) => prefix + l).join("\n");

const claude: Translator = (s, project) => {
  switch (s.op) {
    case "write":
      return {
        call: { name: "Write", input: { file_path: abs(project, s.path), content: s.content } },
        kinds: ["write"],
      };
    case "edit":
      return {
        call: {
          name: "Edit",
          input: { file_path: abs(project, s.path), old_string: s.old, new_string: s.new },
        },
        kinds: ["edit"],
      };
    case "read":
      return {
        call: { name: "Read", input: { file_path: abs(project, s.path) } },
        kinds: ["read"],
      };
    case "bash":
      return {
        call: { name: "Bash", input: { command: s.command, description: s.description } },
        kinds: ["exec"],
      };
    case "grep":
      return {
        call: {
          name: "Bash",
          input: {
            command: `grep -rnE -- ${q(s.pattern)} ${s.dir}`,
            description: `Search for ${s.pattern}`,
          },
        },
        kinds: ["exec"],
      };
    case "agent":
      return {
        call: {
          name: "Agent",
          input: {
            description: s.description,
            prompt: s.prompt,
            subagent_type: "general-purpose",
          },
        },
        kinds: ["task"],
      };
    case "wait":
      throw new TypeError("Claude Code's Agent tool waits by itself");
  }
};

const codex: Translator = (s, project) => {
  const exec = (cmd: string): NativeStep => ({
    call: { name: "exec_command", input: { cmd, workdir: project, yield_time_ms: 10000 } },
    kinds: ["exec"],
  });
  switch (s.op) {
    case "write":
      return {
        call: {
          name: "apply_patch",
          input: `*** Begin Patch\n*** Add File: ${s.path}\n${
            lines(s.content, "+")
          }\n*** End Patch`,
        },
        // apply_patch is one tool for adds and updates; an importer may refine an add to write.
        kinds: ["edit", "write"],
      };
    case "edit":
      return {
        call: {
          name: "apply_patch",
          input: `*** Begin Patch\n*** Update File: ${s.path}\n@@\n${lines(s.old, "-")}\n${
            lines(s.new, "+")
          }\n*** End Patch`,
        },
        kinds: ["edit"],
      };
    case "read":
      return exec(`sed -n '1,200p' ${s.path}`);
    case "bash":
      return exec(s.command);
    case "grep":
      return exec(`grep -rnE -- ${q(s.pattern)} ${s.dir}`);
    case "agent":
      // multi_agent_v2: a thread that inherits the conversation so far (a fork).
      return {
        call: {
          name: "spawn_agent",
          input: { message: s.prompt, task_name: s.description, fork_turns: "all" },
        },
        kinds: ["task"],
      };
    case "wait":
      return { call: { name: "wait_agent", input: { timeout_ms: 60000 } }, kinds: ["other"] };
  }
};

const opencode: Translator = (s, project) => {
  switch (s.op) {
    case "write":
      return {
        call: { name: "write", input: { filePath: abs(project, s.path), content: s.content } },
        kinds: ["write"],
      };
    case "edit":
      return {
        call: {
          name: "edit",
          input: { filePath: abs(project, s.path), oldString: s.old, newString: s.new },
        },
        kinds: ["edit"],
      };
    case "read":
      return { call: { name: "read", input: { filePath: abs(project, s.path) } }, kinds: ["read"] };
    case "bash":
      return {
        call: { name: "bash", input: { command: s.command, description: s.description } },
        kinds: ["exec"],
      };
    case "grep":
      return {
        call: {
          name: "bash",
          input: {
            command: `grep -rnE -- ${q(s.pattern)} ${s.dir}`,
            description: `Search for ${s.pattern}`,
          },
        },
        kinds: ["exec"],
      };
    case "agent":
    case "wait":
      throw new TypeError("OpenCode sub-agents are not scripted in this suite");
  }
};

const gemini: Translator = (s, project) => {
  switch (s.op) {
    case "write":
      return {
        call: {
          name: "write_file",
          input: { file_path: abs(project, s.path), content: s.content },
        },
        kinds: ["write"],
      };
    case "edit":
      return {
        call: {
          name: "replace",
          input: {
            file_path: abs(project, s.path),
            old_string: s.old,
            new_string: s.new,
            instruction: "Apply the requested change.",
          },
        },
        kinds: ["edit"],
      };
    case "read":
      return {
        call: { name: "read_file", input: { file_path: abs(project, s.path) } },
        kinds: ["read"],
      };
    case "bash":
      return {
        call: {
          name: "run_shell_command",
          input: { command: s.command, description: s.description },
        },
        kinds: ["exec"],
      };
    case "grep":
      return {
        call: { name: "grep_search", input: { pattern: s.pattern, dir_path: abs(project, s.dir) } },
        kinds: ["search"],
      };
    case "agent":
    case "wait":
      throw new TypeError("Gemini CLI sub-agents are not scripted in this suite");
  }
};

/** Qwen Code: Gemini CLI's tools, but its own edit and grep_search (`path`, not `dir_path`). */
const qwen: Translator = (s, project) => {
  switch (s.op) {
    case "edit":
      return {
        call: {
          name: "edit",
          input: { file_path: abs(project, s.path), old_string: s.old, new_string: s.new },
        },
        kinds: ["edit"],
      };
    case "grep":
      return {
        call: { name: "grep_search", input: { pattern: s.pattern, path: abs(project, s.dir) } },
        kinds: ["search"],
      };
    case "agent":
    case "wait":
      throw new TypeError("Qwen Code sub-agents are not scripted in this suite");
    default:
      return gemini(s, project);
  }
};

/** GitHub Copilot CLI's tools. */
const copilot: Translator = (s, project) => {
  switch (s.op) {
    case "write":
      return {
        call: { name: "create", input: { path: abs(project, s.path), file_text: s.content } },
        kinds: ["write"],
      };
    case "edit":
      return {
        call: {
          name: "edit",
          input: { path: abs(project, s.path), old_str: s.old, new_str: s.new },
        },
        kinds: ["edit"],
      };
    case "read":
      return { call: { name: "view", input: { path: abs(project, s.path) } }, kinds: ["read"] };
    case "bash":
      return {
        call: { name: "bash", input: { command: s.command, description: s.description } },
        kinds: ["exec"],
      };
    case "grep":
      return {
        call: {
          name: "grep",
          // Matching lines with their numbers, as `grep -rn` (the tool lists files by default).
          input: {
            pattern: s.pattern,
            paths: [abs(project, s.dir)],
            output_mode: "content",
            "-n": true,
          },
        },
        kinds: ["search"],
      };
    case "agent":
    case "wait":
      throw new TypeError("Copilot CLI sub-agents are not scripted in this suite");
  }
};

const TRANSLATORS: Record<AgentId, Translator> = {
  claude,
  codex,
  opencode,
  gemini,
  qwen,
  copilot,
};

/** The native script and the expected calls of `scenario` for `agent` in `project`. */
export function translate(scenario: Scenario, agent: AgentId, project: string): Translated {
  const tr = TRANSLATORS[agent];
  const calls: ExpectedCall[] = [];
  const thread = (t: NeutralThread, which: "main" | "sub", segment = 0): Thread => ({
    match: matchOf(t.prompt),
    turns: [
      ...t.turns.map((turn) => ({
        ...(turn.text ? { text: turn.text } : {}),
        calls: turn.steps.flatMap((step): ScriptedStep[] =>
          step.op === "edit" && step.readFirstBy?.includes(agent)
            ? [{ op: "read", path: step.path }, step]
            : [step]
        ).map((step) => {
          const n = tr(step, project);
          calls.push({
            thread: which,
            segment,
            step,
            tool: n.call.name,
            input: n.call.input,
            kinds: n.kinds,
            error: step.error === true || (step.refusedBy?.includes(agent) ?? false),
            result_has: step.result_has,
          });
          return n.call;
        }),
      })),
      { text: t.final },
    ],
  });
  return {
    script: {
      segments: [
        thread(scenario.main, "main"),
        ...(scenario.resume ? [thread(scenario.resume, "main", 1)] : []),
      ],
      subagents: scenario.subagent ? [thread(scenario.subagent, "sub")] : [],
      side_text: scenario.title,
    },
    calls,
  };
}
