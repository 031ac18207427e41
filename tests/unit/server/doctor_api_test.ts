/** GET /api/doctor serves the same typed report as `chronicle doctor`, behind the token. */
import { assertEquals } from "../../_helpers/assert.ts";
import { buildDoctorReport, type DoctorReport } from "../../../core/doctor/mod.ts";
import { ChronicleStore } from "../../../core/store/mod.ts";
import { assertApiError, call, callJson, testApp } from "./_helpers.ts";

Deno.test("GET /api/doctor answers the doctor's report, and says when it is not wired", async () => {
  const store = ChronicleStore.open(":memory:");
  try {
    const asked: boolean[] = [];
    const app = testApp(store, {
      doctor: ({ verifyPacks }) => {
        asked.push(verifyPacks);
        return buildDoctorReport({
          agents: () => Promise.resolve([]),
          dataFolder: () => Promise.resolve(null),
          store: () => Promise.resolve(null),
          guard: () => Promise.resolve(null),
          tools: () => Promise.resolve([{ name: "git", version: null }]),
          server: () => Promise.resolve(null),
        });
      },
    });
    const r = await callJson<DoctorReport>(app, "GET", "/api/doctor");
    assertEquals([r.ok, r.attention], [false, 2]); // no HOME for the data folder; no git
    assertEquals(r.checks.find((c) => c.subject === "git")?.level, "attention");
    await callJson(app, "GET", "/api/doctor?verify=false");
    assertEquals(asked, [true, false]);
    await assertApiError(
      await call(app, "GET", "/api/doctor", { token: null }),
      401,
      "missing_token",
    );
    await assertApiError(await call(testApp(store), "GET", "/api/doctor"), 503, "unavailable");
  } finally {
    store.close();
  }
});
