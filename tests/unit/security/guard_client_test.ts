/** guard/main.ts in process: its own loopback check, not only Deno's permission flag. */
import { assertEquals } from "../../_helpers/assert.ts";
import { isLoopbackHostname, TOKEN_HEADER } from "../../../core/security/local_access.ts";
import { loopbackUrl, runGuard } from "../../../guard/main.ts";

Deno.test("isLoopbackHostname() knows this machine's names and nothing else", async (t) => {
  const cases: [string, boolean][] = [
    ["localhost", true],
    ["LOCALHOST", true],
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["[::1]", true],
    ["::1", true],
    ["127.0.0.256", false],
    ["127.0.0", false],
    ["0.0.0.0", false],
    ["128.0.0.1", false],
    ["10.0.0.1", false],
    ["localhost.evil.example", false],
    ["127.0.0.1.evil.example", false],
    ["evil.example", false],
    ["[::2]", false],
    ["", false],
  ];
  for (const [name, loopback] of cases) {
    await t.step(`${name || "(empty)"} -> ${loopback}`, () => {
      assertEquals(isLoopbackHostname(name), loopback);
    });
  }
});

Deno.test("loopbackUrl() keeps loopback http(s) servers only", async (t) => {
  const cases: [string, string | null][] = [
    ["http://127.0.0.1:4173", "http://127.0.0.1:4173/api/security/pretooluse"],
    ["http://localhost:9", "http://localhost:9/api/security/pretooluse"],
    ["http://[::1]:4173", "http://[::1]:4173/api/security/pretooluse"],
    ["http://192.0.2.1:4173", null],
    ["http://evil.example", null],
    ["http://127.0.0.1.nip.io:4173", null],
    ["file:///etc/passwd", null],
    ["not a url", null],
  ];
  for (const [base, want] of cases) {
    await t.step(base, () => assertEquals(loopbackUrl(base)?.href ?? null, want));
  }
});

Deno.test("runGuard() never sends a tool call or the token to a non-loopback server", async () => {
  const sent: string[] = [];
  const deps = (url: string) => ({
    env: (name: string) =>
      ({ CHRONICLE_URL: url, CHRONICLE_HOME: "/data" } as Record<string, string>)[name],
    readStdin: () =>
      Promise.resolve(JSON.stringify({ tool_name: "Read", tool_input: { file_path: ".env" } })),
    readTextFile: () => Promise.resolve("secret-token"),
    fetch: ((input: URL | RequestInfo, init?: RequestInit) => {
      sent.push(`${input} ${new Headers(init?.headers).get(TOKEN_HEADER)}`);
      return Promise.resolve(Response.json({ decision: "block", reason: "blocked" }));
    }) as typeof fetch,
    stderr: () => {},
  });
  for (const url of ["http://192.0.2.1:4173", "http://evil.example", "http://localhost.evil"]) {
    assertEquals(await runGuard(deps(url)), 0, url);
  }
  assertEquals(sent, []);
  // the same deps with a loopback URL do reach the fake server: the check above is the guard's
  assertEquals(await runGuard(deps("http://127.0.0.1:4173")), 2);
  assertEquals(sent, ["http://127.0.0.1:4173/api/security/pretooluse secret-token"]);
});
