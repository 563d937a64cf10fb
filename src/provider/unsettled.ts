/**
 * What state records of an object whose create the provider did not settle, named here once: the provider writes
 * these, the plugin's router keeps them through a refresh, and `pulumi-gms migrate` refuses to move a resource that
 * holds one. Renaming one strands the stacks that recorded it.
 */

/** The output of a placeholder resource: the window in which its lost create may have made the object (./window.ts). */
export const UNRESOLVED_CREATE = "__unresolvedCreate";

/** The output of a partially created resource: what is recorded of it may not be what exists. */
export const INCOMPLETE = "__incomplete";

/** A placeholder's id: the create's answer, and so the object's GUID, was lost. */
export const placeholderId = (unique: string): string => `unresolved-${unique}`;

/** Whether a resource of state is a placeholder (by its id, or by its output if an engine gave it another id). */
export const isPlaceholder = (id: string, outputs: Record<string, unknown> | undefined): boolean =>
  id.startsWith(placeholderId("")) || outputs?.[UNRESOLVED_CREATE] !== undefined;

/** Whether a resource of state was created partially. */
export const isIncomplete = (outputs: Record<string, unknown> | undefined): boolean => outputs?.[INCOMPLETE] !== undefined;
