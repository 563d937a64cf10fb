/**
 * `/files/upload`, served from src/api/files.ts's entry, and the signed URLs it hands out, which the emulator
 * serves itself by hand: a download is no route of the spec and answers bytes, not a record, public (authorised
 * by the URL's signature, not a key) and with the headers below.
 */
import { SignedFileQuery, fileEndpoints } from "../../api/files";
import { STORED_MEDIA_TYPE_HEADER, isValidMediaType } from "../store/files";
import { serve } from "./serve";
import { type RouteModule, guidParam, parse } from "./wire";

/**
 * Media types a download keeps, with the file name extension it is offered under: types a browser will
 * not run as a page. Anything else (text/html, image/svg+xml, XML, scripts...) is served as
 * `application/octet-stream`, since an unauthenticated signed URL would otherwise let any uploader put a
 * page with scripts on the emulator's origin.
 */
const INERT_MEDIA_TYPES: Record<string, string> = {
  "text/plain": "txt",
  "text/csv": "csv",
  "text/tab-separated-values": "tsv",
  "text/markdown": "md",
  "application/json": "json",
  "application/pdf": "pdf",
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};

/** The Content-Type a stored media type is served with and the extension of the offered file name. */
export function servedMediaType(stored: string): { contentType: string; extension: string } {
  // A type stored before uploads were validated may be malformed (a CRLF one broke its downloads): not served as such.
  const essence = isValidMediaType(stored) ? stored.split(";")[0]!.trim().toLowerCase() : "";
  const extension = INERT_MEDIA_TYPES[essence];
  return extension ? { contentType: stored, extension } : { contentType: "application/octet-stream", extension: "bin" };
}

export const fileRoutes: RouteModule = (app, store, context) => {
  serve(app, fileEndpoints.upload, ({ caller, body }) => {
    const file = store.files.upload(caller, body.data);
    const { expires, signature } = store.files.sign(file.guid);
    const query = new URLSearchParams({ expires: String(expires), signature });
    // Absolute, on the emulator's own origin (never the request's Host header, which the client chooses).
    return { url: `${context.origin()}${app.prefix}/files/${file.guid}?${query}` };
  });

  // Public like a storage service's signed URL: the query's signature authorises the read, not a bearer key.
  // Served as a download that cannot run as a page on this origin: an inert type or octet-stream, no
  // sniffing, an attachment with a file name made of the GUID, and a CSP that forbids everything.
  app.get("/files/:guid", { config: { public: true } }, async (request, reply) => {
    const guid = guidParam(request);
    const file = store.files.readSigned(guid, parse(SignedFileQuery, request.query, "query"));
    const served = servedMediaType(file.mimeType);
    if (isValidMediaType(file.mimeType)) reply.header(STORED_MEDIA_TYPE_HEADER, file.mimeType);
    return reply
      .type(served.contentType)
      .header("x-content-type-options", "nosniff")
      .header("content-disposition", `attachment; filename="${guid}.${served.extension}"`)
      .header("content-security-policy", "default-src 'none'; sandbox")
      .send(Buffer.from(file.content));
  });
};
