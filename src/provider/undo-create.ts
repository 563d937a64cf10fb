/** Rolling back a multi-step create, so that a create that fails midway leaves nothing unmanaged behind. */
import { z } from "zod";
import { type EncodedPath, type GmsClient, NotFoundError } from "../client";
import { failureText } from "./errors";
import type { Outputs } from "./kind";

/**
 * A create that made its object but failed a later step, and could not delete the object again. The
 * provider hands it to the engine as a partially created resource (id and properties), so that state
 * records it: the next `up` updates or replaces it and `destroy` removes it.
 */
export class CreatedButFailedError extends Error {
  override readonly name = "CreatedButFailedError";

  constructor(
    message: string,
    readonly guid: string,
    /** The object as far as it is known (the service's record, before the failed step). */
    readonly record: Outputs,
    /** Declared inputs the failed step did not apply: left out of the recorded outputs, so the next run applies them. */
    readonly unapplied: readonly string[] = [],
  ) {
    super(message);
  }
}

export interface AbandonedCreate {
  /** The object's own path, for the DELETE. */
  path: EncodedPath;
  kindLabel: string;
  guid: string;
  /** What failed, in the user's terms: `Cannot create Model "gpt-4o" on provider "openai": reading it back failed: ...`. */
  message: string;
  record: Outputs;
  unapplied?: readonly string[];
}

/**
 * Deletes the object a create made before a later step failed, then throws: a plain error when the
 * object is gone, a `CreatedButFailedError` when it could not be deleted (so state still records it).
 */
export async function abandonCreate(client: GmsClient, created: AbandonedCreate): Promise<never> {
  const { kindLabel, guid, message } = created;
  try {
    await client.request({ method: "DELETE", path: created.path, schema: z.unknown() });
  } catch (error) {
    if (!(error instanceof NotFoundError)) {
      throw new CreatedButFailedError(
        `${message} Deleting the ${kindLabel} it had created (${guid}) failed too (${failureText(error)}): Pulumi records it as created with errors, so the next \`pulumi up\` finishes it and \`pulumi destroy\` deletes it.`,
        guid,
        created.record,
        created.unapplied,
      );
    }
  }
  throw new Error(`${message} The ${kindLabel} it had created (${guid}) was deleted again.`);
}
