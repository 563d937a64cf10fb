import { z } from "zod";
import { type GmsClient, path } from "../client";

/** `data`: a base64 string or a `data:<mime>;base64,<payload>` URL. */
export const FileUpload = z.object({ data: z.string() });
export type FileUpload = z.infer<typeof FileUpload>;

/** A signed URL for the uploaded object, valid for 10 minutes. */
export const FileUploaded = z.object({ url: z.url() });
export type FileUploaded = z.infer<typeof FileUploaded>;

/** The query a signed file URL carries. */
export const SignedFileQuery = z.object({
  expires: z.string().optional(),
  signature: z.string().optional(),
});
export type SignedFileQuery = z.infer<typeof SignedFileQuery>;

export const filesApi = {
  /**
   * Uploads `content` and answers its signed URL. With a MIME type it travels as a data URL, else as
   * plain base64 for the service to recognise. A second upload leaves a file that nothing lists and
   * whose URL expires, so the POST is retried like a GET.
   */
  async upload(client: GmsClient, content: Buffer, mimeType: string | undefined): Promise<string> {
    const data = mimeType ? `data:${mimeType};base64,${content.toString("base64")}` : content.toString("base64");
    const body: FileUpload = { data };
    return (await client.request({ method: "POST", path: path`/files/upload`, body, schema: FileUploaded, replayable: true })).url;
  },
};
