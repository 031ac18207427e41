/**
 * Where test fixtures live: the repository's own `fixtures/` (agent logs in their native
 * formats, copied from public projects and written by the real agent CLIs). Tests never
 * depend on anything outside the checkout.
 */
export const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname.replace(/\/$/, "");
