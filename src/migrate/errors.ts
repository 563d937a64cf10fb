/** Why a migration cannot be planned: the message names what is wrong and never quotes a secret value. */
export type MigrationErrorCode = "NOT_AN_EXPORT" | "NO_GMS_RESOURCES" | "UNKNOWN_KIND" | "PLAINTEXT_SECRETS" | "NO_SCHEMA";

export class MigrationError extends Error {
  override readonly name = "MigrationError";

  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
