/** Rolling back a multi-step create, so that a create that fails midway leaves nothing behind. */
import { z } from "zod";
import { type EncodedPath, type GmsClient, NotFoundError } from "../client";
import { failureText } from "./errors";

/**
 * Deletes the object a create made before a later step failed. The answer is the sentence the create's
 * error ends with: the object is gone, or (when the delete fails too) the user must delete it by hand.
 */
export async function undoCreate(client: GmsClient, path: EncodedPath, kindLabel: string, guid: string): Promise<string> {
  try {
    await client.request({ method: "DELETE", path, schema: z.unknown() });
    return `The ${kindLabel} it had created (${guid}) was deleted again.`;
  } catch (error) {
    if (error instanceof NotFoundError) return `The ${kindLabel} it had created (${guid}) is already gone.`;
    return `Deleting the ${kindLabel} it had created (${guid}) failed too (${failureText(error)}): delete it by hand, Pulumi does not manage it.`;
  }
}
