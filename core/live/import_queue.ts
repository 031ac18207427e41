/**
 * One import at a time: the server's background passes and its live imports write through the
 * same store connection, and a unit must never be imported by two passes at once (both would
 * start from the same checkpoint). Live imports are urgent: they go before background work
 * that is waiting, so a session being watched does not wait for a whole first import, only for
 * the chunk that is running.
 */
import type { SourceUnit } from "../sources/types.ts";

interface Waiter {
  start: () => void;
}

export class ImportQueue {
  private running = false;
  private readonly urgent: Waiter[] = [];
  private readonly background: Waiter[] = [];
  private readonly idleWaiters: (() => void)[] = [];

  /** Runs `fn` when nothing else runs; `urgent` jobs go before waiting background ones. */
  run<T>(fn: () => Promise<T>, options: { urgent?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          this.running = true;
          fn().then(resolve, reject).finally(() => {
            this.running = false;
            this.next();
          });
        },
      };
      (options.urgent ? this.urgent : this.background).push(waiter);
      if (!this.running) this.next();
    });
  }

  /** Jobs running or waiting. */
  get size(): number {
    return (this.running ? 1 : 0) + this.urgent.length + this.background.length;
  }

  /** Resolves once nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private next(): void {
    const w = this.urgent.shift() ?? this.background.shift();
    if (w) return w.start();
    for (const done of this.idleWaiters.splice(0)) done();
  }
}

/**
 * Gathers requests to import units into one urgent job: units asked for while a job waits
 * join it (by path), so ten watchers firing at once cost one import pass.
 */
export class UnitBatcher {
  private pending = new Map<string, SourceUnit>();
  /** The job that has not started yet (new units join it), and its marker. */
  private waiting: Promise<void> | null = null;
  private token: object | null = null;

  constructor(
    private readonly queue: ImportQueue,
    private readonly importUnits: (units: SourceUnit[]) => Promise<void>,
  ) {}

  /** Resolves once every unit asked for is imported (or its import failed and was reported). */
  request(units: readonly SourceUnit[]): Promise<void> {
    for (const u of units) this.pending.set(u.path, u);
    if (this.waiting) return this.waiting;
    const token = {};
    this.token = token;
    // The queue may start the job at once, inside run(): it must not find itself waiting.
    const job = this.queue.run(() => {
      if (this.token === token) this.token = this.waiting = null;
      const batch = [...this.pending.values()];
      this.pending = new Map();
      return this.importUnits(batch);
    }, { urgent: true });
    if (this.token === token) this.waiting = job;
    return job;
  }
}
