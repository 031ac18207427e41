/**
 * Anthropic Messages API (`POST /v1/messages`), as Claude Code speaks it: an SSE stream by
 * default, plain JSON when the request says `stream: false` (Claude Code's fallback).
 */
import type { ConversationView, ScriptedReply } from "../script.ts";
import { chunks, jsonResponse, sseResponse, textOf } from "./sse.ts";

type Msg = { role?: string; content?: unknown };

export function anthropicView(body: Record<string, unknown>): ConversationView {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Msg[];
  const first = messages.find((m) => m.role === "user");
  const results: ConversationView["results"] = [];
  const userTexts: ConversationView["userTexts"] = [];
  for (const m of messages) {
    if (m.role !== "user") continue;
    if (!Array.isArray(m.content)) {
      userTexts.push({ text: textOf(m.content), after: results.length });
      continue;
    }
    const texts: string[] = [];
    for (const b of m.content as Record<string, unknown>[]) {
      if (b?.type === "tool_result") {
        results.push({ err: b.is_error === true, head: textOf(b.content).slice(0, 200) });
      } else if (b?.type === "text" && typeof b.text === "string") texts.push(b.text);
    }
    if (texts.length) userTexts.push({ text: texts.join("\n"), after: results.length });
  }
  return {
    firstUserText: first ? textOf(first.content) : "",
    results,
    userTexts,
    hasTools: Array.isArray(body.tools) && body.tools.length > 0,
  };
}

function blocks(reply: ScriptedReply): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (reply.text) out.push({ type: "text", text: reply.text });
  for (const c of reply.calls) {
    out.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
  }
  return out;
}

export function anthropicRespond(
  reply: ScriptedReply,
  body: Record<string, unknown>,
  msgId: string,
): Response {
  const model = typeof body.model === "string" ? body.model : "claude-mock";
  const content = blocks(reply);
  const stopReason = reply.calls.length ? "tool_use" : "end_turn";
  const usage = { input_tokens: 100, output_tokens: 20 };
  if (body.stream !== true) {
    return jsonResponse({
      id: msgId,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    });
  }
  const frames: { event: string; data: unknown }[] = [{
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: msgId,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      },
    },
  }];
  content.forEach((b, index) => {
    if (b.type === "text") {
      frames.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      });
      for (const piece of chunks(b.text as string, 64)) {
        frames.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } },
        });
      }
    } else {
      frames.push({
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
        },
      });
      for (const piece of chunks(JSON.stringify(b.input), 512)) {
        frames.push({
          event: "content_block_delta",
          data: {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: piece },
          },
        });
      }
    }
    frames.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  frames.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 20 },
    },
  });
  frames.push({ event: "message_stop", data: { type: "message_stop" } });
  return sseResponse(frames);
}
