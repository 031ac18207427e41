/**
 * Search-as-you-type over the prefix index, and the migration that rebuilt the index for it.
 */
import { dbOf } from "../../_helpers/store_db.ts";
import { assertEquals } from "../../_helpers/assert.ts";
import { type ChronicleStore, ftsQuery } from "../../../core/store/mod.ts";
import { scratch } from "./_sessions.ts";

const RESULTS = ["deploying the frontend", "denormalized tables", "de facto standard", "dentist"];

async function withStore(fn: (store: ChronicleStore, reopen: () => ChronicleStore) => void) {
  await using s = await scratch();
  const store = await s.imported("aaaaaaaa-1", RESULTS);
  fn(store, () => {
    store.close();
    return s.open();
  });
}

Deno.test("the last word is a prefix from three characters; a shorter one matches whole", async () => {
  assertEquals(ftsQuery("make de"), `"make" AND "de"`);
  assertEquals(ftsQuery("make den"), `"make" AND "den"*`);
  await withStore((store) => {
    assertEquals(store.search("de").total, 1); // only the word "de"
    assertEquals(store.search("den").total, 2); // denormalized, dentist
    assertEquals(store.search("deno").total, 1); // denormalized: expanded, no whole word
    assertEquals(store.search("dep").total, 1);
    assertEquals(store.search("frontend").total, 1);
  });
});

Deno.test("migration 3 rebuilds the search index of an existing store", async () => {
  await withStore((store, reopen) => {
    const queries = ["de", "den", "deno", "frontend", "tables", "Bash", "make"];
    const before = queries.map((q) => store.search(q).total);
    // The store as an older version left it: the old index (empty here), no migration 3.
    dbOf(store).exec(`DROP TABLE operations_fts;
      CREATE VIRTUAL TABLE operations_fts USING fts5(body, content='', contentless_delete=1,
        detail=none, prefix='2 3 4', tokenize='unicode61 remove_diacritics 2');
      DELETE FROM migrations WHERE version = 3;`);
    assertEquals(queries.map((q) => store.search(q).total), queries.map(() => 0));
    const after = reopen();
    assertEquals(queries.map((q) => after.search(q).total), before);
    assertEquals(before.every((n) => n > 0), true, `${before}`);
    after.close();
  });
});

Deno.test("a file read is indexed by its head; a command's output by its head and its tail", async () => {
  await using s = await scratch();
  const long = (first: string, last: string) => `${first} ${"filler ".repeat(2000)}${last}`;
  await s.write("bbbbbbbb-2", [long("readopening", "readending")], "Read");
  const store = await s.imported("aaaaaaaa-1", [long("cmdopening", "cmdfailure")]);
  const count = (q: string) => store.search(q).total;
  assertEquals([count("readopening"), count("readending")], [1, 0]);
  assertEquals([count("cmdopening"), count("cmdfailure")], [1, 1]);
  store.close();
});
