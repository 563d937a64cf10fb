// SKELETON: to be written by the owner of this kind.
import type { Database } from "./database";
import type { Store } from "./index";
import type { Caller } from "./records";

export class SkillStore {
  constructor(
    private readonly db: Database,
    private readonly store: Store,
  ) {}
  createConfigured(_caller: Caller, _input: { name: string; type: string; metadata?: { name: string; required: boolean; value?: unknown; type?: string | undefined }[] | undefined; guid?: string | undefined }): unknown {
    throw new Error("TODO");
  }
}
