/** The Files endpoint: an upload answered by a signed URL. */
import { z } from "zod";
import type { GmsClient } from "../client";
import { endpoint, pathOf } from "./endpoint";
import { wire } from "./wire";

/** `data`: a base64 string or a `data:<mime>;base64,<payload>` URL. */
export const FileUpload = wire(z.object({ data: z.string() }));
export type FileUpload = z.output<typeof FileUpload>;

/** A signed URL for the uploaded object, valid for 10 minutes. */
export const FileUploaded = wire(z.object({ url: z.url() }));
export type FileUploaded = z.output<typeof FileUploaded>;

/**
 * The query a signed file URL carries. Not an entry: the download the URL points at is not a route of the spec
 * (the emulator serves it by hand, see src/emulator/routes/files.ts).
 */
export const SignedFileQuery = z.object({
  expires: z.string().optional(),
  signature: z.string().optional(),
});
export type SignedFileQuery = z.infer<typeof SignedFileQuery>;

export const fileEndpoints = {
  upload: endpoint({ method: "POST", path: "/files/upload", body: FileUpload, response: FileUploaded }),
};

export const filesApi = {
  /**
   * Uploads `content` and answers its signed URL. With a MIME type it travels as a data URL, else as
   * plain base64 for the service to recognise. A second upload leaves a file that nothing lists and
   * whose URL expires, so the POST is retried like a GET: sent through `client.request` with `replayable`,
   * which `call` does not offer.
   */
  async upload(client: GmsClient, content: Buffer, mimeType: string | undefined): Promise<string> {
    const data = mimeType ? `data:${mimeType};base64,${content.toString("base64")}` : content.toString("base64");
    const entry = fileEndpoints.upload;
    const body = z.encode(FileUpload, { data });
    return (await client.request({ method: entry.method, path: pathOf(entry), body, schema: entry.response, replayable: true })).url;
  },
};
