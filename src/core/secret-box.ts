// Encryption at rest for upstream provider keys (and a raw key during its show-again window):
// AES-256-GCM under a key derived from the server secret. Format: "v1:" + base64url(iv|tag|ciphertext).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";

export class SecretBox {
  readonly #key: Buffer;
  readonly #fingerprintKey: Buffer;

  constructor(serverSecret: string) {
    if (serverSecret.length < 16) throw new Error("the server secret must be at least 16 characters");
    this.#key = createHash("sha256").update(`model-gateway:encrypt:${serverSecret}`).digest();
    this.#fingerprintKey = createHash("sha256").update(`model-gateway:fingerprint:${serverSecret}`).digest();
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  decrypt(sealed: string): string {
    if (!sealed.startsWith("v1:")) throw new Error("unknown ciphertext version");
    const raw = Buffer.from(sealed.slice(3), "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }

  /** A keyed hash for uniqueness checks on secrets without storing them in clear. */
  fingerprint(plaintext: string): string {
    return createHmac("sha256", this.#fingerprintKey).update(plaintext).digest("hex").slice(0, 32);
  }
}
