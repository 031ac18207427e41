/**
 * SARIF 2.1.0 output for `chronicle scan --format sarif`, so editors and CI can show findings.
 * Messages carry the masked replacement, never the secret.
 */
import { BUILTIN_RULES } from "./rules/mod.ts";
import type { Finding } from "./scan.ts";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

/** The findings of one scanned artifact: a file path, `-` for stdin, or a session field URI. */
export interface SarifArtifact {
  uri: string;
  findings: readonly Finding[];
}

export interface SarifOptions {
  toolVersion?: string;
}

export interface SarifRule {
  id: string;
  name: string;
  shortDescription: { text: string };
  defaultConfiguration: { level: "error" | "warning" };
}

export interface SarifRegion {
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

export interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: "error" | "warning";
  message: { text: string };
  locations: { physicalLocation: { artifactLocation: { uri: string }; region: SarifRegion } }[];
}

/** The part of the SARIF 2.1.0 log format Chronicle writes. */
export interface SarifLog {
  $schema: string;
  version: "2.1.0";
  runs: {
    tool: { driver: { name: string; version?: string; rules: SarifRule[] } };
    columnKind: "utf16CodeUnits";
    results: SarifResult[];
  }[];
}

function levelOf(f: Pick<Finding, "severity">): "error" | "warning" {
  return f.severity === "high" ? "error" : "warning";
}

/** Builds one SARIF log with one run; rules are the built-ins plus every custom rule seen. */
export function toSarif(
  artifacts: readonly SarifArtifact[],
  options: SarifOptions = {},
): SarifLog {
  const rules: SarifRule[] = BUILTIN_RULES.map((r) => ({
    id: r.name,
    name: r.name,
    shortDescription: { text: r.description },
    defaultConfiguration: { level: r.severity === "high" ? "error" : "warning" },
  }));
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const results: SarifResult[] = [];
  for (const artifact of artifacts) {
    for (const f of artifact.findings) {
      let ruleIndex = index.get(f.rule);
      if (ruleIndex === undefined) {
        ruleIndex = rules.length;
        rules.push({
          id: f.rule,
          name: f.rule,
          shortDescription: { text: `Custom redact rule "${f.rule}"` },
          defaultConfiguration: { level: "error" },
        });
        index.set(f.rule, ruleIndex);
      }
      const kind = f.detail && f.detail !== f.rule ? ` (${f.detail})` : "";
      results.push({
        ruleId: f.rule,
        ruleIndex,
        level: levelOf(f),
        message: { text: `${f.rule}${kind} found; redacted as ${f.replacement}` },
        locations: [{
          physicalLocation: {
            artifactLocation: { uri: artifact.uri },
            region: {
              startLine: f.line,
              startColumn: f.column,
              endLine: f.end_line,
              endColumn: f.end_column,
            },
          },
        }],
      });
    }
  }
  const driver: SarifLog["runs"][0]["tool"]["driver"] = { name: "chronicle", rules };
  if (options.toolVersion) driver.version = options.toolVersion;
  return {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [{ tool: { driver }, columnKind: "utf16CodeUnits", results }],
  };
}
