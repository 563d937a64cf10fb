/** The PUT of a kind whose response the spec does not show. */
import { z } from "zod";
import type { EncodedPath, GmsClient } from "../client";

/**
 * PUTs `body` to a record's path and returns the record: the answer when it parses as the record (as the
 * emulator's does), else the record read back from the same path, so no kind relies on an unshown body.
 */
export async function putRecord<S extends z.ZodType>(client: GmsClient, path: EncodedPath, body: unknown, schema: S): Promise<z.output<S>> {
  const answer = await client.request({ method: "PUT", path, body, schema: z.unknown() });
  const record = schema.safeParse(answer);
  return record.success ? record.data : client.request({ method: "GET", path, schema });
}
