/**
 * A synthetic Codex CLI corpus for the import benchmark: rollout files under
 * `<dir>/.codex/sessions/YYYY/MM/DD/` shaped like Codex 0.171 writes them (session_meta,
 * turn_context, mirrored response items and event messages, exec calls with their outputs,
 * apply_patch calls, cumulative token counts). Deterministic for a given size.
 */
import { rng } from "../_helpers/rng.ts";

const WORDS = (
  "the quick brown fox jumps over lazy dog import export function const return value error " +
  "config parser session token stream buffer offset module test assert fixture patch commit"
).split(" ");

/** Writes about `mb` MiB of rollout files; returns the number of files and bytes written. */
export async function generateCodexCorpus(
  dir: string,
  mb: number,
): Promise<{ files: number; bytes: number }> {
  const rand = rng(42);
  const words = (n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]);
    return out.join(" ");
  };
  const target = mb * 1024 * 1024;
  const encoder = new TextEncoder();
  let bytes = 0, files = 0;
  let clock = Date.parse("2026-01-01T08:00:00.000Z");
  while (bytes < target) {
    const id = `01a22bda-${(files + 0x1000).toString(16).padStart(4, "0")}-7000-8000-${
      String(files).padStart(12, "0")
    }`;
    const day = new Date(clock);
    const ymd = day.toISOString().slice(0, 10).split("-");
    const folder = `${dir}/.codex/sessions/${ymd[0]}/${ymd[1]}/${ymd[2]}`;
    await Deno.mkdir(folder, { recursive: true });
    const stamp = day.toISOString().slice(0, 19).replace(/:/g, "-");
    const path = `${folder}/rollout-${stamp}-${id}.jsonl`;
    const lines: string[] = [];
    const rec = (type: string, payload: unknown) =>
      lines.push(JSON.stringify({ timestamp: new Date(clock += 37).toISOString(), type, payload }));
    rec("session_meta", {
      id,
      timestamp: new Date(clock).toISOString(),
      cwd: `/home/dev/projects/p${files % 20}`,
      originator: "codex_cli_rs",
      cli_version: "0.171.0",
      source: "cli",
      model_provider: "openai",
      base_instructions: { text: words(400) },
      git: { branch: "main", commit_hash: "f".repeat(40) },
    });
    const turns = 10 + Math.floor(rand() * 60);
    const total = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (let t = 0; t < turns; t++) {
      rec("turn_context", {
        cwd: "/home/dev/projects/p",
        model: "gpt-5.5",
        approval_policy: "never",
      });
      const prompt = words(20 + Math.floor(rand() * 60));
      rec("response_item", {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: prompt }],
      });
      rec("event_msg", { type: "user_message", message: prompt, images: [] });
      const thought = words(40);
      rec("event_msg", { type: "agent_reasoning", text: thought });
      rec("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: thought }],
        encrypted_content: btoa(words(200)),
      });
      for (let c = 0; c < 1 + Math.floor(rand() * 4); c++) {
        const callId = `call_${files}_${t}_${c}`;
        const cmd = `grep -rn ${WORDS[c % WORDS.length]} src`;
        rec("response_item", {
          type: "function_call",
          name: "exec_command",
          arguments: JSON.stringify({ cmd, workdir: "/home/dev/projects/p", yield_time_ms: 10000 }),
          call_id: callId,
        });
        const out = words(100 + Math.floor(rand() * 500));
        rec("event_msg", {
          type: "item_completed",
          item: {
            type: "CommandExecution",
            id: callId,
            command: ["/bin/bash", "-lc", cmd],
            parsed_cmd: [{ type: "search", cmd, query: "x", path: "src" }],
            status: "completed",
            aggregated_output: out,
            exit_code: c === 3 ? 1 : 0,
          },
        });
        rec("response_item", {
          type: "function_call_output",
          call_id: callId,
          output: `Chunk ID: ab12\nWall time: 0.0100 seconds\nProcess exited with code ${
            c === 3 ? 1 : 0
          }\nOutput:\n${out}`,
        });
      }
      if (rand() < 0.4) {
        const callId = `patch_${files}_${t}`;
        rec("response_item", {
          type: "custom_tool_call",
          name: "apply_patch",
          call_id: callId,
          input: `*** Begin Patch\n*** Update File: src/m${t}.py\n@@\n-${words(12)}\n+${
            words(12)
          }\n*** Update File: docs/n${t}.md\n@@\n+${words(30)}\n*** End Patch`,
        });
        rec("response_item", {
          type: "custom_tool_call_output",
          call_id: callId,
          output:
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n",
        });
      }
      const input = 2000 + Math.floor(rand() * 30000), output = 50 + Math.floor(rand() * 900);
      total.input_tokens += input;
      total.cached_input_tokens += Math.floor(input / 2);
      total.output_tokens += output;
      total.total_tokens += input + output;
      const info = { total_token_usage: { ...total }, last_token_usage: { input_tokens: input } };
      rec("event_msg", { type: "token_count", info, rate_limits: null });
      rec("event_msg", { type: "token_count", info, rate_limits: null });
      const answer = words(30 + Math.floor(rand() * 120));
      rec("response_item", {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: answer }],
      });
      rec("event_msg", { type: "agent_message", message: answer });
    }
    const data = encoder.encode(lines.join("\n") + "\n");
    await Deno.writeFile(path, data);
    bytes += data.byteLength;
    files++;
    clock += 3_600_000;
  }
  return { files, bytes };
}
