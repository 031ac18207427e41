/**
 * Synthetic Claude Code logs for browser tests: a hostile transcript (HTML and script in
 * prompts, replies and tool output) and a very long session. Written in the agent's own JSONL
 * format into a scratch HOME, so they reach the store through the real importer.
 */

export interface SyntheticTurn {
  user?: string;
  assistant?: string;
  tool?: { name: string; input: Record<string, unknown>; result: string; is_error?: boolean };
}

/** Where Claude Code keeps the log of session `sessionId` run in `cwd`, under `home`. */
export function claudeSessionPath(home: string, cwd: string, sessionId: string): string {
  return `${home}/.claude/projects/${cwd.replace(/[^A-Za-z0-9]/g, "-")}/${sessionId}.jsonl`;
}

/**
 * The JSONL lines of one Claude Code session, made a turn at a time (the parent chain, clock
 * and message numbers carry over), for writers that append while a reader watches.
 */
export class ClaudeLines {
  private parent: string | null = null;
  private t: number;
  private n = 0;
  private readonly base: Record<string, unknown>;

  constructor(options: { sessionId: string; cwd: string; start?: number }) {
    this.t = options.start ?? Date.parse("2026-01-05T10:00:00Z");
    this.base = {
      isSidechain: false,
      userType: "external",
      entrypoint: "cli",
      cwd: options.cwd,
      sessionId: options.sessionId,
      version: "2.1.197",
      gitBranch: "main",
    };
  }

  /** The lines of one turn, each ending in a newline. */
  turn(turn: SyntheticTurn): string {
    let out = "";
    const line = (rec: Record<string, unknown>) => {
      const uuid = crypto.randomUUID();
      out += JSON.stringify({
        parentUuid: this.parent,
        ...rec,
        uuid,
        timestamp: new Date(this.t).toISOString(),
        ...this.base,
      }) + "\n";
      this.parent = uuid;
      this.t += 1000;
    };
    const assistant = (content: unknown[]) =>
      line({
        type: "assistant",
        requestId: `req_${this.n}`,
        message: {
          id: `msg_${this.n++}`,
          type: "message",
          role: "assistant",
          model: "claude-opus-4-8",
          content,
          usage: USAGE,
        },
      });
    if (turn.user !== undefined) {
      line({ type: "user", message: { role: "user", content: turn.user } });
    }
    if (turn.assistant !== undefined) assistant([{ type: "text", text: turn.assistant }]);
    if (turn.tool) {
      const id = `toolu_${this.n}`;
      assistant([{ type: "tool_use", id, name: turn.tool.name, input: turn.tool.input }]);
      line({
        type: "user",
        message: {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: id,
            content: turn.tool.result,
            is_error: turn.tool.is_error ?? false,
          }],
        },
      });
    }
    return out;
  }
}

const USAGE = {
  input_tokens: 100,
  output_tokens: 20,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
};

/** Writes one Claude Code session file under `<home>/.claude/projects/...`; returns its path. */
export async function writeClaudeSession(
  home: string,
  options: { sessionId: string; cwd: string; turns: Iterable<SyntheticTurn>; start?: number },
): Promise<string> {
  const path = claudeSessionPath(home, options.cwd, options.sessionId);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  const lines = new ClaudeLines(options);
  let buf = "";
  const flush = async (force = false) => {
    if (buf.length > 1 << 20 || (force && buf)) {
      await file.write(enc.encode(buf));
      buf = "";
    }
  };
  for (const turn of options.turns) {
    buf += lines.turn(turn);
    await flush();
  }
  await flush(true);
  file.close();
  return path;
}

/** Appends one user prompt to a Claude Code session file, as the agent writes the next line. */
export async function appendClaudePrompt(
  path: string,
  sessionId: string,
  content: string,
): Promise<void> {
  const record = {
    type: "user",
    uuid: crypto.randomUUID(),
    parentUuid: null,
    sessionId,
    timestamp: new Date().toISOString(),
    message: { role: "user", content },
  };
  await Deno.writeTextFile(path, JSON.stringify(record) + "\n", { append: true });
}

export const XSS_SESSION = "11111111-2222-4333-8444-555555555555";
export const LONG_SESSION = "99999999-8888-4777-8666-555555555555";

/** The hostile transcript: every place text is shown holds markup that must stay text. */
export function hostileTurns(): SyntheticTurn[] {
  return [
    {
      user:
        `Look at this <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script>`,
      assistant: [
        `Here is markup: <img src=x onerror="window.__pwned=3"> and <b>bold?</b>`,
        "",
        `<script>window.__pwned=4</script>`,
        "",
        `[click me](javascript:window.__pwned=5) and <a href="javascript:window.__pwned=6">raw link</a>`,
        "",
        "```html",
        `<script>window.__pwned=7</script>`,
        "```",
      ].join("\n"),
    },
    {
      tool: {
        name: "Bash",
        input: { command: `echo '<img src=x onerror="window.__pwned=8">'` },
        result: `<img src=x onerror="window.__pwned=9"><script>window.__pwned=10</script>`,
      },
    },
    {
      tool: {
        name: "Write",
        input: {
          file_path: "/tmp/xss/page.html",
          content: `<script>window.__pwned=11</script>\n<img src=x onerror="window.__pwned=12">\n`,
        },
        result: "File created successfully",
      },
    },
  ];
}

/** A long session: `messages` prompts, replies and tool calls, about one in five a tool call. */
export function* longTurns(messages: number): Generator<SyntheticTurn> {
  let made = 0;
  for (let i = 0; made < messages; i++) {
    if (i % 5 === 4) {
      yield {
        tool: {
          name: "Bash",
          input: { command: `echo step ${i}` },
          result: `step ${i}\n`,
          is_error: i % 50 === 49,
        },
      };
      made += 1; // one operation: the call with its result
    } else {
      yield {
        user: `Question number ${i}: what about item ${i}?`,
        assistant: `Answer ${i}: **fine**.`,
      };
      made += 2;
    }
  }
}
