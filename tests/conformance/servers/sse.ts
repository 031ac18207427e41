/** Small helpers the protocol adapters share: SSE framing and chunking of long strings. */

/** A text/event-stream response from a list of frames; `event` names are optional. */
export function sseResponse(frames: { event?: string; data: unknown }[]): Response {
  const enc = new TextEncoder();
  const body = frames.map((f) =>
    (f.event ? `event: ${f.event}\n` : "") +
    `data: ${typeof f.data === "string" ? f.data : JSON.stringify(f.data)}\n\n`
  ).join("");
  return new Response(enc.encode(body), {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    },
  });
}

export function jsonResponse(data: unknown, status = 200): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** Split a string into pieces of at most `size` code points, so deltas never split a pair. */
export function chunks(s: string, size = 4096): string[] {
  const cps = Array.from(s);
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(""));
  return out.length ? out : [""];
}

/** The text of a content field that is a string or a list of typed blocks. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((b) => {
      if (typeof b === "string") return b;
      if (b && typeof b === "object") {
        const o = b as Record<string, unknown>;
        if (typeof o.text === "string") return o.text;
        if (o.content !== undefined) return textOf(o.content);
      }
      return "";
    }).join("\n");
  }
  return "";
}
