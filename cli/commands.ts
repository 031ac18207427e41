/** The command table: one line per command. */
import { makeCompletionCommand } from "./completion.ts";
import { diffCommand } from "./diff.ts";
import { doctorCommand } from "./doctor.ts";
import { excludeCommand } from "./exclude.ts";
import { exportCommand, verifyCommand } from "./export.ts";
import { filesCommand } from "./files.ts";
import { forgetCommand } from "./forget.ts";
import { guardCommand } from "./guard.ts";
import { importCommand } from "./import.ts";
import { installCommand, uninstallCommand } from "./install.ts";
import { issuesCommand } from "./issues.ts";
import { renameCommand, starSessionsCommand, unstarSessionsCommand } from "./marks.ts";
import { openCommand } from "./open.ts";
import type { Command } from "./io.ts";
import { replayCommand } from "./replay.ts";
import { scanCommand } from "./scan.ts";
import { searchCommand } from "./search.ts";
import { serveCommand } from "./serve.ts";
import { sessionsCommand, showCommand } from "./sessions.ts";
import { shareCommand } from "./share.ts";

export interface CommandEntry {
  run: Command;
  summary: string;
}

export const COMMANDS: Record<string, CommandEntry> = {
  serve: {
    run: serveCommand,
    summary: "import, then serve the browser UI on 127.0.0.1 and keep importing",
  },
  open: {
    run: openCommand,
    summary: "print and open the running server's address, with your install token",
  },
  import: { run: importCommand, summary: "import new and changed agent logs into the local store" },
  issues: {
    run: issuesCommand,
    summary: "what imports recorded as going wrong: unreadable files, issues, loss windows",
  },
  sessions: { run: sessionsCommand, summary: "list imported sessions" },
  show: { run: showCommand, summary: "print one session's timeline" },
  rename: { run: renameCommand, summary: "give a session a name of your own (or --clear it)" },
  star: { run: starSessionsCommand, summary: "star sessions (sessions --starred lists them)" },
  unstar: { run: unstarSessionsCommand, summary: "remove the star of sessions" },
  search: {
    run: searchCommand,
    summary: "search every session's prompts, replies, inputs and outputs",
  },
  files: {
    run: filesCommand,
    summary: "the project's files as they were after a step of a session",
  },
  diff: {
    run: diffCommand,
    summary: "what a session (or one of its steps) changed, as unified diffs",
  },
  export: {
    run: exportCommand,
    summary: "write sessions as redacted Markdown or HTML, or as canonical session files",
  },
  share: { run: shareCommand, summary: "make, list and revoke redacted share links" },
  verify: { run: verifyCommand, summary: "check exported canonical session files" },
  forget: {
    run: forgetCommand,
    summary: "delete sessions or a project's from the store for good; never imported again",
  },
  exclude: {
    run: excludeCommand,
    summary: "the exclude list: log files and projects that imports leave out",
  },
  replay: {
    run: replayCommand,
    summary: "play a session's edits and commands again in a sandbox and compare",
  },
  scan: { run: scanCommand, summary: "find and redact secrets in files, stdin or sessions" },
  doctor: {
    run: doctorCommand,
    summary:
      "what Chronicle found (agents, data folder, store, guard, tools, server) and what to fix",
  },
  guard: {
    run: guardCommand,
    summary: "the PreToolUse guard: decide offline, install or remove the hook",
  },
  completion: {
    run: makeCompletionCommand(() => COMMANDS),
    summary: "print a completion script for bash, zsh or fish",
  },
  install: {
    run: installCommand,
    summary: "put a chronicle launcher for this checkout on your PATH (~/.local/bin)",
  },
  uninstall: { run: uninstallCommand, summary: "remove the launcher install wrote" },
};
