/** core/text_stream.ts: pieces of text as a byte stream, and what its owner hears. */
import { textStream } from "../../core/text_stream.ts";
import { assertEquals, assertRejects } from "../_helpers/assert.ts";

function hearing() {
  const heard: string[] = [];
  let bytes = 0;
  return {
    heard,
    bytes: () => bytes,
    hooks: {
      bytes: (b: Uint8Array) => void (bytes += b.byteLength),
      pull: () => void heard.push("pull"),
      end: () => void heard.push("end"),
    },
  };
}

Deno.test("a text stream sends every piece and tells its owner of each pull and of its end", async () => {
  const h = hearing();
  const pieces = Array.from({ length: 40 }, (_, i) => `${i}:${"é".repeat(4000)}\n`);
  const text = await new Response(textStream(pieces, h.hooks)).text();
  assertEquals(text, pieces.join(""));
  assertEquals(h.bytes(), new TextEncoder().encode(text).byteLength);
  assertEquals(h.heard.at(-1), "end");
  assertEquals(h.heard.filter((e) => e === "end").length, 1);
  assertEquals(h.heard.filter((e) => e === "pull").length > 1, true);
});

Deno.test("a text stream's end is heard when its reader cancels it, and when its pieces fail", async () => {
  const cancelled = hearing();
  let closed = false;
  function* endless() {
    try {
      for (;;) yield "x".repeat(70_000);
    } finally {
      closed = true;
    }
  }
  const reader = textStream(endless(), cancelled.hooks).getReader();
  await reader.read();
  await reader.cancel();
  assertEquals([cancelled.heard.at(-1), closed], ["end", true]);
  const failing = hearing();
  function* broken() {
    yield "a";
    throw new Error("the session went away");
  }
  await assertRejects(
    () => new Response(textStream(broken(), failing.hooks)).text(),
    Error,
    "the session went away",
  );
  assertEquals(failing.heard, ["pull", "end"]);
});
