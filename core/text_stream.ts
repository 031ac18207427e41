/**
 * Text written as it is made: pieces of text as a stream of UTF-8 bytes (a download, a share
 * page, an exported file), never one string of the whole.
 */
import { collectEvery } from "./gc.ts";

/**
 * Pieces of text as a stream of UTF-8 bytes, encoded about 64 Ki characters at a time as the
 * reader asks (a download, or a file, written as it is rendered). Its owner may hear each
 * write's bytes, the reader asking for more, and the end. Every 16 MiB sent, the garbage of
 * rendering them is collected: the Markdown download of a 35,342-step session (54 MB) peaked the
 * server at 260 MiB in some runs and 289-291 in others, the rise all in its rendering, after the
 * document was built.
 */
export function textStream(
  pieces: Iterable<string>,
  { bytes: onBytes, pull: onPull, end: onEnd }: TextStreamHooks = {},
): ReadableStream<Uint8Array> {
  const it = pieces[Symbol.iterator]();
  const encoder = new TextEncoder();
  const sent = collectEvery(16 << 20);
  return new ReadableStream({
    pull(controller) {
      onPull?.();
      const send = (t: string) => {
        const bytes = encoder.encode(t);
        onBytes?.(bytes);
        controller.enqueue(bytes);
        sent(bytes.byteLength);
      };
      let text = "";
      try {
        for (let next = it.next(); !next.done; next = it.next()) {
          text += next.value;
          if (text.length >= 1 << 16) return send(text);
        }
      } catch (e) {
        onEnd?.();
        throw e;
      }
      if (text) send(text);
      controller.close();
      onEnd?.();
    },
    cancel() {
      it.return?.();
      onEnd?.();
    },
  });
}

/** What a {@link textStream}'s owner hears. */
export interface TextStreamHooks {
  /** Each write's bytes (a count, a hash). */
  bytes?: (bytes: Uint8Array) => void;
  /** The reader asks for more. */
  pull?: () => void;
  /** The stream is done: all sent, failed, or cancelled by its reader. */
  end?: () => void;
}
