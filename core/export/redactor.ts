/**
 * The redaction step of every export and share: core/security's `scanText` (built-in rules
 * plus the user's custom rules) applied to each piece of text an export shows, keeping count
 * of what it found and a masked sample of each finding for the preview. There is no second
 * redactor: this only decides which part of a text is scanned.
 */
import { type CustomRule, type Finding, maskedSample, scanText } from "../security/mod.ts";

/** A finding as the preview shows it: where, which rule, and the redacted line around it. */
export interface RedactionSample {
  where: string;
  rule: string;
  /** The redacted text around the finding; never the secret. */
  sample: string;
}

export interface RedactionSummary {
  /** False for an export made with `--no-redact`: nothing was scanned or replaced. */
  enabled: boolean;
  total: number;
  by_rule: Record<string, number>;
  /** The first findings, in document order (at most `maxSamples`). */
  samples: RedactionSample[];
  /** True when there were more findings than samples. */
  samples_capped: boolean;
}

export interface Redactor {
  readonly enabled: boolean;
  /** The redacted copy of a whole text. */
  text(text: string, where: string): string;
  /**
   * The redacted copy of `text[from, to)`. The scan covers {@link SCAN_MARGIN} characters on
   * either side, so a secret that crosses the cut is still recognised and replaced whole; the
   * copy may then reach a little past `to` (to the end of that replacement).
   */
  slice(text: string, from: number, to: number, where: string): string;
  summary(): RedactionSummary;
}

export interface RedactorOptions {
  /** Default true. False returns every text as it is and counts nothing. */
  enabled?: boolean;
  /** Custom rules in claim order (the store's enabled rules). Default none. */
  rules?: readonly CustomRule[];
  /** Default 200. */
  maxSamples?: number;
}

/** Characters scanned beyond each side of a slice: longer than any secret the rules match. */
export const SCAN_MARGIN = 16_384;

export function createRedactor(options: RedactorOptions = {}): Redactor {
  const enabled = options.enabled ?? true;
  const maxSamples = options.maxSamples ?? 200;
  const byRule: Record<string, number> = {};
  const samples: RedactionSample[] = [];
  let total = 0;

  const note = (redacted: string, f: Finding, where: string) => {
    total++;
    byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
    if (samples.length < maxSamples) {
      samples.push({ where, rule: f.rule, sample: maskedSample(redacted, f, 120) });
    }
  };

  return {
    enabled,
    text(text, where) {
      if (!enabled || !text) return text;
      const r = scanText(text, { rules: options.rules });
      for (const f of r.findings) note(r.redacted, f, where);
      return r.redacted;
    },
    slice(text, from, to, where) {
      from = Math.max(0, from);
      to = Math.min(text.length, to);
      if (!enabled) return text.slice(from, to);
      if (from === 0 && to === text.length) return this.text(text, where);
      const ws = Math.max(0, from - SCAN_MARGIN);
      const window = text.slice(ws, Math.min(text.length, to + SCAN_MARGIN));
      const r = scanText(window, { rules: options.rules });
      let out = "";
      let pos = from;
      for (const f of r.findings) {
        const s = f.start + ws;
        const e = f.end + ws;
        if (e <= from || s >= to) continue;
        note(r.redacted, f, where);
        if (s > pos) out += text.slice(pos, s);
        out += f.replacement;
        pos = e;
      }
      if (pos < to) out += text.slice(pos, to);
      return out;
    },
    summary: () => ({
      enabled,
      total,
      by_rule: { ...byRule },
      samples: samples.slice(),
      samples_capped: total > samples.length,
    }),
  };
}
