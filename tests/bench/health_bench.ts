/**
 * `/api/health` while the server runs a big security check: one session whose tool result is
 * 300 KB of base64, a custom rule built to make a backtracking matcher explode (`*a*a*a*b`),
 * and a client polling `/api/health` every 10 ms while `POST /api/security/check` runs, over
 * real sockets. Once with the check in the worker (as `chronicle serve` runs it) and once in
 * process on the main thread, for comparison, and once with no check at all for as long (what
 * the machine's load alone does to /api/health). Target (issue 12): within 50 ms during the check.
 *
 *   deno run -A tests/bench/health_bench.ts
 */
import { startServer } from "../../cli/serve.ts";
import { ChronicleStore, importAll } from "../../core/store/mod.ts";
import { createDenoFs } from "../../runtime/deno_fs.ts";
import { createCheckWorker } from "../../server/check_runner.ts";
import { createSecurityService } from "../../server/security_service.ts";
import { writeClaudeSession } from "../e2e/_synthetic.ts";

const TOKEN = "b".repeat(64);
const home = await Deno.makeTempDir({ prefix: "chronicle-bench-health-" });
const bytes = new Uint8Array(225_000);
for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
let blob = "";
for (let i = 0; i < bytes.length; i += 8192) {
  blob += String.fromCharCode(...bytes.subarray(i, i + 8192));
}
blob = btoa(blob).replaceAll("b", "a"); // one 300 KB run rich in a's and without a b
await writeClaudeSession(home, {
  sessionId: "77777777-6666-4555-8444-333333333333",
  cwd: "/tmp/health",
  turns: [{ user: "dump it" }, {
    tool: { name: "Bash", input: { command: "cat blob.b64" }, result: blob },
  }],
});
const store = ChronicleStore.open(":memory:");
await importAll(store, {
  env: { home, env: { HOME: home }, platform: "linux" },
  fs: createDenoFs(),
});

let lastCheckMs = 3000;

async function measure(mode: "worker" | "main thread" | "no check") {
  const runner = mode === "worker" ? createCheckWorker() : undefined;
  // the worker starts with the check, as in chronicle serve
  const security = createSecurityService({ store, runCheck: runner?.run });
  security.addRule({ name: "adversarial", pattern: "*a*a*a*b", action: "redact" });
  const server = await startServer({ store, token: TOKEN, port: 0, security });
  const headers = { "x-chronicle-token": TOKEN };
  const health: number[] = [];
  let done = false;
  const started = performance.now();
  // "no check": the same polling for as long as the worker's check took, nothing else running
  // (what this machine's load alone does to /api/health)
  const check = mode === "no check"
    ? new Promise<number>((resolve) =>
      setTimeout(() => {
        done = true;
        resolve(performance.now() - started);
      }, lastCheckMs)
    )
    : fetch(`${server.url}api/security/check`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: "{}",
    }).then(async (r) => {
      await r.text();
      done = true;
      return performance.now() - started;
    });
  while (!done) {
    const t = performance.now();
    const r = await fetch(`${server.url}api/health`, { headers });
    await r.text();
    health.push(performance.now() - t);
    await new Promise((res) => setTimeout(res, 10));
  }
  const checkMs = await check;
  if (mode === "worker") lastCheckMs = checkMs;
  for (const rule of security.listRules()) security.deleteRule(rule.id);
  await server.shutdown();
  runner?.close();
  health.sort((a, b) => a - b);
  const p = (q: number) => health[Math.min(health.length - 1, Math.ceil(q * health.length) - 1)];
  console.log(
    `  ${mode.padEnd(12)} check ${checkMs.toFixed(0)} ms; /api/health x${health.length}: p50 ${
      p(0.5).toFixed(1)
    } ms, p95 ${p(0.95).toFixed(1)} ms, max ${health[health.length - 1].toFixed(1)} ms`,
  );
}

console.log("/api/health during a security check of a 300 KB result with rule *a*a*a*b");
await measure("worker");
await measure("no check");
await measure("main thread");
try {
  const load = Deno.loadavg().map((n) => n.toFixed(2)).join(" ");
  console.log(`  load average at the end: ${load} (on ${navigator.hardwareConcurrency} cores)`);
} catch {
  console.log("  (no load average: run with --allow-sys=loadavg)");
}
store.close();
await Deno.remove(home, { recursive: true });
