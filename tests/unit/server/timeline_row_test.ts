import { assertEquals } from "../../_helpers/assert.ts";
import {
  cutMark,
  MAX_CUT_BYTES,
  type Operation,
  type PayloadRef,
} from "../../../core/model/mod.ts";
import type { ChronicleStore, TimelineItem } from "../../../core/store/mod.ts";
import { ROW_TEXT_CHARS, timelineRow } from "../../../server/routes/sessions.ts";

/** A store that holds texts by hash, and counts the reads of each whole text. */
function textStore(texts: Record<string, string>) {
  const wholeReads: string[] = [];
  const store = {
    payloadText(ref: PayloadRef | undefined, max?: number): string | null {
      if (!ref || !("sha256" in ref)) return null;
      const text = texts[ref.sha256] ?? null;
      if (max === undefined) wholeReads.push(ref.sha256);
      return text === null || max === undefined ? text : text.slice(0, max);
    },
  } as unknown as ChronicleStore;
  return { store, wholeReads };
}

function item(op: Partial<Operation>): TimelineItem {
  return {
    seq: 0,
    op_id: "op_1",
    connection: "main",
    offset_ns: 0,
    ts_ms: null,
    op: { kind: "exec", completeness: "complete", ...op } as Operation,
  };
}

Deno.test("a timeline row says how many bytes a truncated step's marks count, and only then", () => {
  const long = "out ".repeat(ROW_TEXT_CHARS) + cutMark(5_000_000);
  const input = JSON.stringify({ content: "a" + cutMark(900), other: "b" + cutMark(100) });
  const { store, wholeReads } = textStore({ long, input });
  const request = { sha256: "input", size: input.length };
  const response = { sha256: "long", size: long.length };

  const cut = timelineRow(store, item({ completeness: "truncated", request, response }));
  assertEquals(cut.result?.cut_bytes, 5_000_000, "the mark at the end of a long output");
  assertEquals(cut.result?.truncated, true);
  assertEquals(cut.input?.cut_bytes, 1000, "the marks of two cut strings inside an input");
  assertEquals(wholeReads, ["long"], "a text sent whole is not read again");

  // a complete step's texts are never searched for marks, whatever they quote
  wholeReads.length = 0;
  const whole = timelineRow(store, item({ request, response }));
  assertEquals([whole.input?.cut_bytes, whole.result?.cut_bytes], [undefined, undefined]);
  assertEquals(wholeReads, []);
});

Deno.test("a truncated step's payload bigger than any cut text is not read whole", () => {
  const big = "x".repeat(ROW_TEXT_CHARS + 10);
  const { store, wholeReads } = textStore({ big });
  const response = { sha256: "big", size: MAX_CUT_BYTES + 1 };
  const row = timelineRow(store, item({ completeness: "truncated", response }));
  assertEquals(row.result?.truncated, true);
  assertEquals(row.result?.cut_bytes, undefined);
  assertEquals(wholeReads, []);
});
