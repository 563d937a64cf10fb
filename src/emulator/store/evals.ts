// SKELETON: to be written by the owner of this kind.
import type { Database } from "./database";
import type { Store } from "./index";
import type { Caller } from "./records";

export class EvalStore {
  constructor(
    private readonly db: Database,
    private readonly store: Store,
  ) {}
  ensureType(_input: { name: string; guid?: string | undefined; description?: string | undefined }): void {
    throw new Error("TODO");
  }
}
