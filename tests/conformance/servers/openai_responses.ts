/**
 * OpenAI Responses API (`POST /v1/responses`, streaming), as Codex CLI speaks it. A tool the
 * request declares as `type: "custom"` (Codex's free-form apply_patch) is called with a
 * custom_tool_call and a raw string input; every other tool with a function_call whose
 * arguments are a JSON string.
 */
import type { ConversationView, ScriptedReply } from "../script.ts";
import { chunks, sseResponse, textOf } from "./sse.ts";

type Item = Record<string, unknown>;

export function responsesView(body: Record<string, unknown>): ConversationView {
  const input = (Array.isArray(body.input) ? body.input : []) as Item[];
  const userMsgs = input.filter((i) => i.role === "user" && (i.type ?? "message") === "message");
  // Codex sends environment context and AGENTS.md as user messages before the prompt, so
  // search all user messages up to the first tool call for the scenario's prompt.
  const firstCall = input.findIndex((i) =>
    i.type === "function_call" || i.type === "custom_tool_call"
  );
  const early = firstCall < 0 ? userMsgs : userMsgs.filter((m) => input.indexOf(m) < firstCall);
  const results: ConversationView["results"] = [];
  const userTexts: ConversationView["userTexts"] = [];
  for (const i of input) {
    if (i.type === "function_call_output" || i.type === "custom_tool_call_output") {
      const out = typeof i.output === "string" ? i.output : textOf(i.output);
      results.push({ err: false, head: out.slice(0, 200) });
    } else if (i.role === "user" && (i.type ?? "message") === "message") {
      userTexts.push({ text: textOf(i.content), after: results.length });
    } else if (i.type === "agent_message" && Array.isArray(i.content)) {
      // A task one Codex thread sends another (spawn_agent): its text is in `encrypted_content`.
      const text = (i.content as Item[]).map((p) =>
        typeof p.text === "string"
          ? p.text
          : typeof p.encrypted_content === "string"
          ? p.encrypted_content
          : ""
      ).join("\n");
      userTexts.push({ text, after: results.length });
    }
  }
  return {
    firstUserText: early.map((m) => textOf(m.content)).join("\n"),
    results,
    userTexts,
    hasTools: Array.isArray(body.tools) && body.tools.length > 0,
  };
}

/** The namespace a function tool is offered in (Codex's `collaboration` tools), if any. */
function namespaceOf(body: Record<string, unknown>, name: string): string | undefined {
  const tools = (Array.isArray(body.tools) ? body.tools : []) as Item[];
  const ns = tools.find((t) =>
    t.type === "namespace" && Array.isArray(t.tools) &&
    (t.tools as Item[]).some((x) => x.name === name)
  );
  return typeof ns?.name === "string" ? ns.name : undefined;
}

function isCustomTool(body: Record<string, unknown>, name: string): boolean {
  const tools = (Array.isArray(body.tools) ? body.tools : []) as Item[];
  return tools.some((t) => t.name === name && t.type === "custom");
}

export function responsesRespond(
  reply: ScriptedReply,
  body: Record<string, unknown>,
  respId: string,
): Response {
  const model = typeof body.model === "string" ? body.model : "gpt-mock";
  const frames: { event: string; data: Record<string, unknown> }[] = [];
  let seq = 0;
  const push = (type: string, data: Record<string, unknown>) =>
    frames.push({ event: type, data: { type, sequence_number: seq++, ...data } });
  const base = { id: respId, object: "response", created_at: 1796032079, model };
  push("response.created", { response: { ...base, status: "in_progress", output: [] } });
  const output: Item[] = [];
  if (reply.text) {
    const id = `msg_${respId}`;
    const outputIndex = output.length;
    push("response.output_item.added", {
      output_index: outputIndex,
      item: { type: "message", id, role: "assistant", status: "in_progress", content: [] },
    });
    push("response.content_part.added", {
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const d of chunks(reply.text, 64)) {
      push("response.output_text.delta", {
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        delta: d,
      });
    }
    push("response.output_text.done", {
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      text: reply.text,
    });
    const part = { type: "output_text", text: reply.text, annotations: [] };
    push("response.content_part.done", {
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      part,
    });
    const item = { type: "message", id, role: "assistant", status: "completed", content: [part] };
    push("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
  }
  for (const c of reply.calls) {
    const outputIndex = output.length;
    const custom = isCustomTool(body, c.name);
    const id = `${custom ? "ctc" : "fc"}_${c.id}`;
    const callId = `call_${c.id}`;
    if (custom) {
      const input = typeof c.input === "string" ? c.input : JSON.stringify(c.input);
      push("response.output_item.added", {
        output_index: outputIndex,
        item: { type: "custom_tool_call", id, call_id: callId, name: c.name, input: "" },
      });
      for (const d of chunks(input, 512)) {
        push("response.custom_tool_call_input.delta", {
          item_id: id,
          output_index: outputIndex,
          delta: d,
        });
      }
      push("response.custom_tool_call_input.done", {
        item_id: id,
        output_index: outputIndex,
        input,
      });
      const item = {
        type: "custom_tool_call",
        id,
        call_id: callId,
        name: c.name,
        input,
        status: "completed",
      };
      push("response.output_item.done", { output_index: outputIndex, item });
      output.push(item);
    } else {
      // A free-form tool offered as a function takes its text under "input".
      const args = JSON.stringify(typeof c.input === "string" ? { input: c.input } : c.input);
      const namespace = namespaceOf(body, c.name);
      const ns = namespace ? { namespace } : {};
      push("response.output_item.added", {
        output_index: outputIndex,
        item: {
          type: "function_call",
          id,
          call_id: callId,
          name: c.name,
          ...ns,
          arguments: "",
          status: "in_progress",
        },
      });
      for (const d of chunks(args, 512)) {
        push("response.function_call_arguments.delta", {
          item_id: id,
          output_index: outputIndex,
          delta: d,
        });
      }
      push("response.function_call_arguments.done", {
        item_id: id,
        output_index: outputIndex,
        arguments: args,
      });
      const item = {
        type: "function_call",
        id,
        call_id: callId,
        name: c.name,
        ...ns,
        arguments: args,
        status: "completed",
      };
      push("response.output_item.done", { output_index: outputIndex, item });
      output.push(item);
    }
  }
  push("response.completed", {
    response: {
      ...base,
      status: "completed",
      output,
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 120,
      },
    },
  });
  return sseResponse(frames);
}
