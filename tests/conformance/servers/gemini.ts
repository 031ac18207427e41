/**
 * Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` and
 * `:generateContent`), as Gemini CLI speaks it.
 */
import type { ConversationView, ScriptedReply } from "../script.ts";
import { jsonResponse, sseResponse } from "./sse.ts";

type Content = { role?: string; parts?: Record<string, unknown>[] };

export function geminiView(body: Record<string, unknown>): ConversationView {
  const contents = (Array.isArray(body.contents) ? body.contents : []) as Content[];
  // Gemini CLI sends a session-context user turn before the prompt: take every user turn up
  // to the first model turn.
  const firstModel = contents.findIndex((c) => c.role === "model");
  const opening = firstModel < 0 ? contents : contents.slice(0, firstModel);
  const results: ConversationView["results"] = [];
  const userTexts: ConversationView["userTexts"] = [];
  for (const c of contents) {
    const texts: string[] = [];
    for (const p of c.parts ?? []) {
      const fr = p.functionResponse as { response?: Record<string, unknown> } | undefined;
      if (fr) {
        const r = fr.response ?? {};
        results.push({ err: "error" in r, head: JSON.stringify(r).slice(0, 200) });
      } else if (c.role === "user" && typeof p.text === "string") texts.push(p.text);
    }
    if (texts.length) userTexts.push({ text: texts.join("\n"), after: results.length });
  }
  const tools = Array.isArray(body.tools) ? body.tools as Record<string, unknown>[] : [];
  return {
    firstUserText: opening.filter((c) => c.role === "user").flatMap((c) => c.parts ?? [])
      .map((p) => typeof p.text === "string" ? p.text : "").join("\n"),
    results,
    userTexts,
    hasTools: tools.some((t) =>
      Array.isArray(t.functionDeclarations) && t.functionDeclarations.length > 0
    ),
  };
}

export function geminiRespond(reply: ScriptedReply, url: URL): Response {
  const model = url.pathname.match(/models\/([^:]+):/)?.[1] ?? "gemini-mock";
  const usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };
  const parts: Record<string, unknown>[] = [];
  if (reply.text) parts.push({ text: reply.text });
  for (const c of reply.calls) parts.push({ functionCall: { name: c.name, args: c.input } });
  const candidate = (p: Record<string, unknown>[], finishReason?: string) => ({
    candidates: [{
      content: { role: "model", parts: p },
      index: 0,
      ...(finishReason ? { finishReason } : {}),
    }],
    usageMetadata,
    modelVersion: model,
  });
  if (!url.pathname.endsWith(":streamGenerateContent")) {
    return jsonResponse(candidate(parts, "STOP"));
  }
  // Text first, then all calls in the final chunk with the finish reason.
  const frames: { data: unknown }[] = [];
  const textParts = parts.filter((p) => "text" in p);
  const callParts = parts.filter((p) => !("text" in p));
  if (textParts.length && callParts.length) {
    frames.push({ data: candidate(textParts) });
    frames.push({ data: candidate(callParts, "STOP") });
  } else {
    frames.push({ data: candidate(parts, "STOP") });
  }
  return sseResponse(frames);
}
