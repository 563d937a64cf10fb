/** Rolling back a multi-step create, so that a create that fails midway leaves nothing unmanaged behind. */
import { MayExistError, NotFoundError } from "../client";
import { failureText, ProviderError } from "./errors";
import type { Outputs } from "./kind";

export interface AbandonedCreate {
  /** Deletes the object: the kind's delete (its DELETE entry). */
  remove(): Promise<void>;
  kindLabel: string;
  guid: string;
  /** What failed, in the user's terms: `Cannot create Model "gpt-4o" on provider "openai": reading it back failed: ...`. */
  message: string;
  record: Outputs;
}

/**
 * Deletes the object a create made before a later step failed, then throws: a plain error when the
 * object is gone, a `MayExistError` when it could not be deleted (so state still records it).
 */
export async function abandonCreate(created: AbandonedCreate): Promise<never> {
  const { kindLabel, guid, message } = created;
  try {
    await created.remove();
  } catch (error) {
    if (!(error instanceof NotFoundError)) {
      throw new MayExistError(
        `${message} Deleting the ${kindLabel} it had created (${guid}) failed too (${failureText(error)}): Pulumi ` +
          `records it as created with errors, so the next \`pulumi up\` replaces it and \`pulumi destroy\` deletes it.`,
        { state: "made", id: guid, outputs: created.record },
      );
    }
  }
  throw new ProviderError("create_undone", `${message} The ${kindLabel} it had created (${guid}) was deleted again.`);
}
