/**
 * Where test fixtures live: the repository's own `fixtures/` (agent logs in their native
 * formats, copied from public projects and written by the real agent CLIs). Tests never
 * depend on anything outside the checkout.
 */
export const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname.replace(/\/$/, "");

/** Copies a folder and everything in it (a fixture home a test may change). */
export async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
    else if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}
