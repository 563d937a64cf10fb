import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock";
import { blob, integer, table, text } from "./columns";
import type { Database } from "./database";
import { ForbiddenError } from "./errors";

/**
 * How long a signed URL stays valid: the spec's lifetime of a signed file URL (Limits: 10 minutes), which
 * the emulator reuses for a run's stream URL (spec: not shown).
 */
export const SIGNED_URL_LIFETIME_SECONDS = 10 * 60;

/**
 * What a signed URL opens. Each subject signs a different text, so a signature for one never opens another:
 * a file signature does not open a generation's stream, nor the reverse.
 */
export type SignedSubject = "file" | "generation-stream";

/**
 * The text before `<guid>\n<expires>` that each subject signs. Files sign nothing before it: their texts are
 * the ones signed before streams had signatures, so file URLs issued by an older emulator keep working.
 */
const SUBJECT_PREFIX: Record<SignedSubject, string> = {
  file: "",
  "generation-stream": "generation-stream\n",
};

/** What a signed URL carries besides the GUID in its path. */
export interface UrlSignature {
  /** Unix seconds after which the URL answers 403. */
  expires: number;
  /** Hex HMAC-SHA256 of the subject, the GUID and `expires`. */
  signature: string;
}

/** A signed URL's query as received: either part may be missing or malformed. */
export interface SignedQuery {
  expires?: string | undefined;
  signature?: string | undefined;
}

/**
 * Signs and checks the capability URLs the emulator hands out (file downloads, run streams): whoever holds
 * one may read what it names until it expires, without an API key. The HMAC key is random per database
 * and stored in it (the `file_signing_key` table, kept under the name it had when only files were signed),
 * so URLs issued before a restart keep working.
 */
/** The one row (id 1) holding the signing secret. */
export const FILE_SIGNING_KEY = table("file_signing_key", { id: integer, secret: blob, created_at: text });

const SECRET = FILE_SIGNING_KEY.pick("secret");

export class UrlSigner {
  private readonly secret: Buffer;
  private readonly clock: Clock;

  constructor(db: Database) {
    this.clock = db.clock;
    db.run("INSERT OR IGNORE INTO file_signing_key (id, secret, created_at) VALUES (1, ?, ?)", randomBytes(32), db.clock.iso());
    this.secret = Buffer.from(SECRET.decode(db.get("SELECT secret FROM file_signing_key WHERE id = 1")!).secret);
  }

  /** Signs `guid` as `subject` for the URL lifetime counted from `issuedAt` (the service's now unless a test moves the clock). */
  sign(subject: SignedSubject, guid: string, issuedAt: Date = this.clock.date()): UrlSignature {
    const expires = Math.floor(issuedAt.getTime() / 1000) + SIGNED_URL_LIFETIME_SECONDS;
    return { expires, signature: this.hmac(subject, guid, String(expires)) };
  }

  /**
   * Checks a signed URL as a storage service does, with its texts: the signature (403 `Signature does not
   * match`), then the expiry (403 `Request has expired`). What the URL names is the caller's to look up.
   */
  verify(subject: SignedSubject, guid: string, query: SignedQuery, at: Date = this.clock.date()): void {
    const expected = Buffer.from(this.hmac(subject, guid, query.expires ?? ""));
    const given = Buffer.from(query.signature ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ForbiddenError("Signature does not match");
    if (at.getTime() > Number(query.expires) * 1000) throw new ForbiddenError("Request has expired");
  }

  private hmac(subject: SignedSubject, guid: string, expires: string): string {
    return createHmac("sha256", this.secret).update(`${SUBJECT_PREFIX[subject]}${guid}\n${expires}`).digest("hex");
  }
}
