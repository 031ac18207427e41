/**
 * Byte arrays `parts` one after the other in one array (the only part itself, when there is
 * one): a payload frame's payloads, a share's gzip members.
 */
export function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  for (let k = 0, at = 0; k < parts.length; at += parts[k++].byteLength) joined.set(parts[k], at);
  return joined;
}
