/**
 * A small server-sent-events client over fetch, for tests and benchmarks: parses frames as the
 * browser does (id, event, data; comments skipped) and lets a caller wait for the event it
 * expects. `lastId` is what a browser would send back as `Last-Event-ID`.
 */

export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
  /** performance.now() when the frame was read. */
  at: number;
}

export class SseClient {
  readonly events: SseEvent[] = [];
  lastId: string | undefined;
  private readonly ctl = new AbortController();
  private waiters: { test: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }[] = [];
  private done: Promise<void>;
  status = 0;

  private constructor(private readonly res: Response) {
    this.status = res.status;
    this.done = this.read();
  }

  /** Connects; throws when the server does not answer with an event stream. */
  static async connect(
    url: string,
    options: { lastEventId?: string; headers?: Record<string, string> } = {},
  ): Promise<SseClient> {
    const headers = new Headers(options.headers);
    if (options.lastEventId) headers.set("last-event-id", options.lastEventId);
    const ctl = new AbortController();
    const res = await fetch(url, { headers, signal: ctl.signal });
    if (!res.ok || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
      const text = await res.text();
      throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
    }
    const client = new SseClient(res);
    client.ctl.signal.addEventListener("abort", () => ctl.abort());
    return client;
  }

  /** Resolves with the first event (already received or to come) that passes `test`. */
  next(test: (e: SseEvent) => boolean, from = 0): Promise<SseEvent> {
    const seen = this.events.slice(from).find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** The op ids of every `ops` event so far, in the order received. */
  opIds(): string[] {
    return this.events.filter((e) => e.event === "ops").flatMap((e) =>
      (e.data as { ops: { op_id: string }[] }).ops.map((o) => o.op_id)
    );
  }

  /** Resolves once `ops` events hold `n` operations (counting each id once). */
  async waitForOps(n: number): Promise<void> {
    while (new Set(this.opIds()).size < n) {
      await this.next(() => true, this.events.length);
    }
  }

  /** Leaves: the server sees the connection go. */
  async close(): Promise<void> {
    this.ctl.abort();
    await this.done;
  }

  private async read(): Promise<void> {
    const reader = this.res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end: number;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          this.frame(frame);
        }
      }
    } catch (e) {
      if (!this.ctl.signal.aborted && !(e instanceof DOMException)) throw e;
    } finally {
      reader.releaseLock();
    }
  }

  private frame(frame: string): void {
    let id: string | undefined;
    let event = "message";
    const data: string[] = [];
    for (const line of frame.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "id") id = value;
      else if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) return;
    const e: SseEvent = { id, event, data: JSON.parse(data.join("\n")), at: performance.now() };
    if (id !== undefined) this.lastId = id;
    this.events.push(e);
    const ready = this.waiters.filter((w) => w.test(e));
    this.waiters = this.waiters.filter((w) => !w.test(e));
    for (const w of ready) w.resolve(e);
  }
}
