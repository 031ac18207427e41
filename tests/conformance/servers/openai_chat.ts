/**
 * OpenAI chat.completions (`POST /v1/chat/completions`), streaming chunks with tool_calls
 * deltas, as OpenCode's openai-compatible provider speaks it; plain JSON when not streaming.
 */
import type { ConversationView, ScriptedReply } from "../script.ts";
import { chunks, jsonResponse, sseResponse, textOf } from "./sse.ts";

type Msg = { role?: string; content?: unknown };

export function chatView(body: Record<string, unknown>): ConversationView {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Msg[];
  const first = messages.find((m) => m.role === "user");
  const results: ConversationView["results"] = [];
  const userTexts: ConversationView["userTexts"] = [];
  for (const m of messages) {
    if (m.role === "tool") results.push({ err: false, head: textOf(m.content).slice(0, 200) });
    else if (m.role === "user") userTexts.push({ text: textOf(m.content), after: results.length });
  }
  return {
    firstUserText: first ? textOf(first.content) : "",
    results,
    userTexts,
    hasTools: Array.isArray(body.tools) && body.tools.length > 0,
  };
}

export function chatRespond(
  reply: ScriptedReply,
  body: Record<string, unknown>,
  id: string,
): Response {
  const model = typeof body.model === "string" ? body.model : "mock-model";
  const created = 1796032079;
  const finish = reply.calls.length ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
  const toolCalls = reply.calls.map((c, index) => ({
    index,
    id: `call_${c.id}`,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.input) },
  }));
  if (body.stream !== true) {
    return jsonResponse({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? null,
          ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _, ...t }) => t) } : {}),
        },
        finish_reason: finish,
      }],
      usage,
    });
  }
  const chunk = (delta: unknown, finishReason: string | null = null) => ({
    data: {
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    },
  });
  const frames: { data: unknown }[] = [chunk({ role: "assistant", content: "" })];
  if (reply.text) { for (const d of chunks(reply.text, 64)) frames.push(chunk({ content: d })); }
  for (const t of toolCalls) {
    frames.push(chunk({
      tool_calls: [{
        index: t.index,
        id: t.id,
        type: "function",
        function: { name: t.function.name, arguments: "" },
      }],
    }));
    for (const d of chunks(t.function.arguments, 512)) {
      frames.push(chunk({ tool_calls: [{ index: t.index, function: { arguments: d } }] }));
    }
  }
  frames.push(chunk({}, finish));
  frames.push({
    data: { id, object: "chat.completion.chunk", created, model, choices: [], usage },
  });
  frames.push({ data: "[DONE]" });
  return sseResponse(frames);
}
