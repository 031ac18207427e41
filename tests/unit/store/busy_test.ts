import { assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { retryWhileBusy } from "../../../core/store/_sql.ts";

/** An error as node:sqlite gives SQLITE_BUSY. */
const busy = () => Object.assign(new Error("database is locked"), { code: "ERR_SQLITE_ERROR" });

Deno.test("retryWhileBusy() tries again while SQLite answers busy, a little longer apart each time", () => {
  const pauses: number[] = [];
  let tries = 0;
  const opened = () => {
    if (++tries < 4) throw busy();
    return "opened";
  };
  const value = retryWhileBusy(opened, 5_000, (ms) => pauses.push(ms));
  assertEquals([value, tries, pauses], ["opened", 4, [10, 20, 30]]);
});

Deno.test("retryWhileBusy() throws any other error at once, and busy once its time is up", () => {
  let tries = 0;
  const broken = () => {
    tries++;
    throw new Error("file is not a database");
  };
  assertThrows(() => retryWhileBusy(broken, 5_000, () => {}), Error, "not a database");
  assertEquals(tries, 1);
  tries = 0;
  const always = () => {
    tries++;
    throw busy();
  };
  assertThrows(() => retryWhileBusy(always, 0, () => {}), Error, "locked");
  assertEquals(tries, 1, "no time to wait: one try");
});
