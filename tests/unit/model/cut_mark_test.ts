import { assert, assertEquals } from "../../_helpers/assert.ts";
import {
  CUT_MARK,
  cutBytes,
  cutMark,
  MAX_CUT_BYTES,
  storedCutBytes,
} from "../../../core/model/cut_mark.ts";

Deno.test("cut marks: made, found, and what they say went added up", () => {
  assertEquals(cutMark(42), " … [42 more bytes cut on import]");
  assert(CUT_MARK.test("abc" + cutMark(7)));
  assertEquals(cutBytes("no mark here"), 0);
  assertEquals(cutBytes("[12 more bytes cut on import]"), 0, "not without its leading ' … '");
  assertEquals(cutBytes("abc" + cutMark(1_048_576)), 1_048_576);
  // an input whose two strings were cut (a Write's content and another field)
  const input = JSON.stringify({ content: "x" + cutMark(900), other: "y" + cutMark(100) });
  assertEquals(cutBytes(input), 1000);
});

Deno.test("a stored payload is read for its cut marks only when it is no bigger than a cut text", () => {
  const reads: string[] = [];
  const read = (text: string) => () => (reads.push(text), text);
  assertEquals(storedCutBytes(40, read("out" + cutMark(5_000))), 5_000);
  assertEquals(storedCutBytes(MAX_CUT_BYTES, read("plain")), 0);
  assertEquals(reads, ["out" + cutMark(5_000), "plain"]);
  reads.length = 0;
  assertEquals(storedCutBytes(MAX_CUT_BYTES + 1, read("big" + cutMark(1))), 0, "never cut");
  assertEquals(storedCutBytes(null, read("unknown" + cutMark(1))), 0, "size unknown");
  assertEquals(reads, [], "neither was read");
  assertEquals(storedCutBytes(10, () => null), 0, "a payload not in the store");
});
