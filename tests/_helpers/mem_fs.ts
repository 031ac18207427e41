/** An in-memory SourceFs for importer tests: files are byte arrays that tests append to. */
import type { DirEntry, FileStat, SourceFs } from "../../core/sources/types.ts";

export class MemFs implements SourceFs {
  readonly files = new Map<string, { bytes: Uint8Array; ino: number; mtimeMs: number }>();
  readonly dirs = new Set<string>(["/"]);
  stats = 0;
  reads = 0;
  /** Chunk size for readFrom, small to exercise lines split across chunks. */
  chunk = 7;
  private nextIno = 1;
  private clock = 1_000;

  write(path: string, content: string | Uint8Array, options: { replace?: boolean } = {}): void {
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    const old = this.files.get(path);
    this.files.set(path, {
      bytes,
      ino: old && !options.replace ? old.ino : this.nextIno++,
      mtimeMs: this.clock++,
    });
    for (let d = path.slice(0, path.lastIndexOf("/")); d; d = d.slice(0, d.lastIndexOf("/"))) {
      this.dirs.add(d);
    }
  }

  append(path: string, content: string): void {
    const old = this.files.get(path)!;
    const add = new TextEncoder().encode(content);
    const bytes = new Uint8Array(old.bytes.byteLength + add.byteLength);
    bytes.set(old.bytes);
    bytes.set(add, old.bytes.byteLength);
    this.files.set(path, { bytes, ino: old.ino, mtimeMs: this.clock++ });
  }

  delete(path: string): void {
    this.files.delete(path);
  }

  stat(path: string): Promise<FileStat | null> {
    this.stats++;
    const f = this.files.get(path);
    if (f) {
      return Promise.resolve({
        isFile: true,
        isDirectory: false,
        size: f.bytes.byteLength,
        mtimeMs: f.mtimeMs,
        ino: f.ino,
      });
    }
    if (this.dirs.has(path)) {
      return Promise.resolve({ isFile: false, isDirectory: true, size: 0, mtimeMs: 0, ino: 0 });
    }
    return Promise.resolve(null);
  }

  readDir(path: string): Promise<DirEntry[]> {
    const names = new Map<string, DirEntry>();
    const prefix = path.endsWith("/") ? path : path + "/";
    for (const f of this.files.keys()) {
      if (!f.startsWith(prefix)) continue;
      const rest = f.slice(prefix.length);
      const name = rest.split("/")[0];
      const isDir = rest.includes("/");
      names.set(name, { name, isFile: !isDir, isDirectory: isDir, isSymlink: false });
    }
    return Promise.resolve([...names.values()].sort((a, b) => a.name.localeCompare(b.name)));
  }

  /** Yields every chunk in one buffer, as the real one does: a reader keeping one sees it change. */
  async *readFrom(path: string, offset: number): AsyncIterable<Uint8Array> {
    this.reads++;
    const f = this.files.get(path);
    if (!f) throw new Error(`ENOENT: ${path}`);
    const buf = new Uint8Array(this.chunk);
    for (let i = offset; i < f.bytes.byteLength; i += this.chunk) {
      const part = f.bytes.subarray(i, Math.min(i + this.chunk, f.bytes.byteLength));
      buf.fill(0);
      buf.set(part);
      yield buf.subarray(0, part.byteLength);
      await Promise.resolve();
    }
  }

  readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    const f = this.files.get(path);
    if (!f) return Promise.reject(new Error(`ENOENT: ${path}`));
    return Promise.resolve(f.bytes.slice(offset, offset + length));
  }

  readTextFile(path: string): Promise<string> {
    const f = this.files.get(path);
    if (!f) return Promise.reject(new Error(`ENOENT: ${path}`));
    return Promise.resolve(new TextDecoder().decode(f.bytes));
  }

  copyToTemp(): Promise<string> {
    return Promise.reject(new Error("MemFs cannot copy files"));
  }
  makeTempDir(): Promise<string> {
    return Promise.reject(new Error("MemFs has no temp folder"));
  }
  remove(): Promise<void> {
    return Promise.resolve();
  }
}
