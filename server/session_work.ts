/**
 * Heavy work on one whole session runs one piece at a time: its causality and code analysis,
 * a document of it (the share dialog's preview, a download, a share), its security check.
 * Each already gives the event loop a turn between its pages, so other requests go between;
 * two of them at once would only interleave their pages (one thread: no sooner done) while
 * their memory added up. Opening the bench's 200 MiB session and its share dialog, then a
 * download, reached 502 MiB with the three side by side.
 */
export interface SessionWork {
  /** Runs `work` once the work queued before it has ended (however it ended). */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function oneAtATime(): SessionWork {
  let last: Promise<unknown> = Promise.resolve();
  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      const next = last.then(work, work);
      last = next.catch(() => {});
      return next;
    },
  };
}
