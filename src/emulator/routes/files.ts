import type { FileUploaded } from "../../api/files";
import { FileUpload, SignedFileQuery } from "../../api/files";
import { type RouteModule, guidParam, parse, parseBody } from "./wire";

/** `/files/upload` and the signed URLs it hands out, which the emulator serves itself. */
export const fileRoutes: RouteModule = (app, store) => {
  app.post("/files/upload", async (request): Promise<FileUploaded> => {
    const file = store.files.upload(request.caller, parseBody(FileUpload, request).data);
    const { expires, signature } = store.files.sign(file.guid);
    const query = new URLSearchParams({ expires: String(expires), signature });
    // Absolute and built from the request's own origin, so the URL works wherever the client reached the emulator.
    return { url: `${request.protocol}://${request.host}${app.prefix}/files/${file.guid}?${query}` };
  });

  // Public like a storage service's signed URL: the query's signature authorises the read, not a bearer key.
  app.get("/files/:guid", { config: { public: true } }, async (request, reply) => {
    const file = store.files.readSigned(guidParam(request), parse(SignedFileQuery, request.query, "query"));
    return reply.type(file.mimeType).send(Buffer.from(file.content));
  });
};
