/**
 * @module
 * SandboxFiles backed by the replay worker (replay_worker.ts), whose read and write
 * permissions are the sandbox folder and nothing else; the folder lives under the data
 * folder's `replay/`, named by Chronicle, never by a request.
 */
import { ChronicleError } from "../core/model/mod.ts";
import type { SandboxEntry, SandboxFiles } from "../core/replay/mod.ts";
import type { SandboxRequest, SandboxResponse } from "./replay_worker.ts";

type Body = SandboxRequest extends infer R ? R extends { id: number } ? Omit<R, "id"> : never
  : never;

/** A new sandbox folder `<dataDir>/replay/<id>/` (0700), with an id Chronicle chooses. */
export async function createSandboxDir(dataDir: string, sessionId: string): Promise<string> {
  const base = `${dataDir}/replay`;
  await Deno.mkdir(base, { recursive: true, mode: 0o700 });
  const slug = sessionId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80).replace(/^\.+/, "_");
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "");
  const rand = crypto.getRandomValues(new Uint8Array(3));
  const id = `${slug}-${stamp}-${
    Array.from(rand, (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
  const dir = `${base}/${id}`;
  await Deno.mkdir(dir, { mode: 0o700 });
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  return await Deno.realPath(dir);
}

/** Starts the worker for `root` (which must exist) and returns the adapter. */
export async function openSandboxFiles(root: string): Promise<SandboxFiles> {
  const worker = new Worker(new URL("./replay_worker.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        read: [root],
        write: [root],
        net: false,
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  worker.onmessage = (e: MessageEvent<SandboxResponse>) => {
    const w = waiting.get(e.data.id);
    if (!w) return;
    waiting.delete(e.data.id);
    if (e.data.ok) w.resolve(e.data.value);
    else {
      w.reject(
        e.data.code === "outside"
          ? new ChronicleError("outside", e.data.error)
          : new ChronicleError("io", e.data.error),
      );
    }
  };
  worker.onerror = (e) => {
    e.preventDefault();
    for (const w of waiting.values()) w.reject(new Error(`replay worker failed: ${e.message}`));
    waiting.clear();
  };
  const call = <T>(body: Body): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...body, id });
    });
  const real = await call<string>({ op: "init", root });
  return {
    root: real,
    read: (path) => call<Uint8Array | null>({ op: "read", path }),
    write: (path, bytes, o = {}) =>
      call<void>({ op: "write", path, bytes, executable: o.executable }),
    async symlink(path, target) {
      const place = await call<"refused" | { at: string }>({ op: "symlink", path, target });
      if (place === "refused") return "refused";
      await Deno.symlink(target, place.at);
      return "created";
    },
    remove: (path) => call<boolean>({ op: "remove", path }),
    list: () => call<SandboxEntry[]>({ op: "list" }),
    close: () => worker.terminate(),
  };
}
