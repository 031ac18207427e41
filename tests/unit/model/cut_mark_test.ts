import { assert, assertEquals } from "../../_helpers/assert.ts";
import { CUT_MARK, cutBytes, cutMark } from "../../../core/model/cut_mark.ts";

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
