/**
 * Stand-in for Chronicle's guard hook (guard/main.ts) while that one is not in the tree:
 * the same protocol, so the conformance suite can exercise a real Claude Code PreToolUse
 * hook today. Reads the hook payload on stdin, POSTs {tool_name, tool_input, cwd,
 * session_id} to `$CHRONICLE_URL/api/security/pretooluse` (with the install token from
 * `$CHRONICLE_HOME/token` when there is one), and on a block prints the reason
 * on stderr and exits 2. Fails open: any error or a 3 s timeout exits 0 with no output.
 *
 * @module
 */

async function main(): Promise<number> {
  try {
    const payload = JSON.parse(await new Response(Deno.stdin.readable).text());
    const base = Deno.env.get("CHRONICLE_URL") ?? "http://127.0.0.1:4173";
    const home = Deno.env.get("CHRONICLE_HOME");
    const token = home ? (await Deno.readTextFile(`${home}/token`).catch(() => "")).trim() : "";
    const res = await fetch(new URL("/api/security/pretooluse", base), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token ? { "x-chronicle-token": token } : {}),
      },
      body: JSON.stringify({
        tool_name: payload.tool_name,
        tool_input: payload.tool_input,
        cwd: payload.cwd,
        session_id: payload.session_id,
      }),
      signal: AbortSignal.timeout(3000),
    });
    if (!res.ok) return 0;
    const d = await res.json();
    const blocked = d?.decision === "block" || d?.decision === "deny" || d?.action === "block" ||
      d?.block === true;
    if (!blocked) return 0;
    console.error(String(d.reason ?? "Blocked by Chronicle guard"));
    return 2;
  } catch {
    return 0;
  }
}

Deno.exit(await main());
