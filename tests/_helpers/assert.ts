/**
 * Deno-std-style assertions over node:assert (the std library comes from JSR, which is not
 * reachable here).
 */
import assert from "node:assert/strict";

export function assertEquals<T>(actual: unknown, expected: T, msg?: string): void {
  assert.deepStrictEqual(actual, expected, msg);
}
export function assertNotEquals(actual: unknown, expected: unknown, msg?: string): void {
  assert.notDeepStrictEqual(actual, expected, msg);
}
export function assert_(cond: unknown, msg?: string): asserts cond {
  assert.ok(cond, msg);
}
export { assert_ as assert };
export function assertMatch(actual: string, re: RegExp, msg?: string): void {
  assert.match(actual, re, msg);
}
export function assertStringIncludes(actual: string, part: string, msg?: string): void {
  assert.ok(
    actual.includes(part),
    msg ?? `expected ${JSON.stringify(actual.slice(0, 500))} to include ${JSON.stringify(part)}`,
  );
}
export function assertThrows(
  fn: () => unknown,
  cls?: new (...a: never[]) => Error,
  msg?: string,
): Error {
  try {
    fn();
  } catch (e) {
    if (cls && !(e instanceof cls)) {
      throw new assert.AssertionError({ message: `expected ${cls.name}, got ${e}` });
    }
    return e as Error;
  }
  throw new assert.AssertionError({ message: msg ?? "expected the function to throw" });
}
export async function assertRejects(
  fn: () => Promise<unknown>,
  cls?: new (...a: never[]) => Error,
  msg?: string,
): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    if (cls && !(e instanceof cls)) {
      throw new assert.AssertionError({ message: `expected ${cls.name}, got ${e}` });
    }
    return e as Error;
  }
  throw new assert.AssertionError({ message: msg ?? "expected the promise to reject" });
}
