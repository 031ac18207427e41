/**
 * @module
 * One import at a time per data folder: `import.lock` (0600) holds the pid and command of the
 * process importing. A second `chronicle import` waits for it and says who it waits for; the
 * server skips a background pass while another process imports. A lock left by a process that
 * is gone (killed) is taken over.
 */

export interface LockHolder {
  pid: number;
  command: string;
  started_at: string;
}

export interface ImportLock {
  release(): void;
}

export function lockPath(dir: string): string {
  return `${dir}/import.lock`;
}

/**
 * Whether process `pid` still runs: `kill -0 PID` (signal 0 only asks), through `sh`, which
 * Chronicle may run (Deno allows neither `Deno.kill` nor reading /proc with a list of programs).
 * Where that cannot be asked, assume it does.
 */
async function alive(pid: number): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === Deno.pid || Deno.build.os === "windows") return true;
  try {
    const r = await new Deno.Command("sh", {
      args: ["-c", 'kill -0 "$1" 2>/dev/null', "sh", String(pid)],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return r.code === 0;
  } catch {
    return true;
  }
}

function readHolder(path: string): LockHolder | null {
  try {
    const h = JSON.parse(Deno.readTextFileSync(path)) as Partial<LockHolder>;
    return {
      pid: Number(h.pid),
      command: String(h.command ?? "chronicle"),
      started_at: String(h.started_at ?? ""),
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    // being written this very moment, or garbage: a fresh one is held, an old one is stale
    try {
      const age = Date.now() - (Deno.statSync(path).mtime?.getTime() ?? 0);
      return age < 5000 ? { pid: Deno.pid, command: "chronicle", started_at: "" } : null;
    } catch {
      return null;
    }
  }
}

/** Takes the lock, or says who holds it. Never waits. */
export async function tryImportLock(
  dir: string,
  command: string,
): Promise<ImportLock | LockHolder> {
  const path = lockPath(dir);
  for (let attempt = 0; attempt < 3; attempt++) {
    const me: LockHolder = { pid: Deno.pid, command, started_at: new Date().toISOString() };
    try {
      const f = Deno.openSync(path, { write: true, createNew: true, mode: 0o600 });
      try {
        f.writeSync(new TextEncoder().encode(JSON.stringify(me) + "\n"));
      } finally {
        f.close();
      }
      return {
        release() {
          // only our own: a lock taken over meanwhile stays its holder's
          if (readHolder(path)?.pid === me.pid) {
            try {
              Deno.removeSync(path);
            } catch { /* gone already */ }
          }
        },
      };
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    const holder = readHolder(path);
    if (holder && await alive(holder.pid)) return holder;
    // the holder is gone (killed mid-import): its lock is stale
    try {
      Deno.removeSync(path);
    } catch { /* someone else took it over first */ }
  }
  return readHolder(path) ?? { pid: 0, command: "chronicle", started_at: "" };
}

/**
 * Takes the lock, waiting while another process holds it; `onWait` hears who, once. Null when
 * `signal` aborts first (Ctrl-C while waiting).
 */
export async function waitImportLock(
  dir: string,
  command: string,
  options: { onWait?: (holder: LockHolder) => void; pollMs?: number; signal?: AbortSignal } = {},
): Promise<ImportLock | null> {
  const { signal } = options;
  let told = false;
  while (!signal?.aborted) {
    const got = await tryImportLock(dir, command);
    if ("release" in got) return got;
    if (!told) options.onWait?.(got);
    told = true;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, options.pollMs ?? 250);
      signal?.addEventListener("abort", done);
    });
  }
  return null;
}

export function isLock(x: ImportLock | LockHolder): x is ImportLock {
  return "release" in x;
}
