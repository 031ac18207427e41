/**
 * What the agent and project filters offer, where sessions are filtered (the session list, the
 * search palette, analytics): every agent by name, the store's projects by folder name.
 */
import { type Signal, useSignal } from "@preact/signals";
import type { VNode } from "preact";
import { useEffect } from "preact/hooks";
import { api } from "../api.ts";
import { AGENTS, basename } from "../format.ts";
import type { Project } from "../types.ts";

/** The store's projects, read again when `refresh` changes (an empty list until they come). */
export function useProjects(refresh: unknown = 0): Signal<Project[]> {
  const projects = useSignal<Project[]>([]);
  useEffect(() => {
    api<{ items: Project[] }>("/api/projects").then((p) => (projects.value = p.items)).catch(
      () => {},
    );
  }, [refresh]);
  return projects;
}

/** An agent select's options: all of them, then each agent by name. */
export function AgentOptions(): VNode {
  return (
    <>
      <option value="">All agents</option>
      {Object.entries(AGENTS).map(([id, name]) => <option key={id} value={id}>{name}</option>)}
    </>
  );
}

/**
 * A project select's options: all of them, then each project by folder name and its sessions.
 * `chosen`, a project the store does not list (typed into a URL), is offered too, so the
 * select shows it as chosen.
 */
export function ProjectOptions(
  { projects, chosen = "" }: { projects: Project[]; chosen?: string },
): VNode {
  const listed = !chosen || projects.some((p) => p.path === chosen);
  return (
    <>
      <option value="">All projects</option>
      {!listed && <option value={chosen}>{basename(chosen)}</option>}
      {projects.map((p) => (
        <option key={p.path} value={p.path} title={p.path}>
          {basename(p.path)} ({p.sessions})
        </option>
      ))}
    </>
  );
}
