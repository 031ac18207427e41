/**
 * @module
 * Causality: why did the agent change this file? Every change of a session (write, edit,
 * delete, or a shell command whose words show the files it changes) is linked to the earlier
 * reads, searches and listings that most likely fed it, by fixed tiers (same file 0.95, same
 * folder 0.55, same base name 0.5, a search naming the file 0.45, one of the last 8 before it
 * 0.2), with the evidence for each. Beyond single links: chains across changes, and a map of
 * every file the session touched. Pure and deterministic: payloads come through a reader.
 */
import type { CanonicalSession } from "../model/mod.ts";
import { type ChainEdge, chainEdges, filesTouched, type FileTouch } from "./chains.ts";
import { type FactsOptions, type OpFacts, type PayloadReader, sessionFacts } from "./facts.ts";
import { type ChangeLinks, linkChanges, type LinkOptions } from "./score.ts";

export * from "./paths.ts";
export * from "./shell.ts";
export * from "./facts.ts";
export * from "./score.ts";
export * from "./chains.ts";

/** A session's causality: its changes with their sources, the chains, the files touched. */
export interface CausalityReport {
  session_id: string;
  project?: string;
  changes: ChangeLinks[];
  edges: ChainEdge[];
  files: FileTouch[];
}

/** Options of {@link analyseSession}. */
export type AnalyseOptions = FactsOptions & Omit<LinkOptions, "project"> & {
  /** The session's facts when already read (see {@link sessionFacts}). */
  facts?: OpFacts[];
};

/** The whole causality report of one session. */
export function analyseSession(
  session: CanonicalSession,
  read: PayloadReader,
  options: AnalyseOptions = {},
): CausalityReport {
  const project = session.session.project.path;
  const facts = options.facts ?? sessionFacts(session, read, options);
  const changes = linkChanges(facts, { ...options, project });
  return {
    session_id: session.session.id,
    ...(project ? { project } : {}),
    changes,
    edges: chainEdges(facts, changes, { project }),
    files: filesTouched(facts, { project }),
  };
}
