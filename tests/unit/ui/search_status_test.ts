/** The search palette's status line (ui/src/search_status.ts): counts, nouns and hints. */
import { assertEquals } from "../../_helpers/assert.ts";
import {
  indexingNote,
  searchStatus,
  STATUS_IDLE,
  stillIndexing,
} from "../../../ui/src/search_status.ts";

const status = (
  total: number | null,
  query: string,
  more: { capped?: boolean; narrowed?: boolean } = {},
) =>
  searchStatus({
    total,
    capped: more.capped ?? false,
    ms: 3,
    query,
    narrowed: more.narrowed ?? false,
  });

Deno.test("before an answer the palette says what it searches and its keys", () => {
  assertEquals(status(null, ""), STATUS_IDLE);
});

Deno.test("a count agrees with its noun, and a capped count says at least", () => {
  assertEquals(status(1, "render"), '1 match, newest first · 3 ms · "quotes" for a phrase');
  assertEquals(status(2, "render"), '2 matches, newest first · 3 ms · "quotes" for a phrase');
  assertEquals(
    status(10000, "the", { capped: true }),
    'at least 10,000 matches, newest first · 3 ms · "quotes" for a phrase',
  );
  assertEquals(
    status(4, "render w"),
    '4 matches, newest first · 3 ms · a one-letter word is matched whole · "quotes" for a phrase',
  );
  // the word being typed, as the server reads it: in an open quote too, not after a closed one
  assertEquals(
    status(4, '"render w'),
    '4 matches, newest first · 3 ms · a one-letter word is matched whole · "quotes" for a phrase',
  );
  assertEquals(status(4, '"render w"'), '4 matches, newest first · 3 ms · "quotes" for a phrase');
});

Deno.test("while the index is built, a count is so far and no match is not yet", () => {
  const during = (total: number, capped = false) =>
    searchStatus({ total, capped, ms: 3, query: "render", narrowed: false, indexing: true });
  assertEquals(during(1384), '1,384 matches so far, newest first · 3 ms · "quotes" for a phrase');
  assertEquals(during(1), '1 match so far, newest first · 3 ms · "quotes" for a phrase');
  assertEquals(
    during(10000, true),
    'at least 10,000 matches, newest first · 3 ms · "quotes" for a phrase',
  );
  // (the palette's indexing note says why)
  assertEquals(during(0), "No matches yet · 3 ms");
});

Deno.test("no match says so, with the hint that fits what was typed", async (t) => {
  await t.step("one word: quotes for a phrase", () => {
    assertEquals(status(0, "aws_access_key_id"), 'No matches · 3 ms · "quotes" for a phrase');
    assertEquals(status(0, '"error handling"'), 'No matches · 3 ms · "quotes" for a phrase');
  });
  await t.step("several words, or a word and a phrase: all in one step", () => {
    for (const q of ["error handling", 'render "error handling"', "a.b cd-ef"]) {
      assertEquals(status(0, q), "No matches · 3 ms · every word must be in the same step", q);
    }
    // punctuation alone is no word: one chunk
    assertEquals(status(0, "render -- ::"), 'No matches · 3 ms · "quotes" for a phrase');
  });
  await t.step("nothing but punctuation: no word to look for", () => {
    for (const q of ["::", "-- ::", '""', "*"]) {
      assertEquals(status(0, q), "No words to search for: a word is letters or digits · 3 ms", q);
    }
  });
  await t.step("narrowed to an agent, a project or days: All sessions widens it", () => {
    assertEquals(
      status(0, "render", { narrowed: true }),
      "No matches in these sessions · 3 ms · All sessions searches everywhere",
    );
  });
  await t.step("a count of at least 0 is not no match", () => {
    assertEquals(
      status(0, "render", { capped: true, narrowed: true }),
      'at least 0 matches, newest first · 3 ms · "quotes" for a phrase',
    );
  });
});

Deno.test("the indexing note says what is not searchable yet, and nothing once every step is", () => {
  const importing = { phase: "importing", percent: 60, unindexed: 0 } as const;
  assertEquals(
    indexingNote(importing),
    "The index is still being built (60% imported): some sessions are not searchable yet.",
  );
  assertEquals(stillIndexing(importing), true);
  const indexing = { phase: "indexing", percent: 27, unindexed: 38618 } as const;
  assertEquals(
    indexingNote(indexing),
    "Sessions are all stored; search is still indexing (27%): 38,618 steps are not searchable yet.",
  );
  assertEquals(stillIndexing(indexing), true);
  assertEquals(
    indexingNote({ ...indexing, unindexed: 1 }),
    "Sessions are all stored; search is still indexing (27%): 1 step is not searchable yet.",
  );
  // the backlog empty while the pass compresses its payloads: it said "(99%): 0 steps are not
  // searchable yet", and counted "so far"
  const finishing = { phase: "indexing", percent: 99, unindexed: 0 } as const;
  assertEquals(indexingNote(finishing), "Every step is searchable; the import is finishing (99%).");
  assertEquals(stillIndexing(finishing), false);
  assertEquals(stillIndexing(null), false);
});
