/**
 * Search finds everything a user can see: words, prefixes from the second letter, identifiers
 * and paths as typed, quoted phrases, in prompts, replies, tool inputs and whole outputs; the
 * count is right and paging reaches every hit; agent, project and date filters apply.
 */
import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { dbOf } from "../../_helpers/store_db.ts";
import {
  ChronicleStore,
  COUNT_CAP,
  FILTERED_COUNT_SCAN,
  type FilterStrategy,
  FRAME_CHECK_COST,
  ftsQuery,
  INDEX_WORD,
  indexBody,
  joinedPairs,
  matchPattern,
  MAX_PREFIX_PARTS,
  NAMED_WORD_OPS,
  PAIR_MARK,
  pairTerm,
  PHRASE_CHECKS,
  phraseCheck,
  prefixCover,
} from "../../../core/store/mod.ts";
import { Distinct } from "../../../core/store/search_text.ts";
import { claudeSessionPath, writeClaudeSession } from "../../e2e/_synthetic.ts";
import { scratch } from "./_sessions.ts";

Deno.test("ftsQuery() asks for an identifier's joined pairs, a phrase's words, a prefix of the word being typed", async (t) => {
  const J = PAIR_MARK;
  const cases: { name: string; input: string; expected: string | null }[] = [
    { name: "words, the last a prefix", input: "make den", expected: `"make" AND "den"*` },
    { name: "a one-letter last word is whole", input: "make d", expected: `"make" AND "d"` },
    { name: "a finished word is whole", input: "make ", expected: `"make"` },
    {
      name: "snake_case",
      input: "aws_access_key_id ",
      expected: `"${J}aws${J}access" AND "${J}access${J}key" AND "${J}key${J}id"`,
    },
    {
      name: "a path, the last pair a prefix",
      input: "core/store/store.ts",
      expected: `"${J}core${J}store" AND "${J}store${J}store" AND "${J}store${J}ts"*`,
    },
    { name: "a flag", input: "--max-count ", expected: `"${J}max${J}count"` },
    {
      name: "a Rust path",
      input: "std::vec::Vec ",
      expected: `"${J}std${J}vec" AND "${J}vec${J}vec"`,
    },
    {
      name: "a quoted phrase",
      input: '"exit code" make',
      expected: `"exit" AND "code" AND "make"*`,
    },
    { name: "an open quote is typed", input: '"exit co', expected: `"exit" AND "co"*` },
    { name: "a three-letter prefix", input: "mak", expected: `"mak"*` },
    { name: "a prefix beyond ASCII", input: "пр", expected: `"пр"*` },
    {
      name: "operators are words",
      input: "a OR b* NEAR(",
      expected: `"a" AND "or" AND "b" AND "near"`,
    },
    { name: "nothing searchable", input: ' " :: -- ', expected: null },
  ];
  for (const c of cases) await t.step(c.name, () => assertEquals(ftsQuery(c.input), c.expected));
  await t.step("a two-letter prefix, with the index's continuations", () => {
    const next = (p: string) => p === "da" ? ["ß", "a"] : [];
    const q = ftsQuery("make da", { next })!;
    const alts = [..."abcdefghijklmnopqrstuvwxyz0123456789ß"].map((c) => `"da${c}"*`);
    assertEquals(q, `"make" AND ("da" OR ${alts.join(" OR ")})`);
    // inside a phrase or an identifier, the same for its last word
    assert(ftsQuery('"exit co', { next })!.startsWith(`"exit" AND ("co" OR "coa"* OR`));
    // three letters and more have an index of their own
    assertEquals(ftsQuery("mak", { next }), `"mak"*`);
  });
  await t.step("a longer prefix, as the words the index has that it begins", () => {
    const asked: string[] = [];
    const index = ["pars", "parse", "parser", "parsé", "part", `${J}src${J}import`];
    const words = (p: string) => {
      asked.push(p);
      const found = index.filter((w) => w.startsWith(p)).map((term) => ({ term, doc: 1 }));
      return found.length > 2 ? null : found;
    };
    assertEquals(ftsQuery("make parse", { words }), `"make" AND ("parse" OR "parser")`);
    assertEquals(ftsQuery("parser", { words }), `"parser"`);
    // none, or more than the store reads: FTS5's own prefix query
    assertEquals(ftsQuery("parsing", { words }), `"parsing"*`);
    assertEquals(ftsQuery("pars", { words }), `"pars"*`);
    // an identifier's last pair, when its words are ASCII
    assertEquals(ftsQuery("src/imp", { words }), `"${J}src${J}import"`);
    assertEquals(ftsQuery("src/impé", { words }), `"${J}src${J}impé"*`);
    // three letters have an index of their own; beyond ASCII only the tokenizer folds
    assertEquals(ftsQuery("par", { words }), `"par"*`);
    assertEquals(ftsQuery("parsé", { words }), `"parsé"*`);
    // a finished word and the words before the last are whole
    assertEquals(ftsQuery("parse ", { words }), `"parse"`);
    assertEquals(ftsQuery("parse make", { words }), `"parse" AND "make"*`);
    assertEquals(asked, ["parse", "parser", "parsing", "pars", `${J}src${J}imp`, "make"]);
  });
  await t.step("many words: the common ones named, the rest under longer prefixes", () => {
    const words = (p: string) =>
      p === "sess"
        ? [
          { term: "sess", doc: 3 },
          ...Array.from({ length: 200 }, (_, i) => ({ term: `sess${i}`, doc: 2 })),
          { term: "session", doc: NAMED_WORD_OPS },
        ]
        : null;
    const q = ftsQuery("sess", { words })!;
    // sess0 is the only word after "sess0": named; "session" is common: named, alone in "sessi"
    const digits = [..."123456789"].map((d) => `"sess${d}"*`);
    assertEquals(q, `("sess" OR "sess0" OR "session" OR ${digits.join(" OR ")})`);
  });
});

Deno.test("prefixCover() names the common words and covers the rest with the fewest longer prefixes", async (t) => {
  const w = (term: string, doc = 1) => ({ term, doc });
  const many = (p: string, n: number, doc = 1) =>
    Array.from({ length: n }, (_, i) => w(`${p}${i.toString(36).padStart(2, "0")}`, doc));
  await t.step("few words: every one named", () => {
    assertEquals(prefixCover("rend", [w("rend"), w("render", 9999)]), {
      words: ["rend", "render"],
      prefixes: [],
    });
  });
  await t.step("a common word inside a group is split out, the rest of it covered deeper", () => {
    const words = [...many("rend", 100), w("render", NAMED_WORD_OPS), ...many("renders", 60)]
      .sort((a, b) => a.term < b.term ? -1 : 1);
    const cover = prefixCover("rend", words)!;
    assert(cover.words.includes("render"));
    assert(!cover.prefixes.some((p) => "render".startsWith(p)), JSON.stringify(cover));
    assert(cover.prefixes.includes("rend0") && cover.prefixes.includes("renders"));
    // every word is named or under a prefix, and no prefix holds a common word
    for (const { term } of words) {
      assert(cover.words.includes(term) || cover.prefixes.some((p) => term.startsWith(p)), term);
    }
    assert(cover.words.length + cover.prefixes.length <= MAX_PREFIX_PARTS);
  });
  await t.step("a character past ASCII after the prefix has its words named", () => {
    const words = [...many("rend", MAX_PREFIX_PARTS), w("rendß1"), w("rendß2")];
    const cover = prefixCover("rend", words)!;
    assert(cover.words.includes("rendß1") && cover.words.includes("rendß2"));
    assert(!cover.prefixes.some((p) => /[^a-z0-9]/.test(p)));
  });
  await t.step("an identifier's pair: covered the same way", () => {
    const pair = pairTerm("src", "rend");
    const cover = prefixCover(pair, many(pair, MAX_PREFIX_PARTS + 1))!;
    assertEquals(cover.words, []);
    assertEquals(cover.prefixes, [..."0123"].map((d) => `${pair}${d}`));
  });
  await t.step("more parts than that: none (FTS5's own prefix query)", () => {
    const common = many("rend", MAX_PREFIX_PARTS + 1, NAMED_WORD_OPS);
    assertEquals(prefixCover("rend", common), null);
  });
});

Deno.test("matchPattern() finds an identifier whatever joins its words, and whole words only", () => {
  const re = matchPattern("aws_access_key_id ")!;
  assertEquals("set AWS_ACCESS_KEY_ID=x".match(re)?.[0], "AWS_ACCESS_KEY_ID");
  assertEquals("aws_access_key_identity".match(re), null);
  assertEquals("rendering".match(matchPattern("rend")!)?.[0], "rendering");
});

Deno.test("joinedPairs() joins the words of each identifier, not words apart", () => {
  const J = PAIR_MARK;
  assertEquals(
    joinedPairs("aws_access_key_id = x; src/main.rs\nfoo bar v1.2"),
    [
      `${J}aws${J}access`,
      `${J}access${J}key`,
      `${J}key${J}id`,
      `${J}src${J}main`,
      `${J}main${J}rs`,
      `${J}v1${J}2`,
    ]
      .join(" "),
  );
  assertEquals(joinedPairs("one two\tthree"), "");
  assertEquals(joinedPairs(`a${J}b-c`), "", "a word holding the mark makes no pair");
});

Deno.test("indexBody() gives the index every word of a text once, as the store's tokenizer splits the text itself", () => {
  // The store's tokenizer (migration 24), in a table of its own, and its word list.
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1,
    detail=none, tokenize='unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE v USING fts5vocab(t, row);`);
  const insert = db.prepare("INSERT INTO t (rowid, body) VALUES (?, ?)");
  const terms = () =>
    (db.prepare("SELECT term FROM v ORDER BY term").all() as { term: string }[]).map((r) => r.term);
  // Every character class the chunks meet: ASCII punctuation and symbols, accents (composed and
  // combining), other scripts, symbols and punctuation beyond ASCII, emoji, private use, a lone
  // surrogate, controls, and an identifier repeated many times.
  const texts = [
    "aws_access_key_id=AKIA; src/main.rs --max-count v1.2.3 foo::bar $HOME ~/x (a)[b]{c}",
    "Café CAFÉ cafe\u0301 naïve ÉCOLE Straße ǅemal İstanbul",
    "日本語のテスト 中文 한국어 — «quoted» “smart” l’été ‰ § ¶ € £ 100%",
    "emoji 🚀rocket👍🏽 ok \u{1F600}smile \uE000pua\uE001 \uD800lone x\u200Bzero\u00A0nbsp",
    "tab\tnew\nline\rcr\u0007bell\u0000nul end",
    "const x = 1; ".repeat(2000) + "unique_tail_word",
    "",
    ...randomTexts(300, 11),
  ];
  for (const [i, text] of texts.entries()) {
    db.exec("DELETE FROM t");
    insert.run(1, text + (joinedPairs(text) ? `\n${joinedPairs(text)}` : ""));
    const whole = terms();
    db.exec("DELETE FROM t");
    const body = indexBody(text);
    insert.run(1, body);
    assertEquals(terms(), whole, `text ${i}`);
    assert(body.length <= text.length + joinedPairs(text).length + 1, `text ${i} is not longer`);
  }
  const repeated = texts[5];
  assert(indexBody(repeated).length < repeated.length / 100, "each chunk once");
  // Two hundred thousand different words, some of them twice: each kept once.
  const many = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}`);
  const body = indexBody([...many, ...many.slice(0, 1000)].join(" ")).split(" ");
  assertEquals(body.length, many.length);
  assertEquals(new Set(body).size, many.length);
  db.close();
});

/** Random texts from the characters that matter to the index's splitting (seeded: repeatable). */
function randomTexts(count: number, seed = 7): string[] {
  const alphabet = [
    ..."aZ09_-./:$\\\"'()[]{}=; \t\n\r\u0000\u007f",
    "é",
    "e\u0301",
    "ß",
    "İ",
    "日",
    "한",
    "٣",
    "\u00a0",
    "\u2003",
    "\u3000",
    "\ufeff",
    "\u200b",
    "—",
    "“",
    "€",
    "‰",
    "\u{1F680}",
    "\u{1D400}",
    "\u{20000}",
    PAIR_MARK,
    "\ue001",
    "\ud800",
    "\udc00",
    "\u{F0000}",
  ];
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () => {
    let t = "";
    for (let n = Math.floor(next() * 40); n > 0; n--) {
      t += alphabet[Math.floor(next() * alphabet.length)];
    }
    return t;
  });
}

Deno.test("joinedPairs() pairs the words of identifiers as a scan of the index's words does", () => {
  // The definition: each two INDEX_WORD matches with no whitespace between them, neither
  // holding the mark, once each.
  const reference = (text: string) => {
    const out = new Set<string>();
    let prev = "";
    let prevEnd = 0;
    for (const m of text.matchAll(INDEX_WORD)) {
      const word = m[0].includes(PAIR_MARK) ? "" : m[0];
      if (word && prev && !/\s/.test(text.slice(prevEnd, m.index))) {
        out.add(pairTerm(prev, word));
      }
      prev = word;
      prevEnd = m.index! + m[0].length;
    }
    return [...out].join(" ");
  };
  for (const text of randomTexts(3000)) {
    assertEquals(joinedPairs(text), reference(text), JSON.stringify(text));
  }
});

Deno.test("phraseCheck() wants each phrase's words in order and adjacent, folded as the index folds", () => {
  assertEquals(phraseCheck("deploy now"), null, "no phrase: the index's answer is exact");
  const id = phraseCheck("aws_access_key_id ")!;
  assert(id("export AWS_ACCESS_KEY_ID=x"));
  assert(id("AWS-ACCESS.KEY::ID"), "any separators between the words but whitespace");
  assert(!id("the aws access key id"), "an identifier is one chunk");
  assert(phraseCheck('"aws access key id"')!("AWS_ACCESS_KEY_ID"), "a quoted phrase any");
  assert(!id("aws key access id"), "out of order");
  assert(!id("aws_access_key_identity"), "whole words");
  assert(!id("aws access, a key id"), "not adjacent");
  const both = phraseCheck('"exit code" src/main.rs')!;
  assert(both("src/main.rs failed: exit code 1"));
  assert(!both("exit code 1"), "every phrase");
  assert(phraseCheck('"café crème"')!("un cafe creme"), "diacritics fold");
  assert(phraseCheck('"cafe creme"')!("un café crème"));
  assert(phraseCheck("std::vec::Ve")!("use std::vec::Vec;"), "the typed word is a prefix");
  assert(!phraseCheck("std::vec::Ve", { prefix: false })!("use std::vec::Vec;"));
});

Deno.test("an identifier of two words is answered by the index alone: its pair says the words are adjacent", async () => {
  assertEquals(phraseCheck("src/impo"), null);
  assertEquals(phraseCheck("--max-count error"), null);
  assert(phraseCheck("src/main.rs") !== null, "three words: the pairs may stand apart");
  assert(phraseCheck('"exit code"') !== null, "a quoted phrase's words are not a pair");
  const { s, store } = await storeWith({ "aaaaaaaa-1": ["see src/import.ts"] });
  await using _ = s;
  // matches older than the hit, more than a check would read: counted as the index says
  indexedWithout(store, `${pairTerm("src", "import")} src import`, run(-1, -1, 2 * PHRASE_CHECKS));
  const r = store.search("src/import", { limit: 1 });
  assertEquals([r.total, r.total_capped, r.hits.length], [1 + 2 * PHRASE_CHECKS, false, 1]);
  assertEquals(store.search("src/impo", { limit: 1 }).total, 1 + 2 * PHRASE_CHECKS);
  // a page of index entries whose operations are gone (a damaged store) is no crash
  assertEquals(store.search("src/impo", { limit: 5 }).hits.length, 1);
  assertEquals(store.search("src import.ts").total, 1, "apart, the words and a pair");
  store.close();
});

/** A store with one session per entry; each result is one Bash call's output. */
async function storeWith(
  sessions: Record<string, string[]>,
  tool = "Bash",
  filteredSearch?: FilterStrategy,
) {
  const s = await scratch({ filteredSearch });
  for (const [sid, results] of Object.entries(sessions)) await s.write(sid, results, tool);
  const store = s.open();
  await s.run(store);
  return { s, store };
}

/** How many operations FTS5's own prefix query finds for `prefix`. */
function nativePrefixCount(store: ChronicleStore, prefix: string): number {
  return (dbOf(store).prepare(
    "SELECT count(*) AS n FROM operations_fts WHERE operations_fts MATCH ?",
  )
    .get(`"${prefix}"*`) as { n: number }).n;
}

/** Indexes `body` under each of `rowids`, operations the store does not hold: matches only. */
function indexedWithout(store: ChronicleStore, body: string, rowids: Iterable<number>): void {
  const db = dbOf(store);
  const insert = db.prepare("INSERT INTO operations_fts (rowid, body) VALUES (?, ?)");
  db.exec("BEGIN");
  for (const rowid of rowids) insert.run(rowid, body);
  db.exec("COMMIT");
}

/** The numbers from `from` by `step` (-1 or 1), `count` of them. */
const run = (from: number, step: number, count: number) =>
  Array.from({ length: count }, (_, i) => from + i * step);

/**
 * Opens the store again after `rewind` (SQL that puts its index back as an older version left
 * it and forgets the migration that follows): nothing is found until an import indexes the
 * backlog, and search says why; after it, `queries` count what they counted `before`. Returns
 * the store opened again.
 */
async function refilledAfter(
  s: Awaited<ReturnType<typeof scratch>>,
  store: ChronicleStore,
  rewind: string,
  queries: string[],
  before: number[],
): Promise<ChronicleStore> {
  dbOf(store).exec(rewind);
  store.close();
  const after = s.open();
  const probe = after.search(queries[0]);
  assertEquals([probe.unindexed, probe.total], [after.totals().operations, 0]);
  await s.run(after);
  assertEquals(queries.map((q) => after.search(q).total), before);
  assertEquals(after.search(queries[0]).unindexed, 0);
  return after;
}

Deno.test("search finds a word in a Write's content and a command it ran", async () => {
  await using s = await scratch();
  await writeClaudeSession(s.home, {
    sessionId: "aaaaaaaa-1",
    cwd: "/work/demo",
    turns: [
      { user: "write it" },
      {
        tool: {
          name: "Write",
          input: {
            file_path: "/work/demo/a.ts",
            content: "export const quuxify = 1;\nfrobnicate();\n",
          },
          result: "File created",
        },
      },
      { tool: { name: "Bash", input: { command: "deno task zapcheck --verbose" }, result: "ok" } },
    ],
  });
  const store = s.open();
  await s.run(store);
  for (const q of ["quuxify", "frobnicate", "zapcheck", "--verbose "]) {
    const found = store.search(q);
    assertEquals(found.total, 1, q);
    // A command is also the call's summary, shown with the call itself.
    assert(["input", "text"].includes(found.hits[0].field), `${q}: ${found.hits[0].field}`);
    assert(found.hits[0].snippet.some((p) => p.match), `${q}: the snippet marks it`);
  }
  store.close();
});

Deno.test("search finds a word in the middle of a 300 KB output, and marks it", async () => {
  const filler = "compiling module\n".repeat(9_000);
  const { s, store } = await storeWith({
    "aaaaaaaa-1": [`${filler}the needle_in_haystack moment\n${filler}`],
  });
  await using _ = s;
  for (const q of ["needle_in_haystack", "haystack", '"the needle"']) {
    const found = store.search(q);
    assertEquals(found.total, 1, q);
    assertEquals(found.hits[0].field, "output");
    assert(found.hits[0].snippet.some((p) => p.match && /needle|haystack/i.test(p.text)), q);
  }
  store.close();
});

Deno.test("identifiers with _ . - / :: match as typed; a quoted phrase needs its words in order", async () => {
  const { s, store } = await storeWith({
    "aaaaaaaa-1": [
      "export aws_access_key_id=AKIA...",
      "rg --files-with-matches src/core/store.ts",
      "use std::collections::HashMap; version 1.2.3",
      "key id access aws, in another order",
    ],
  });
  await using _ = s;
  const count = (q: string) => store.search(q).total;
  assertEquals(count("aws_access_key_id"), 1);
  assertEquals(count("files_with_matches"), 1); // "-" and "_" both join words
  assertEquals(count("--files-with-matches"), 1);
  assertEquals(count("src/core/store.ts"), 1);
  assertEquals(count("std::collections::HashMap"), 1);
  assertEquals(count("1.2.3"), 1);
  assertEquals(count('"access key"'), 1);
  assertEquals(count('"key access"'), 0);
  assertEquals(count("aws access"), 2); // two words, anywhere
  store.close();
});

Deno.test("prefixes of 2 to 6 letters count every word they begin", async () => {
  const words = ["render", "renders", "rendering", "rename", "rent", "reply", "parse", "parser"];
  const { s, store } = await storeWith({ "aaaaaaaa-1": words.map((w) => `${w} ok`) });
  await using _ = s;
  const count = (q: string) => store.search(q).total;
  assertEquals(count("re"), 6);
  assertEquals(count("ren"), 5);
  assertEquals(count("rend"), 3);
  assertEquals(count("rende"), 3);
  assertEquals(count("render"), 3);
  assertEquals(count("pars"), 2);
  assertEquals(count("r"), 0); // one letter: the whole word "r" only
  assertEquals(count("render "), 1); // finished: the whole word
  store.close();
});

Deno.test("a prefix of four letters and more counts what FTS5's own prefix query counts, the words it begins named or not", async () => {
  // "rend" begins a few words, "zzzz" more than the store names: FTS5's prefix query, the same
  const many = Array.from({ length: MAX_PREFIX_PARTS + 5 }, (_, i) => `zzzz${i.toString(36)}`);
  // and one word common enough to be named among them ("zzzzcommon")
  const common = Array.from({ length: NAMED_WORD_OPS }, () => "zzzzcommon");
  const words = [
    ...["render", "renders", "rendering", "rendß", "rendérer", "rend\uE000x", "rend4"],
    ...["src/rendering", "src/renderer", "src/rend_x", ...many, ...common],
    ...many.map((w) => `src/${w}`), // an identifier whose last pair begins as many
  ];
  const { s, store } = await storeWith({ "aaaaaaaa-1": words.map((w) => `${w} ok`) });
  await using _ = s;
  const native = (p: string) => nativePrefixCount(store, p);
  for (
    const p of ["rend", "rende", "render", "renderi", "rendx", "zzzz", "zzzz1", "zzzzc", "src"]
  ) {
    const n = native(p);
    assertEquals(store.search(p).total, n, `prefix "${p}"`);
  }
  assertEquals(store.search("rend").total, 10); // rendérer folded, rend4, and the src/ ones
  const zzzz = 2 * many.length + common.length; // (the src/ ones too)
  assertEquals(store.search("zzzz").total, zzzz);
  // an identifier's last pair: its words joined, then the pairs it begins
  assertEquals(store.search("src/rend").total, 3);
  assertEquals(store.search("src/render").total, 2);
  assertEquals(store.search("src/renderi").total, 1);
  assertEquals(store.search("src/rend_").total, 1); // punctuation after it: the pair whole
  assertEquals(store.search("src/zzzz").total, native(pairTerm("src", "zzzz")));
  assertEquals(store.search("src/zzzz").total, many.length);
  // paging reaches every hit of a named prefix
  const seen = new Set<string>();
  for (let offset = 0; offset < zzzz; offset += 200) {
    for (const h of store.search("zzzz", { offset, limit: 200 }).hits) seen.add(h.op_id);
  }
  assertEquals(seen.size, zzzz);
  store.close();
});

Deno.test("a two-letter prefix finds the word itself and the words it begins, beyond ASCII too", async () => {
  const words = ["da", "dab", "daß", "dæmon", "d4ta", "привет", "пр", "при"];
  const { s, store } = await storeWith({ "aaaaaaaa-1": words.map((w) => `${w} ok`) });
  await using _ = s;
  const count = (q: string) => store.search(q).total;
  assertEquals(count("da"), 3);
  assertEquals(count("dæ"), 1);
  assertEquals(count("d4"), 1);
  assertEquals(count("пр"), 3);
  assertEquals(count("da "), 1); // finished: the whole word
  store.close();
});

Deno.test("a two-letter prefix counts what FTS5's own prefix query counts, whatever the script", async () => {
  // Words in many scripts, with letters that fold (é, İ) and that do not (ß, ø, ł, æ), digits
  // and private-use characters after two ASCII letters, and prefixes made of those.
  const letters = [..."abz09éßøłæöİıя漢\uE000"];
  const words: string[] = [];
  letters.forEach((x, i) =>
    letters.forEach((y, j) => {
      // each pair, as a word of its own and then with three of the characters after it
      if ((i + j) % 4 === 0) words.push(x + y);
      for (let k = 0; k < 3; k++) {
        words.push(x + y + letters[(i * 5 + j * 3 + k * 7) % letters.length]);
      }
    })
  );
  const { s, store } = await storeWith({ "aaaaaaaa-1": words.map((w) => `${w} ok`) });
  await using _ = s;
  const native = (p: string) => nativePrefixCount(store, p);
  const prefixes = new Set(words.map((w) => [...w.toLowerCase()].slice(0, 2).join("")));
  let compared = 0;
  for (const p of prefixes) {
    if ([...p].length < 2 || !/^[\p{L}\p{N}]+$/u.test(p)) continue;
    const n = native(p);
    assertEquals(store.search(p).total, n, `prefix "${p}"`);
    if (n > 0) compared++;
  }
  assert(compared > 100, `${compared} prefixes with hits`);
  // an ASCII prefix followed by letters that do not fold, as the expansion must find them
  assertEquals(store.search("ab").total, native("ab"));
  assert(words.some((w) => /^ab[^a-z0-9]/.test(w)));
  store.close();
});

Deno.test("migration 14 drops the two-letter prefix index and the next import indexes everything again", async () => {
  const { s, store } = await storeWith({ "aaaaaaaa-1": ["deploying the frontend", "aws_key_id"] });
  await using _ = s;
  const queries = ["de", "fr", "deploy", '"the frontend"', "aws_key_id", "Bash"];
  const before = queries.map((q) => store.search(q).total);
  assertEquals(before.every((n) => n > 0), true, `${before}`);
  // The store as version 13 left it: prefix indexes for two and three letters, no word list.
  const rewind = `DROP TABLE operations_fts; DROP TABLE operations_fts_words;
    CREATE VIRTUAL TABLE operations_fts USING fts5(body, content='', contentless_delete=1,
      detail=full, prefix='2 3', tokenize='unicode61 remove_diacritics 2');
    DELETE FROM migrations WHERE version = 14;`;
  (await refilledAfter(s, store, rewind, queries, before)).close();
});

Deno.test("a phrase is found only where its words stand in order and adjacent; its count and pages are exact", async () => {
  // Every output holds both words; only the even ones hold them as the phrase, half of those
  // as an identifier.
  const results = Array.from(
    { length: 90 },
    (_, i) =>
      i % 2
        ? `code ${i} exit, again exit and code`
        : i % 4
        ? `run ${i}: exit code ${i}`
        : `run ${i}: EXIT_CODE=${i}`,
  );
  const { s, store } = await storeWith({ "aaaaaaaa-1": results });
  await using _ = s;
  const cases: [string, number, RegExp][] = [
    ['"exit code"', 45, /^exit[ _]code$/],
    ["exit_code ", 23, /^exit_code$/],
    ["EXIT-CODE ", 23, /^exit_code$/],
    ["exit_co", 23, /^exit_code$/],
  ];
  for (const [q, n, shown] of cases) {
    const seen: string[] = [];
    for (let offset = 0;; offset += 20) {
      const page = store.search(q, { offset, limit: 20 });
      assertEquals([page.total, page.total_capped], [n, false], q);
      seen.push(...page.hits.map((h) => h.op_id));
      for (const h of page.hits) {
        const matched = h.snippet.filter((x) => x.match).map((x) => x.text.toLowerCase());
        assert(matched.length > 0 && matched.every((m) => shown.test(m)), `${q}: ${matched}`);
      }
      if (page.hits.length < 20) break;
    }
    assertEquals(new Set(seen).size, n, q);
  }
  assertEquals(store.search('"code exit"').total, 0);
  assertEquals(store.search("exit code").total, 90, "two words, no phrase");
  // with a filter, the same
  assertEquals(store.search('"exit code"', { project: "/work/demo" }).total, 45);
  assertEquals(store.search('"exit code"', { project: "/elsewhere" }).total, 0);
  store.close();
});

Deno.test("the session list's text filter keeps only sessions holding the phrase", async () => {
  const { s, store } = await storeWith({
    "aaaaaaaa-1": ["the build failed: exit code 2"],
    "bbbbbbbb-2": ["code-review done, exit now"],
  });
  await using _ = s;
  const ids = (text: string) =>
    store.listSessions({ text }).items.map((i) => i.id.slice(-10)).sort();
  assertEquals(ids('"exit code"'), ["aaaaaaaa-1"]);
  assertEquals(ids("exit code"), ["aaaaaaaa-1", "bbbbbbbb-2"]);
  assertEquals(ids("code_review"), ["bbbbbbbb-2"]);
  store.close();
});

Deno.test("a phrase past the candidates checked for the count says 'at least', and a deep hit is still paged to", async () => {
  const { s, store } = await storeWith({ "aaaaaaaa-1": ["exit code 3"] });
  await using _ = s;
  // Candidates holding both words whose text does not (no operation: an empty text), newer
  // and older than the hit, more than the checks a count makes.
  indexedWithout(store, "code exit", run(-1, -1, 2 * PHRASE_CHECKS));
  const one = store.search('"exit code"', { limit: 1 });
  assertEquals([one.total, one.total_capped, one.hits.length], [1, true, 1]);
  // a full page is not there, so every candidate is checked: the count is exact
  const page = store.search('"exit code"', { limit: 20 });
  assertEquals([page.total, page.total_capped], [1, false]);
  // newer candidates than the hit, more than the count checks: the hit is still reached
  indexedWithout(store, "code exit", run(1_000_001, 1, 2 * PHRASE_CHECKS));
  const deep = store.search('"exit code"', { limit: 1 });
  assertEquals(deep.hits.length, 1);
  assertEquals(deep.hits[0].snippet.some((x) => x.match && x.text === "exit code"), true);
  assertEquals([deep.total, deep.total_capped], [1, true], "the older candidates are not checked");
  store.close();
});

Deno.test("a phrase every candidate holds is counted to PHRASE_CHECKS' worth, frames inflated included", async () => {
  const n = PHRASE_CHECKS + 300;
  await using s = await scratch();
  await s.write("aaaaaaaa-1", Array.from({ length: n }, (_, i) => `step ${i}: exit code 0`));
  // without packs no payload is in a frame: a check each candidate, and no batch past them
  const memory = ChronicleStore.open(":memory:");
  await s.run(memory);
  const r = memory.search('"exit code"');
  assertEquals([r.total, r.total_capped, r.hits.length], [PHRASE_CHECKS, true, 20]);
  // a page beyond them is read as deep as it lies, and the count with it
  const deep = memory.search('"exit code"', { offset: PHRASE_CHECKS + 100, limit: 20 });
  assertEquals(deep.hits.length, 20);
  assert(deep.total >= PHRASE_CHECKS + 120, String(deep.total));
  memory.close();
  // with packs, each frame the checks inflated counts FRAME_CHECK_COST checks
  const store = s.open();
  await s.run(store);
  const packed = store.search('"exit code"');
  assertEquals([packed.total_capped, packed.hits.length], [true, 20]);
  assert(packed.total < PHRASE_CHECKS, String(packed.total));
  assertEquals((PHRASE_CHECKS - packed.total) % FRAME_CHECK_COST, 0, String(packed.total));
  store.close();
});

Deno.test("migration 24 drops the index's positions and the next import indexes everything again", async () => {
  const { s, store } = await storeWith({
    "aaaaaaaa-1": ["deploying the frontend", "aws_key_id", "the key aws id", "café crème"],
  });
  await using _ = s;
  const queries = ["de", "deploy", '"the frontend"', "aws_key_id", "id_key", '"cafe creme"'];
  const before = queries.map((q) => store.search(q).total);
  assertEquals(before, [1, 1, 1, 1, 0, 1]);
  // The store as version 23 left it: an index with positions.
  const rewind = `DROP TABLE operations_fts_words; DROP TABLE operations_fts;
    CREATE VIRTUAL TABLE operations_fts USING fts5(body, content='', contentless_delete=1,
      detail=full, prefix='3', tokenize='unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE operations_fts_words USING fts5vocab(operations_fts, row);
    DELETE FROM migrations WHERE version = 24;`;
  const after = await refilledAfter(s, store, rewind, queries, before);
  const ddl = (dbOf(after).prepare("SELECT sql FROM sqlite_schema WHERE name = 'operations_fts'")
    .get() as { sql: string }).sql;
  assert(ddl.includes("detail=none"), ddl);
  after.close();
});

Deno.test("migration 29 starts each pair with its mark: a word typed as a prefix expands to words, never to the pairs it begins", async () => {
  const { s, store } = await storeWith({
    "aaaaaaaa-1": ["error_code 42", "errors and error_handler", "aws_key_id"],
  });
  await using _ = s;
  const queries = ["error", "erro", "error_code", "error_cod", "aws_key_id", "key_id"];
  const before = queries.map((q) => store.search(q).total);
  assertEquals(before, [2, 2, 1, 1, 1, 1]);
  /** The index's terms that begin with `word`, and how many of them are pairs. */
  const begun = (db: ReturnType<typeof dbOf>, word: string) => (db.prepare(
    `SELECT count(*) AS terms, count(*) FILTER (WHERE instr(term, ?) > 0) AS pairs
       FROM operations_fts_words WHERE term >= ? AND term < ?`,
  ).get(PAIR_MARK, word, word + "\uffff") as { terms: number; pairs: number });
  assertEquals({ ...begun(dbOf(store), "error") }, { terms: 2, pairs: 0 });
  // The index as version 28 left it: a pair was the first word, the mark, the second.
  const rewind = `DROP TABLE operations_fts_words; DROP TABLE operations_fts;
    CREATE VIRTUAL TABLE operations_fts USING fts5(body, content='', contentless_delete=1,
      detail=none, prefix='3', tokenize='unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE operations_fts_words USING fts5vocab(operations_fts, row);
    INSERT INTO operations_fts (rowid, body)
      SELECT rowid, 'error' || char(57344) || 'code' FROM operations;
    DELETE FROM migrations WHERE version = 29;`;
  dbOf(store).exec(rewind);
  assertEquals({ ...begun(dbOf(store), "error") }, { terms: 1, pairs: 1 });
  const after = await refilledAfter(s, store, "", queries, before);
  assertEquals({ ...begun(dbOf(after), "error") }, { terms: 2, pairs: 0 });
  // error_code, error_handler, aws_key, key_id and the session's other identifiers
  const pairs = begun(dbOf(after), PAIR_MARK).pairs;
  assert(pairs >= 4, `${pairs} pairs`);
  after.close();
});

Deno.test("paging reaches every hit once, newest first, with an exact count", async () => {
  const results = Array.from({ length: 45 }, (_, i) => `pagemark number ${i}`);
  const { s, store } = await storeWith({ "aaaaaaaa-1": results });
  await using _ = s;
  const seen: string[] = [];
  for (let offset = 0;; offset += 20) {
    const page = store.search("pagemark", { offset, limit: 20 });
    assertEquals([page.total, page.total_capped], [45, false]);
    seen.push(...page.hits.map((h) => h.op_id));
    if (page.hits.length < 20) break;
  }
  assertEquals(seen.length, 45);
  assertEquals(new Set(seen).size, 45);
  // a page past the last hit is empty and keeps the count (it said the offset: 60, then 7)
  for (const [q, total] of [["pagemark", 45], ['"pagemark number"', 45], ["zzzq", 0]] as const) {
    const past = store.search(q, { offset: 60 });
    assertEquals([past.total, past.total_capped, past.hits.length], [total, false, 0], q);
  }
  assertEquals(store.search("nosuchword", { offset: 7 }).total, 0);
  const seqs = store.search("pagemark", { limit: 45 }).hits.map((h) => h.seq);
  assertEquals(seqs, [...seqs].sort((a, b) => b - a), "newest first");
  store.close();
});

Deno.test("agent, project and date filters narrow the hits", async () => {
  const { s, store } = await storeWith({
    "aaaaaaaa-1": ["sharedword alpha"],
    "bbbbbbbb-2": ["sharedword beta"],
  });
  await using _ = s;
  const db = dbOf(store);
  db.exec(
    "UPDATE sessions SET project_path = '/elsewhere', started_at = '2020-01-01T00:00:00Z', ended_at = '2020-01-02T00:00:00Z' WHERE id LIKE '%bbbbbbbb-2'",
  );
  assertEquals(store.search("sharedword").total, 2);
  assertEquals(store.search("sharedword", { project: "/work/demo" }).total, 1);
  assertEquals(
    store.search("sharedword", { project: "/elsewhere" }).hits[0].session_id.endsWith("bbbbbbbb-2"),
    true,
  );
  assertEquals(store.search("sharedword", { source: "codex" }).total, 0);
  assertEquals(store.search("sharedword", { to: "2021-01-01" }).total, 1);
  assertEquals(store.search("sharedword", { from: "2021-01-01" }).total, 1);
  store.close();
});

Deno.test("the count says 'at least' past its cap, with and without a filter", async () => {
  for (const strategy of ["join", "runs"] as const) {
    const { s, store } = await storeWith({ "aaaaaaaa-1": ["capword here"] }, "Bash", strategy);
    await using _ = s;
    // Older matches than any operation (negative rowids), enough to pass both caps.
    indexedWithout(store, "capword", run(-1, -1, Math.max(COUNT_CAP, FILTERED_COUNT_SCAN) + 1));
    const all = store.search("capword", { limit: 1 });
    assertEquals([all.total, all.total_capped], [COUNT_CAP, true]);
    assertEquals(all.hits[0].session_id.endsWith("aaaaaaaa-1"), true);
    const filtered = store.search("capword", { project: "/work/demo", limit: 1 });
    // joined, the newest matches are read and found outside the filter; its runs end above
    // them all, so none is read and the count is exact
    const capped = strategy === "join";
    assertEquals([filtered.total, filtered.total_capped], [1, capped], strategy);
    store.close();
  }
});

Deno.test("a filtered hit older than the counted matches is still found and paged to", async () => {
  for (const strategy of ["join", "runs"] as const) {
    const { s, store } = await storeWith({ "aaaaaaaa-1": ["deepword here"] }, "Bash", strategy);
    await using _ = s;
    // Newer matches than the operation (rowids past it) outside the filter, more than it scans.
    indexedWithout(store, "deepword", run(1001, 1, FILTERED_COUNT_SCAN + 1));
    const filtered = store.search("deepword", { project: "/work/demo" });
    assertEquals(filtered.hits.length, 1);
    assertEquals(filtered.hits[0].session_id.endsWith("aaaaaaaa-1"), true);
    // joined, not all matches were checked against the filter; its runs end below them
    assertEquals(filtered.total_capped, strategy === "join", strategy);
    assertEquals(store.search("deepword", { project: "/work/demo", offset: 1 }).hits, []);
    store.close();
  }
});

Deno.test("migration 6 rebuilds the search index of an existing store", async () => {
  const { s, store } = await storeWith({ "aaaaaaaa-1": ["deploying the frontend", "aws_key_id"] });
  await using _ = s;
  const queries = ["deploy", "frontend", '"the frontend"', "aws_key_id", "Bash", "fix"];
  const before = queries.map((q) => store.search(q).total);
  assertEquals(before.every((n) => n > 0), true, `${before}`);
  // The store as version 5 left it: its old index (empty here), no migration 6.
  dbOf(store).exec(`DROP TABLE operations_fts;
    CREATE VIRTUAL TABLE operations_fts USING fts5(body, content='', contentless_delete=1,
      detail=none, prefix='3', tokenize='unicode61 remove_diacritics 2');
    DELETE FROM migrations WHERE version = 6;`);
  store.close();
  const after = s.open();
  assertEquals(queries.map((q) => after.search(q).total), before);
  after.close();
});

Deno.test("a re-read rewrites the index only for steps whose text changed, and keeps it exact", async () => {
  await using s = await scratch();
  await s.write("aaaaaaaa-1", ["alphaword result", "betaword output", "same thing"]);
  const store = s.open();
  await s.run(store);
  const db = dbOf(store);
  const indexed = () => ({
    docs: (db.prepare("SELECT count(*) AS n FROM operations_fts_docsize").get() as { n: number }).n,
    data: db.prepare("SELECT count(*) AS n, sum(length(block)) AS b FROM operations_fts_data")
      .get() as { n: number; b: number },
  });
  const ops = store.listSessions({}).items[0].op_count;
  const before = indexed();
  assertEquals(before.docs, ops, "one text per operation");

  // Read again from the start, nothing changed: the index is left exactly as it was.
  await s.run(store, { full: true });
  assertEquals(indexed(), before);
  for (const q of ["alphaword", "betaword", "same thing"]) {
    assertEquals(store.search(q).total, 1, q);
  }

  // The log rewritten in place with one output changed (same records, same ids): that step's
  // old text goes, its new one is found, the others stay as they were.
  const log = claudeSessionPath(s.home, "/work/demo", "aaaaaaaa-1");
  await Deno.writeTextFile(log, (await Deno.readTextFile(log)).replaceAll("betaword", "gammaword"));
  const summary = await s.run(store);
  assertEquals(summary.sources["claude-code"].rewritten, 1);
  assertEquals(store.search("betaword").total, 0);
  assertEquals(store.search("gammaword").total, 1);
  assertEquals(store.search("alphaword").total, 1);
  assertEquals(store.search("output").total, 1, "the changed step is indexed once");
  assertEquals(indexed().docs, ops);
  store.close();
});

Deno.test("Distinct keeps each string once even when strings share a hash", () => {
  const d = new Distinct();
  const text = "alpha beta alpha gamma beta alpha";
  // every string the same hash: each found again by comparing it, not by its hash
  for (const m of text.matchAll(/\w+/g)) d.addSlice(7, text, m.index!, m.index! + m[0].length);
  assertEquals(d.values, ["alpha", "beta", "gamma"]);
  const p = new Distinct();
  const code = "a_b a.b c_d a_b";
  p.addPair(1, code, 0, 1, 2, 3);
  p.addPair(1, code, 4, 5, 6, 7);
  p.addPair(1, code, 8, 9, 10, 11);
  p.addPair(1, code, 12, 13, 14, 15);
  assertEquals(p.values, [pairTerm("a", "b"), pairTerm("c", "d")]);
});
