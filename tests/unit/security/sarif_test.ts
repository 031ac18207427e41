import { assert, assertEquals } from "../../_helpers/assert.ts";
import { scanText, toSarif } from "../../../core/security/mod.ts";

Deno.test("toSarif() writes SARIF 2.1.0 with a rule per finding kind and no secrets", () => {
  const secret = "Zq81xLmw02-Pt";
  const text = `first\npassword: "${secret}"\nmail ops@acme.io`;
  const r = scanText(text, {
    rules: [{ id: "c1", name: "ticket", pattern: "TICK-*", action: "redact", enabled: true }],
  });
  const custom = scanText("see TICK-77", {
    rules: [{ id: "c1", name: "ticket", pattern: "TICK-*", action: "redact", enabled: true }],
  });
  const log = toSarif([{ uri: "src/a.env", findings: r.findings }, {
    uri: "-",
    findings: custom.findings,
  }], { toolVersion: "9.9.9" });
  assertEquals(log.version, "2.1.0");
  const run = log.runs[0];
  assertEquals(run.tool.driver.name, "chronicle");
  assertEquals(run.tool.driver.version, "9.9.9");
  const ruleIds = run.tool.driver.rules.map((x) => x.id);
  assertEquals(ruleIds.slice(0, 7), [
    "api_key",
    "db_conn",
    "password",
    "token",
    "email",
    "phone",
    "private_ip",
  ]);
  assertEquals(ruleIds[7], "ticket");
  assertEquals(
    run.results.map((x) => [
      x.ruleId,
      ruleIds[x.ruleIndex],
      x.level,
      x.locations[0].physicalLocation.artifactLocation.uri,
      x.locations[0].physicalLocation.region,
    ]),
    [
      ["password", "password", "error", "src/a.env", {
        startLine: 2,
        startColumn: 12,
        endLine: 2,
        endColumn: 25,
      }],
      ["email", "email", "warning", "src/a.env", {
        startLine: 3,
        startColumn: 6,
        endLine: 3,
        endColumn: 17,
      }],
      ["ticket", "ticket", "error", "-", {
        startLine: 1,
        startColumn: 5,
        endLine: 1,
        endColumn: 12,
      }],
    ],
  );
  assert(!JSON.stringify(log).includes(secret));
});
