/**
 * Server-sent events: a small hub that import passes publish to ("sessions changed") and that
 * each open browser tab subscribes to through `GET /api/events`.
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

/** Formats one SSE frame; data is JSON on a single line. */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event.replace(/[\r\n]/g, "")}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function createEventHub(options: EventHubOptions = {}): EventHub {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const cleanups = new Map<ReadableStreamDefaultController<Uint8Array>, () => void>();

  const drop = (c: ReadableStreamDefaultController<Uint8Array>) => {
    cleanups.get(c)?.();
    cleanups.delete(c);
    streams.delete(c);
    try {
      c.close();
    } catch { /* already closed */ }
  };

  return {
    publish(event, data) {
      const bytes = encoder.encode(sseFrame(event, data));
      for (const c of streams) {
        try {
          c.enqueue(bytes);
        } catch {
          drop(c);
        }
      }
    },
    response(signal) {
      let self: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          self = controller;
          streams.add(controller);
          controller.enqueue(encoder.encode(": connected\nretry: 2000\n\n"));
          const timer = setInterval(() => {
            try {
              controller.enqueue(encoder.encode(": keep-alive\n\n"));
            } catch {
              drop(controller);
            }
          }, heartbeatMs);
          const onAbort = () => drop(controller);
          signal?.addEventListener("abort", onAbort, { once: true });
          cleanups.set(controller, () => {
            clearInterval(timer);
            signal?.removeEventListener("abort", onAbort);
          });
        },
        cancel() {
          drop(self);
        },
      });
      const headers = new Headers(SECURITY_HEADERS);
      headers.set("content-type", "text/event-stream; charset=utf-8");
      headers.set("cache-control", "no-store");
      return new Response(body, { headers });
    },
    get size() {
      return streams.size;
    },
    close() {
      for (const c of [...streams]) drop(c);
    },
  };
}
