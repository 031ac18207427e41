/**
 * Scripted model servers for the conformance suite: one HTTP server on 127.0.0.1 (port 0)
 * that speaks the wire protocol of one agent CLI, replays a scenario's native script and
 * logs every request it receives (with the full body, so a test can prove what never
 * reached the model).
 *
 * @module
 */
import { type ConversationView, head, type NativeScript, replyFor } from "../script.ts";
import { anthropicRespond, anthropicView } from "./anthropic.ts";
import { chatRespond, chatView } from "./openai_chat.ts";
import { geminiRespond, geminiView } from "./gemini.ts";
import { responsesRespond, responsesView } from "./openai_responses.ts";
import { jsonResponse } from "./sse.ts";

export type Protocol = "anthropic" | "openai-responses" | "openai-chat" | "gemini";

/** Tool-call id prefixes shaped like each provider's own. */
const ID_PREFIX: Record<Protocol, string> = {
  "anthropic": "toolu_mock",
  "openai-responses": "mock",
  "openai-chat": "mock",
  "gemini": "mock",
};

/** One line of the request log. */
export interface RequestLogEntry {
  n: number;
  ts: string;
  method: string;
  path: string;
  ua: string | null;
  kind: "main" | "sub" | "side" | "other";
  segment?: number;
  turn?: number;
  n_results?: number;
  results?: { err: boolean; head: string }[];
  reply?: { text?: string; calls: { name: string; input: unknown }[] };
  warning?: string;
  /** The raw request body, verbatim. */
  body: string;
}

export interface ModelServer {
  port: number;
  url: string;
  requests: RequestLogEntry[];
  close(): Promise<void>;
}

export interface ModelServerOptions {
  /** Called with every request as it is logged (e.g. to append to a file). */
  onRequest?: (entry: RequestLogEntry) => void;
  /** Milliseconds each answer waits, as a real model takes time to reply. Default 0. */
  replyDelayMs?: number;
}

/** Start a scripted server for `protocol` on 127.0.0.1, port chosen by the OS. */
export function startModelServer(
  protocol: Protocol,
  script: NativeScript,
  options: ModelServerOptions = {},
): Promise<ModelServer> {
  const requests: RequestLogEntry[] = [];
  const answer = createModelHandler(protocol, script, (e) => {
    requests.push(e);
    options.onRequest?.(e);
  });
  const delay = options.replyDelayMs ?? 0;
  const handler = delay > 0
    ? async (req: Request) => {
      const res = await answer(req);
      await new Promise((r) => setTimeout(r, delay));
      return res;
    }
    : answer;
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          port,
          url: `http://127.0.0.1:${port}`,
          requests,
          close: () => server.shutdown(),
        }),
    }, handler);
  });
}

/** The request handler alone, for in-process tests. */
export function createModelHandler(
  protocol: Protocol,
  script: NativeScript,
  log: (e: RequestLogEntry) => void,
): (req: Request) => Promise<Response> {
  let n = 0;
  return async (req) => {
    const url = new URL(req.url);
    const body = req.method === "POST" ? await req.text() : "";
    const entry: RequestLogEntry = {
      n: ++n,
      ts: new Date().toISOString(),
      method: req.method,
      path: url.pathname + url.search,
      ua: req.headers.get("user-agent"),
      kind: "other",
      body,
    };
    let parsed: Record<string, unknown> = {};
    try {
      if (body) parsed = JSON.parse(body);
    } catch {
      // Not JSON: answered as "other" below.
    }
    const route = routeOf(protocol, req.method, url.pathname);
    if (route === "other") {
      log(entry);
      if (url.pathname.endsWith(":countTokens") || url.pathname.endsWith("/count_tokens")) {
        return jsonResponse({ input_tokens: 100, totalTokens: 100 });
      }
      if (req.method === "HEAD" || url.pathname === "/") return new Response(null);
      return jsonResponse({ error: { message: `no such route: ${url.pathname}` } }, 404);
    }
    const view: ConversationView = route === "anthropic"
      ? anthropicView(parsed)
      : route === "responses"
      ? responsesView(parsed)
      : route === "chat"
      ? chatView(parsed)
      : geminiView(parsed);
    const reply = replyFor(script, view, ID_PREFIX[protocol] + n);
    if (reply.kind === "side" && route === "gemini" && wantsJson(parsed)) {
      // Gemini CLI's next-speaker / loop checks ask for JSON: let the user speak next.
      reply.text = JSON.stringify({
        unproductive_state_analysis: "mock",
        unproductive_state_confidence: 0,
        next_speaker: "user",
        reasoning: "mock",
      });
    }
    Object.assign(entry, {
      kind: reply.kind,
      segment: reply.segment,
      turn: reply.turn,
      n_results: view.results.length,
      results: view.results.map((r) => ({ err: r.err, head: head(r.head) })),
      reply: {
        text: reply.text,
        calls: reply.calls.map((c) => ({ name: c.name, input: c.input })),
      },
      warning: reply.warning,
    });
    log(entry);
    const id = `${n}${protocol.slice(0, 3)}`;
    switch (route) {
      case "anthropic":
        return anthropicRespond(reply, parsed, `msg_mock${id}`);
      case "responses":
        return responsesRespond(reply, parsed, `resp_mock${id}`);
      case "chat":
        return chatRespond(reply, parsed, `chatcmpl-mock${id}`);
      case "gemini":
        return geminiRespond(reply, url);
    }
  };
}

function routeOf(
  protocol: Protocol,
  method: string,
  path: string,
): "anthropic" | "responses" | "chat" | "gemini" | "other" {
  if (method !== "POST") return "other";
  if (protocol === "anthropic" && path.endsWith("/v1/messages")) return "anthropic";
  if (protocol === "openai-responses" && path.endsWith("/responses")) return "responses";
  if (protocol === "openai-chat" && path.endsWith("/chat/completions")) return "chat";
  if (
    protocol === "gemini" &&
    (path.endsWith(":generateContent") || path.endsWith(":streamGenerateContent"))
  ) return "gemini";
  return "other";
}

function wantsJson(body: Record<string, unknown>): boolean {
  const cfg = body.generationConfig as Record<string, unknown> | undefined;
  return cfg?.responseMimeType === "application/json" || cfg?.responseJsonSchema !== undefined ||
    cfg?.responseSchema !== undefined;
}
