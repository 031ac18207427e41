/**
 * The vocabulary of local access, written once: which host names are this machine's loopback
 * (the server's Host/Origin checks and the guard both ask `isLoopbackHostname`), and the header
 * that carries the per-install token (the server, the UI and scripts use `TOKEN_HEADER`).
 * Pure: no I/O, safe for the UI bundle.
 */

/** The header that carries the install token (`Authorization: Bearer <token>` works as well). */
export const TOKEN_HEADER = "x-chronicle-token";

/**
 * True for a host name (no port) that always means this machine: `localhost`, an IPv4 address
 * in 127.0.0.0/8 written as a plain dotted quad, or the IPv6 loopback `[::1]` / `::1`.
 * Case-insensitive. Everything else, `localhost.evil.example` and `0.0.0.0` included, is not.
 */
export function isLoopbackHostname(name: string): boolean {
  const h = name.toLowerCase();
  if (h === "localhost" || h === "[::1]" || h === "::1") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
}
