import { z } from "zod";

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
