/** The one place errors become responses: each kind of error gets its status and code. */
import { assertApiError } from "./_helpers.ts";
import { ChronicleError } from "../../../core/model/errors.ts";
import { HttpError, toErrorResponse } from "../../../server/errors.ts";
import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";

Deno.test("toErrorResponse() maps each kind of error to its status and code", async (t) => {
  const cases: { name: string; error: unknown; status: number; code: string }[] = [
    {
      name: "a usage error is a bad request",
      error: new ChronicleError("usage", "bad q"),
      status: 400,
      code: "bad_request",
    },
    {
      name: "an invalid session is a bad request",
      error: new ChronicleError("invalid_session", "x"),
      status: 400,
      code: "bad_request",
    },
    {
      name: "not found",
      error: new ChronicleError("not_found", "no such session"),
      status: 404,
      code: "not_found",
    },
    {
      name: "a conflict",
      error: new ChronicleError("conflict", "exists"),
      status: 409,
      code: "conflict",
    },
    {
      name: "a forbidden action",
      error: new ChronicleError("forbidden", "no"),
      status: 403,
      code: "forbidden_origin",
    },
    {
      name: "a locked store is unavailable",
      error: new ChronicleError("locked", "busy"),
      status: 503,
      code: "unavailable",
    },
    {
      name: "an HttpError keeps its own status",
      error: new HttpError(413, "payload_too_large", "big"),
      status: 413,
      code: "payload_too_large",
    },
    {
      name: "bad JSON is a bad request",
      error: new SyntaxError("Unexpected token"),
      status: 400,
      code: "bad_request",
    },
    {
      name: "a bad number is a bad request",
      error: new RangeError("limit must be 1-500"),
      status: 400,
      code: "bad_request",
    },
    {
      name: "bad percent-encoding is a bad request",
      error: new URIError("URI malformed"),
      status: 400,
      code: "bad_request",
    },
    {
      name: "an argument TypeError is a bad request",
      error: new TypeError("Invalid limit"),
      status: 400,
      code: "bad_request",
    },
    {
      name: "a programming TypeError is internal",
      error: new TypeError("x.map is not a function"),
      status: 500,
      code: "internal",
    },
    { name: "anything else is internal", error: new Error("boom"), status: 500, code: "internal" },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      await assertApiError(toErrorResponse(c.error), c.status, c.code);
    });
  }
});

Deno.test("toErrorResponse() keeps the message of a bad request and hides no status", async () => {
  const res = toErrorResponse(new ChronicleError("usage", 'Invalid rule pattern "": it is empty'));
  const body = await res.json();
  assertEquals(body, {
    ok: false,
    code: "bad_request",
    error: 'Invalid rule pattern "": it is empty',
    status: 400,
  });
  assertStringIncludes(res.headers.get("content-type") ?? "", "application/json");
});
