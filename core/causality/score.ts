/**
 * The tiers that link a change to what the agent looked at before it, and the scoring of
 * every earlier read, search and listing of the session against each change. Indexed by path,
 * folder and base name, so a long session costs a few lookups per change, not a scan.
 */
import type { ChangeKind, OpFacts, SourceKind } from "./facts.ts";
import { countBelow as below } from "./_sorted.ts";
import { basename, dirname, displayPath } from "./paths.ts";

/** The tiers, strongest first. */
export type Tier = "same_file" | "same_folder" | "same_name" | "search_match" | "recent";

/** Score of each tier (the original Chronicle's figures). */
export const TIER_SCORES: Readonly<Record<Tier, number>> = {
  same_file: 0.95,
  same_folder: 0.55,
  same_name: 0.5,
  search_match: 0.45,
  recent: 0.2,
};

/** What each tier means, for people. */
export const TIER_LABELS: Readonly<Record<Tier, string>> = {
  same_file: "read the changed file",
  same_folder: "read a file in the same folder",
  same_name: "read a file with the same name elsewhere",
  search_match: "a search that named the changed file",
  recent: "read shortly before",
};

/** Sources kept per change. */
export const MAX_SOURCES = 10;
/** How many of the latest reads, searches and listings before a change count as "recent". */
export const RECENT_WINDOW = 8;

export interface Evidence {
  /** The changed file this source is linked to (as displayed). */
  changed: string;
  /** The file read or named (as displayed). */
  path?: string;
  /** The same file as one normalised key (absolute when the session has a project). */
  key?: string;
  /** The pattern, or the result line, that named the changed file. */
  match?: string;
  via: "read" | "scope" | "result" | "pattern" | "window";
  /** For the recent tier: 1 for the last source before the change, up to the window. */
  distance?: number;
}

export interface SourceLink {
  op: string;
  seq: number;
  connection: string;
  kind: SourceKind;
  tool?: string;
  tier: Tier;
  score: number;
  evidence: Evidence;
  /** The read or search itself failed (a missing file, a failing grep). */
  failed: boolean;
}

export interface ChangeLinks {
  op: string;
  seq: number;
  connection: string;
  kind: ChangeKind;
  tool?: string;
  /** The files changed (as displayed). */
  files: string[];
  failed: boolean;
  /** The strongest sources, best first (score, then nearest). At most {@link MAX_SOURCES}. */
  sources: SourceLink[];
}

/** Positions (indexes into the facts) by key, each list in timeline order. */
class Index {
  readonly map = new Map<string, number[]>();
  add(key: string, at: number): void {
    const list = this.map.get(key);
    if (!list) this.map.set(key, [at]);
    else if (list[list.length - 1] !== at) list.push(at);
  }
  get(key: string): number[] {
    return this.map.get(key) ?? [];
  }
}

function globRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        re += ".*";
        i++;
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i);
      if (end < 0) re += "\\[";
      else {
        re += glob.slice(i, end + 1).replace(/\\/g, "\\\\");
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Options of {@link linkChanges}. */
export interface LinkOptions {
  /** Project folder: paths are shown relative to it. */
  project?: string;
  /** Sources kept per change. Default {@link MAX_SOURCES}. */
  maxSources?: number;
  /** Size of the recent window. Default {@link RECENT_WINDOW}. */
  recentWindow?: number;
}

/**
 * Links every change to its likely sources. For each change, every earlier read, search and
 * listing (any thread, sub-agents included) gets the best tier it earns against any of the
 * changed files; the best {@link MAX_SOURCES} are kept, ties going to the nearest.
 */
export function linkChanges(facts: OpFacts[], options: LinkOptions = {}): ChangeLinks[] {
  const max = options.maxSources ?? MAX_SOURCES;
  const window = options.recentWindow ?? RECENT_WINDOW;
  const show = (p: string) => displayPath(p, options.project);
  const byFile = new Index(), byFolder = new Index(), byName = new Index();
  const byResult = new Index(), byPatternName = new Index();
  const sources: number[] = [];
  const globs: { at: number; re: RegExp; glob: string }[] = [];
  const out: ChangeLinks[] = [];

  for (let at = 0; at < facts.length; at++) {
    const f = facts[at];
    // A change is scored against what came before it; the same step's own read is not a cause.
    if (f.change) out.push(linkOne(at));
    const s = f.source;
    if (!s) continue;
    sources.push(at);
    for (const p of s.files) {
      byFile.add(p, at);
      byFolder.add(dirname(p), at);
      byName.add(basename(p), at);
    }
    for (const p of s.scopes) byFile.add(p, at);
    for (const p of s.named.keys()) byResult.add(p, at);
    for (const n of s.patternNames) byPatternName.add(n, at);
    for (const g of s.globs) globs.push({ at, re: globRegExp(g), glob: g });
  }
  return out;

  function linkOne(at: number): ChangeLinks {
    const change = facts[at];
    const c = change.change!;
    const taken = new Map<number, SourceLink>();
    const files = c.files.filter((p) => !/[*?[]/.test(p));
    // Another file read again says nothing new: below the same-file tier, only the first
    // (strongest, then latest) read of each other file is kept. Every search and listing
    // stays its own.
    const seenKeys = new Set<string>();
    const take = (pos: number, tier: Tier, evidence: Evidence): boolean => {
      if (taken.has(pos)) return false;
      const f = facts[pos];
      const s = f.source!;
      if (s.kind === "read" && tier !== "same_file" && evidence.key !== undefined) {
        if (seenKeys.has(evidence.key)) return false;
        seenKeys.add(evidence.key);
      }
      taken.set(pos, {
        op: f.op,
        seq: f.seq,
        connection: f.connection,
        kind: s.kind,
        ...(f.tool ? { tool: f.tool } : {}),
        tier,
        score: TIER_SCORES[tier],
        evidence,
        failed: s.failed,
      });
      return true;
    };
    /** Offers the latest positions before the change, newest first, until `max` are taken. */
    const scan = (list: number[], offer: (pos: number) => boolean) => {
      let n = 0;
      for (let i = below(list, at) - 1; i >= 0 && n < max; i--) if (offer(list[i])) n++;
    };
    // Once a tier has filled the list, weaker tiers cannot enter it.
    const full = () => taken.size >= max;

    for (const file of files) {
      scan(byFile.get(file), (pos) =>
        take(pos, "same_file", {
          changed: show(file),
          path: show(file),
          key: file,
          via: facts[pos].source!.files.includes(file) ? "read" : "scope",
        }));
    }
    for (const g of globs) {
      if (g.at >= at) break;
      const file = files.find((p) => g.re.test(p));
      if (file) {
        take(g.at, "same_file", {
          changed: show(file),
          path: show(g.glob),
          key: file,
          via: "read",
        });
      }
    }
    // Another file in the same folder, then a file of the same name in another folder.
    const near = [
      {
        tier: "same_folder" as const,
        index: byFolder,
        key: dirname,
        same: (p: string, f: string) => dirname(p) === dirname(f),
      },
      {
        tier: "same_name" as const,
        index: byName,
        key: basename,
        same: (p: string, f: string) => basename(p) === basename(f),
      },
    ];
    for (const { tier, index, key, same } of near) {
      for (const file of full() ? [] : files) {
        scan(index.get(key(file)), (pos) => {
          const read = facts[pos].source!.files.find((p) => p !== file && same(p, file));
          return read !== undefined &&
            take(pos, tier, { changed: show(file), path: show(read), key: read, via: "read" });
        });
      }
    }
    for (const file of full() ? [] : files) {
      scan(byResult.get(file), (pos) =>
        take(pos, "search_match", {
          changed: show(file),
          path: show(file),
          key: file,
          match: facts[pos].source!.named.get(file),
          via: "result",
        }));
      scan(byPatternName.get(basename(file)), (pos) =>
        take(pos, "search_match", {
          changed: show(file),
          match: facts[pos].source!.pattern,
          via: "pattern",
        }));
    }
    const start = below(sources, at);
    for (let k = 1; k <= window && start - k >= 0 && !full(); k++) {
      const pos = sources[start - k];
      const s = facts[pos].source!;
      const seen = s.files[0] ?? s.scopes[0];
      take(pos, "recent", {
        changed: show(files[0] ?? c.files[0] ?? ""),
        ...(seen ? { path: show(seen), key: seen } : {}),
        ...(s.pattern ? { match: s.pattern } : {}),
        via: "window",
        distance: k,
      });
    }
    const ranked = [...taken.values()].sort((a, b) => b.score - a.score || b.seq - a.seq)
      .slice(0, max);
    return {
      op: change.op,
      seq: change.seq,
      connection: change.connection,
      kind: c.kind,
      ...(change.tool ? { tool: change.tool } : {}),
      files: c.files.map(show),
      failed: c.failed,
      sources: ranked,
    };
  }
}
