import { RecordTable, type StoredRecord, blob, integer, table, text } from "./columns";
import type { Database } from "./database";
import { BadRequestError, RecordNotFoundError } from "./errors";
import { type Caller, RECORD_COLUMNS, createdBy, newGuid } from "./records";
import type { SignedQuery, UrlSignature, UrlSigner } from "./signing";

export const FILES = table("files", {
  id: integer,
  guid: text,
  workspace_id: integer,
  mime_type: text,
  size: integer,
  content: blob,
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(FILES, { hidden: ["content"] });
const WITH_CONTENT = new RecordTable(FILES);

/** A file's record: every column but the bytes. */
export type FileRecord = StoredRecord<typeof RECORDS>;

/** A file with its bytes. */
export type StoredFile = StoredRecord<typeof WITH_CONTENT>;

/** Uploaded objects, kept as BLOBs, and the short-lived signed URLs (see {@link UrlSigner}) that serve them. */
export class FileStore {
  constructor(
    private readonly db: Database,
    private readonly signer: UrlSigner,
  ) {}

  /** Stores an upload (base64 or a base64 data URL); 400 when it does not decode or is empty. */
  upload(caller: Caller, data: string): FileRecord {
    const { mimeType, content } = decodeUpload(data);
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, this.db.clock.iso()),
      guid: newGuid(),
      mimeType,
      size: content.length,
      content,
    });
    return RECORDS.find(this.db, { id })!;
  }

  /** Signs a file GUID for the URL lifetime counted from `issuedAt` (the service's now unless a test moves the clock). */
  sign(guid: string, issuedAt?: Date): UrlSignature {
    return this.signer.sign("file", guid, issuedAt);
  }

  /**
   * The bytes behind a signed URL. Needs no caller: the signature is the authority. Checked as a storage
   * service does, with its texts: the signature (403), then the expiry (403), then the object (404).
   */
  readSigned(guid: string, query: SignedQuery, at?: Date): StoredFile {
    this.signer.verify("file", guid, query, at);
    const file = WITH_CONTENT.find(this.db, { guid, deletedAt: null });
    if (!file) throw new RecordNotFoundError("File not found");
    return file;
  }
}

/**
 * The header a signed URL's response names the uploader's media type in. Downloads are served with a
 * safe Content-Type (see routes/files.ts), so the emulator's own Files loader reads the stored type
 * from here to decide what it can split; a server that sends it could as well send that Content-Type,
 * so trusting it gives nobody anything.
 */
export const STORED_MEDIA_TYPE_HEADER = "x-gms-media-type";

/** The longest media type a data URL may declare (RFC 6838 allows 127 characters each for type and subtype). */
export const MAX_MEDIA_TYPE_LENGTH = 255;

const DATA_URL = /^data:([^,]*?)(;base64)?,(.*)$/is;
// RFC 9110 media-type: type "/" subtype *( OWS ";" OWS name "=" ( token / quoted-string ) ), printable
// ASCII only: the stored type goes out in a response header, where a CR or LF would end the header.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[ !#-\\[\\]-~]|\\\\[ -~])*"';
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?: *; *${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`);

/** Whether `value` is a syntactically valid `type/subtype[;name=value...]` of printable ASCII. */
export function isValidMediaType(value: string): boolean {
  return value.length <= MAX_MEDIA_TYPE_LENGTH && MEDIA_TYPE.test(value);
}

/** Why a declared media type is refused, or undefined when it is acceptable. */
function mediaTypeProblem(value: string): string | undefined {
  // Tab, CR, LF and the other C0/DEL controls: named on their own, as they are the header-injection attempt.
  if (/[\x00-\x1f\x7f]/.test(value)) return "Data URL media type contains control characters";
  if (value.length > MAX_MEDIA_TYPE_LENGTH) return `Data URL media type is longer than ${MAX_MEDIA_TYPE_LENGTH} characters`;
  if (!MEDIA_TYPE.test(value)) return "Data URL has an invalid media type";
  return undefined;
}

function decodeUpload(data: string): Pick<StoredFile, "mimeType" | "content"> {
  let payload = data;
  let declared: string | undefined;
  const url = DATA_URL.exec(data.trim());
  if (url) {
    // Spec: "data URL" is not narrowed further; the emulator takes only base64 data URLs, as the spec's uploads are base64.
    if (!url[2]) throw new BadRequestError("Data URL must be base64-encoded");
    const problem = url[1] ? mediaTypeProblem(url[1]) : undefined;
    if (problem) throw new BadRequestError(problem);
    declared = url[1] || undefined;
    payload = url[3]!;
  }
  const compact = payload.replace(/\s+/g, "");
  if (!isBase64(compact)) throw new BadRequestError("Invalid base64 data");
  const content = Buffer.from(compact, "base64");
  if (content.length === 0) throw new BadRequestError("File is empty");
  return { mimeType: declared ?? sniff(content), content };
}

/** Standard or URL-safe alphabet, padding optional but, when present, to a multiple of 4. */
function isBase64(text: string): boolean {
  const body = text.replace(/={1,2}$/, "");
  return /^[A-Za-z0-9+/_-]*$/.test(body) && body.length % 4 !== 1 && (body.length === text.length || text.length % 4 === 0);
}

/** The MIME type from magic bytes, then from text content; anything else is PNG data (spec). */
function sniff(content: Buffer): string {
  const head = content.subarray(0, 12).toString("latin1");
  if (head.startsWith("\x89PNG\r\n\x1a\n")) return "image/png";
  if (head.startsWith("\xff\xd8\xff")) return "image/jpeg";
  if (head.startsWith("GIF87a") || head.startsWith("GIF89a")) return "image/gif";
  if (head.startsWith("RIFF") && head.slice(8, 12) === "WEBP") return "image/webp";
  if (head.startsWith("%PDF-")) return "application/pdf";
  const text = utf8Text(content);
  if (text !== undefined) return parsesAsJson(text) ? "application/json" : "text/plain";
  return "image/png";
}

/** The content as text when it is valid UTF-8 without NUL bytes (binary data almost always has one). */
function utf8Text(content: Buffer): string | undefined {
  if (content.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(content);
  } catch {
    return undefined;
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
