/** SSE frames: an event name can never add a line (a forged `data:`, `id:` or `event:`). */
import { assertEquals } from "../../_helpers/assert.ts";
import { createEventHub, sseFrame } from "../../../server/sse.ts";

/** The field lines of one frame (without the blank line that ends it). */
function fields(frame: string): string[] {
  assertEquals(frame.endsWith("\n\n"), true, "a frame ends with a blank line");
  return frame.slice(0, -2).split(/\r\n|\r|\n/);
}

Deno.test("sseFrame() keeps an event name on its one line, whatever it holds", async (t) => {
  const names = [
    "import",
    "x\ndata: forged",
    "x\rdata: forged",
    "x\r\nid: 99",
    "\n\nevent: interception",
    "a\u2028b",
  ];
  for (const name of names) {
    await t.step(JSON.stringify(name), () => {
      const lines = fields(sseFrame(name, { ok: true }));
      assertEquals(lines.length, 2, lines.join(" | "));
      assertEquals(lines[0].startsWith("event: "), true);
      assertEquals(lines[1], 'data: {"ok":true}');
    });
  }
});

Deno.test("sseFrame() writes data as one line of JSON, line breaks escaped", () => {
  const lines = fields(sseFrame("import", { text: "one\ntwo\rthree" }));
  assertEquals(lines, ["event: import", String.raw`data: {"text":"one\ntwo\rthree"}`]);
});

Deno.test("a published event with a hostile name reaches the stream as one event", async () => {
  const hub = createEventHub({ heartbeatMs: 60_000 });
  const res = hub.response();
  const reader = res.body!.getReader();
  await reader.read(); // ": connected"
  hub.publish("sessions\nevent: admin", { n: 1 });
  const { value } = await reader.read();
  const frame = new TextDecoder().decode(value);
  assertEquals(fields(frame), ["event: sessionsevent: admin", 'data: {"n":1}']);
  hub.close();
  await reader.cancel();
});
