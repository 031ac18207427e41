/**
 * Ctrl-C (SIGINT) and SIGTERM for a command that can stop cleanly: the first one aborts
 * `signal` (the command finishes what it is writing, then says what is left), a second one
 * calls `atOnce` (the command exits now; what was committed stays).
 */
export interface Interrupt {
  readonly signal: AbortSignal;
  /** The exit code the signal asks for: 130 for SIGINT, 143 for SIGTERM (128 + its number). */
  readonly code: number;
  /** Stops listening. */
  dispose(): void;
}

export function listenForInterrupt(
  onFirst: () => void,
  atOnce: (code: number) => void,
): Interrupt {
  const stop = new AbortController();
  let code = 130;
  const on = (name: "SIGINT" | "SIGTERM") => () => {
    if (stop.signal.aborted) return atOnce(name === "SIGINT" ? 130 : 143);
    code = name === "SIGINT" ? 130 : 143;
    stop.abort();
    onFirst();
  };
  const names: ("SIGINT" | "SIGTERM")[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  const listeners = names.map((n) => [n, on(n)] as const);
  for (const [n, f] of listeners) Deno.addSignalListener(n, f);
  return {
    signal: stop.signal,
    get code() {
      return code;
    },
    dispose() {
      for (const [n, f] of listeners) Deno.removeSignalListener(n, f);
    },
  };
}
