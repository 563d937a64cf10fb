/**
 * A resource's own `connection` input: the service and key of a workspace other than the configuration's, for
 * programs that manage several. A secret input; what it leaves out comes from the configuration, then the
 * environment (src/provider/session.ts).
 */
import { z } from "zod";
import { BaseUrl } from "../settings";

export const Connection = z.strictObject({
  baseUrl: BaseUrl.optional(),
  apiKey: z.string().min(1).optional(),
});
export type Connection = z.infer<typeof Connection>;
