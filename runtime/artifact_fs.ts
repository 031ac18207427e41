/** @module ArtifactWriter / ArtifactReader over Deno's file APIs (0700 folders, 0600 files). */
import type { ArtifactReader, ArtifactWriter } from "../core/artifacts/mod.ts";

const unix = Deno.build.os !== "windows";

export const denoArtifactWriter: ArtifactWriter = {
  async mkdir(path, mode) {
    try {
      await Deno.mkdir(path, { mode });
      if (unix) await Deno.chmod(path, mode);
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
  },
  async writeFile(path, data, mode) {
    await Deno.writeFile(path, data, { mode, createNew: true });
    if (unix) await Deno.chmod(path, mode);
  },
  rename: (from, to) => Deno.rename(from, to),
  async remove(path) {
    try {
      await Deno.remove(path, { recursive: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  },
  async exists(path) {
    try {
      await Deno.lstat(path);
      return true;
    } catch {
      return false;
    }
  },
};

export const denoArtifactReader: ArtifactReader = {
  async readFile(path) {
    try {
      return await Deno.readFile(path);
    } catch {
      return null;
    }
  },
  async listDir(path) {
    const out: string[] = [];
    try {
      for await (const e of Deno.readDir(path)) out.push(e.name);
    } catch {
      return [];
    }
    return out.sort();
  },
};
