/**
 * Server-sent events, in one place: `sseFrame` (the one writer of the wire format: a field can
 * never add a line), `openSseStream` (one client's stream: heartbeats, a bounded queue for a
 * slow client, clean-up once when the client goes away or the server closes it), and the
 * event hub that import passes publish to ("sessions changed") and that each browser tab
 * subscribes to through `GET /api/events`. The live view of a session
 * (`GET /api/sessions/:id/live`) is a stream of its own, fed by core/live.
 */
import { SECURITY_HEADERS } from "./errors.ts";

export interface ServerEvent {
  /** Event name, e.g. `import` or `interception`. */
  event: string;
  data: unknown;
}

export interface EventHub {
  /** Sends an event to every open stream. */
  publish(event: string, data: unknown): void;
  /** An SSE response that stays open until the client leaves (`signal`) or the hub closes. */
  response(signal?: AbortSignal): Response;
  /** Number of open streams. */
  readonly size: number;
  /** Ends every stream. */
  close(): void;
}

export interface EventHubOptions {
  /** Milliseconds between keep-alive comments. Default 15000. */
  heartbeatMs?: number;
}

const encoder = new TextEncoder();

/** A field value on one line: CR and LF end an SSE line, and an id may not hold NUL. */
function oneLine(s: string): string {
  return s.replace(/[\r\n\0]/g, "");
}

/** Formats one SSE frame; data is JSON on a single line, the id (when given) a cursor. */
export function sseFrame(event: string, data: unknown, id?: string): string {
  const idLine = id === undefined ? "" : `id: ${oneLine(id)}\n`;
  return `${idLine}event: ${oneLine(event)}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface SseStreamOptions {
  /** The request's signal: the stream ends when the client goes away. */
  signal?: AbortSignal;
  /** Milliseconds between keep-alive comments. Default 15000. */
  heartbeatMs?: number;
  /** How long the browser waits before it reconnects by itself (`retry:`). Default 2000. */
  retryMs?: number;
  /** Bytes queued for a slow client before `ready()` waits for it. Default 1 MiB. */
  highWaterBytes?: number;
  /** Called once, when the stream has ended for any reason. */
  onClose?: () => void;
}

/** One client's event stream. */
export interface SseStream {
  response: Response;
  /** Queues one event; false once the stream has ended. */
  send(event: string, data: unknown, id?: string): boolean;
  /** Resolves once the client has taken enough of what was queued, or the stream ended. */
  ready(): Promise<void>;
  readonly closed: boolean;
  close(): void;
}

/** Opens one client's stream (see {@link SseStreamOptions}). */
export function openSseStream(options: SseStreamOptions = {}): SseStream {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const waiting: (() => void)[] = [];
  const wake = () => {
    for (const w of waiting.splice(0)) w();
  };
  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    options.signal?.removeEventListener("abort", end);
    wake();
    try {
      controller.close();
    } catch { /* already closed or errored */ }
    options.onClose?.();
  };
  const enqueue = (text: string) => {
    if (closed) return false;
    try {
      controller.enqueue(encoder.encode(text));
      return true;
    } catch {
      end();
      return false;
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(encoder.encode(`: connected\nretry: ${options.retryMs ?? 2000}\n\n`));
      timer = setInterval(() => enqueue(": keep-alive\n\n"), options.heartbeatMs ?? 15_000);
    },
    pull: () => wake(),
    cancel: () => end(),
  }, new ByteLengthQueuingStrategy({ highWaterMark: options.highWaterBytes ?? 1 << 20 }));
  if (options.signal?.aborted) queueMicrotask(end);
  else options.signal?.addEventListener("abort", end, { once: true });
  const headers = new Headers(SECURITY_HEADERS);
  headers.set("content-type", "text/event-stream; charset=utf-8");
  headers.set("cache-control", "no-store");
  return {
    response: new Response(body, { headers }),
    send: (event, data, id) => enqueue(sseFrame(event, data, id)),
    ready: () =>
      closed || (controller.desiredSize ?? 0) > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push(resolve)),
    get closed() {
      return closed;
    },
    close: end,
  };
}

export function createEventHub(options: EventHubOptions = {}): EventHub {
  const streams = new Set<SseStream>();
  return {
    publish(event, data) {
      for (const s of streams) s.send(event, data);
    },
    response(signal) {
      const stream: SseStream = openSseStream({
        signal,
        heartbeatMs: options.heartbeatMs,
        onClose: () => streams.delete(stream),
      });
      streams.add(stream);
      return stream.response;
    },
    get size() {
      return streams.size;
    },
    close() {
      for (const s of [...streams]) s.close();
    },
  };
}
