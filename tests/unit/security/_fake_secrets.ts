/**
 * Fake credentials in real formats, generated at test time from a seed, so the repository
 * never holds a literal that looks like a live key (and push protection stays quiet).
 */
import { rng } from "../../_helpers/rng.ts";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const HEX = "0123456789abcdef";

export class FakeSecrets {
  #rnd: () => number;
  constructor(seed = 7) {
    this.#rnd = rng(seed);
  }
  chars(alphabet: string, n: number): string {
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(this.#rnd() * alphabet.length)];
    return out;
  }
  alnum(n: number): string {
    return this.chars(ALNUM, n);
  }
  hex(n: number): string {
    return this.chars(HEX, n);
  }
  openai(): string {
    return "sk-" + "proj-" + this.chars(ALNUM + "_-", 74) + "T3Blbk" + "FJ" + this.chars(ALNUM, 74);
  }
  anthropic(): string {
    return "sk-" + "ant-api03-" + this.chars(ALNUM + "_-", 93) + "AA";
  }
  aws(): string {
    return "AK" + "IA" + this.chars(UPPER32, 16);
  }
  github(): string {
    return "gh" + "p_" + this.alnum(36);
  }
  slack(): string {
    return "xo" + "xb-" + this.chars("0123456789", 12) + "-" + this.chars("0123456789", 13) + "-" +
      this.alnum(24);
  }
  google(): string {
    return "AI" + "za" + this.chars(ALNUM + "_-", 35);
  }
  stripe(): string {
    return "sk" + "_live_" + this.alnum(24);
  }
  jwt(): string {
    const b64 = (o: unknown) =>
      btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    return `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ sub: this.alnum(8), iat: 1700000000 })}.${
      this.chars(ALNUM + "_-", 43)
    }`;
  }
  password(): string {
    return this.alnum(6) + "#" + this.alnum(5) + "!";
  }
  pem(): string {
    const lines: string[] = [];
    for (let i = 0; i < 6; i++) lines.push(this.chars(ALNUM + "+/", 64));
    const label = "RSA PRIVATE" + " KEY";
    return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----`;
  }
}
