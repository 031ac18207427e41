/** What counts as loopback, written once for the server's Host/Origin checks. */
import { assertEquals } from "../../_helpers/assert.ts";
import { isLoopbackHostname } from "../../../core/security/local_access.ts";

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
