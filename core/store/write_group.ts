/**
 * Write groups: the units of a bulk import share commits, a few at a time, and each unit stays
 * atomic. The pages every unit rewrites (indexes, search segments) then reach the WAL once a
 * group instead of once a unit.
 */

/** When a write group commits: whichever limit is reached first. */
export interface WriteGroupLimits {
  units: number;
  /** Bytes read from the sources for the units in the group. */
  bytes: number;
  /** How long the group may hold the write lock, so other writers wait at most this. */
  ms: number;
}

export const DEFAULT_GROUP_LIMITS: WriteGroupLimits = { units: 8, bytes: 32 << 20, ms: 250 };

/** See `ChronicleStore.writeGroup`. `close` commits what is open; call it in a `finally`. */
export class WriteGroup {
  private open = false;
  private units = 0;
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The units applied since the group began, to apply again after a rollback. */
  private applied: (() => unknown)[] = [];
  private failed: unknown;

  constructor(
    private readonly tx: {
      begin(): void;
      commit(): void;
      rollback(): void;
      /** While on, a nested `transaction` joins the open one instead of making a savepoint. */
      join(on: boolean): void;
    },
    private readonly limits: WriteGroupLimits,
  ) {}

  /**
   * Runs one unit's writes inside the group; commits when a limit is reached. When the unit
   * throws, the group is rolled back, the units before it in the group are applied again, and
   * the error goes to the caller: the failed unit leaves nothing behind. (Savepoints would do
   * the same at a cost on every unit; failures are rare.)
   */
  run<T>(bytes: number, fn: () => T): T {
    this.rethrow();
    if (!this.open) this.begin();
    this.tx.join(true);
    try {
      const out = fn();
      this.applied.push(fn);
      return out;
    } catch (e) {
      this.recover();
      throw e;
    } finally {
      this.tx.join(false);
      this.units++;
      this.bytes += bytes;
      if (this.units >= this.limits.units || this.bytes >= this.limits.bytes) this.close();
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.applied = [];
    this.rethrow();
    if (!this.open) return;
    this.open = false;
    this.tx.commit();
  }

  private rethrow(): void {
    if (this.failed === undefined) return;
    const e = this.failed;
    this.failed = undefined;
    throw e;
  }

  private begin(): void {
    this.tx.begin();
    this.open = true;
    this.units = this.bytes = 0;
    // While the importer waits for its next unit, the lock is released on time. A commit that
    // fails here (a full disk) is reported by the group's next call.
    this.timer = setTimeout(() => {
      try {
        this.close();
      } catch (e) {
        this.failed = e;
      }
    }, this.limits.ms);
  }

  private recover(): void {
    const again = this.applied;
    clearTimeout(this.timer);
    this.tx.rollback();
    this.open = false;
    this.applied = [];
    this.begin();
    try {
      for (const fn of again) fn(); // they succeeded a moment ago, on the same data
      this.applied = again;
    } catch (e) {
      // Not expected: give the group up. Those units' checkpoints went with it, so the next
      // pass imports them again.
      clearTimeout(this.timer);
      this.tx.rollback();
      this.open = false;
      throw e;
    }
  }
}
