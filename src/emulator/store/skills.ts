import { z } from "zod";
import type { SkillType } from "../../api/skills";
import { RecordTable, type StoredRecord, integer, json, nullable, table, text } from "./columns";
import { storeModule } from "./module";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Caller, RECORD_COLUMNS, createdBy, newGuid, updatedBy } from "./records";
import type { WorkspaceStore } from "./workspaces";

interface SkillInput {
  name: string;
  type: string;
  metadata?: { name: string; required: boolean; value?: unknown; type?: string | undefined }[] | null | undefined;
  guid?: string | undefined;
}

/** A Skill's metadata entries as stored (each as submitted, `value` null when a fixture left it out). */
const StoredMetadata = z.array(z.looseObject({ name: z.string(), required: z.boolean(), value: z.unknown(), type: z.string().optional() }));

export const SKILLS = table("skills", {
  id: integer,
  guid: text,
  workspace_id: integer,
  name: text,
  type: text,
  metadata: nullable(json((value) => StoredMetadata.safeParse(value))),
  ...RECORD_COLUMNS,
});

const RECORDS = new RecordTable(SKILLS);

export type StoredSkill = StoredRecord<typeof RECORDS>;

export class SkillStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly workspaces: WorkspaceStore },
  ) {}

  /** Every non-deleted Skill of the workspace, oldest first: Skill lists ignore paging (spec). */
  list(caller: Caller): StoredSkill[] {
    return RECORDS.list(this.db, { workspaceId: caller.workspaceId, deletedAt: null });
  }

  /**
   * The distinct types of the workspace's Skills, each with the metadata definitions of its Skills (by
   * entry name, first seen wins). Spec: shape not shown; the emulator derives types from existing Skills.
   */
  listTypes(caller: Caller): SkillType[] {
    const types = new Map<string, Map<string, SkillType["metadata"][number]>>();
    for (const skill of this.list(caller)) {
      const definitions = types.get(skill.type) ?? new Map<string, SkillType["metadata"][number]>();
      types.set(skill.type, definitions);
      for (const entry of skill.metadata ?? []) {
        if (!definitions.has(entry.name))
          definitions.set(entry.name, { name: entry.name, required: entry.required, type: entry.type ?? null });
      }
    }
    return [...types].map(([name, definitions]) => ({ name, metadata: [...definitions.values()] }));
  }

  /**
   * The spec's quirk: create does not resolve `type`. It looks up a non-deleted Skill of the workspace
   * whose name equals the submitted name; without one it answers 404 `Type not found`. With one, a new
   * Skill is created from the submitted name, type and metadata.
   */
  create(caller: Caller, input: SkillInput): StoredSkill {
    return this.db.transaction(() => {
      const namesake = RECORDS.find(this.db, { workspaceId: caller.workspaceId, name: input.name, deletedAt: null });
      if (!namesake) throw new RecordNotFoundError("Type not found");
      this.store.workspaces.reserve(caller, "skills");
      return this.insert(caller, input);
    });
  }

  /**
   * A pre-configured Skill (fixtures): new Skills are configured outside the public interface. It is an
   * ordinary Skill of the workspace and counts towards usage, but fixtures are not refused by the limit.
   */
  createConfigured(caller: Caller, input: SkillInput): StoredSkill {
    return this.insert(caller, input);
  }

  /** A non-deleted Skill of the caller's workspace; anything else is 404 `Skill not found`. */
  get(caller: Caller, guid: string): StoredSkill {
    const skill = RECORDS.find(this.db, { guid, workspaceId: caller.workspaceId, deletedAt: null });
    if (!skill) throw new RecordNotFoundError("Skill not found");
    return skill;
  }

  /** Renames; type and metadata are never replaced (spec). */
  update(caller: Caller, guid: string, input: { name: string }): StoredSkill {
    const skill = this.get(caller, guid);
    RECORDS.update(this.db, skill.id, { name: input.name, ...updatedBy(caller, this.db.clock.iso()) });
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): StoredSkill {
    const skill = this.get(caller, guid);
    RECORDS.update(this.db, skill.id, { deletedAt: this.db.clock.iso() });
    return skill;
  }

  /**
   * Prompts a Skill. The emulator calls no model: the answer is `[<skill name>] <prompt>`, deterministic
   * so that tests can assert it. Spec: not shown; the emulator's stand-in for the generated text.
   */
  prompt(caller: Caller, guid: string, prompt: string): string {
    return `[${this.get(caller, guid).name}] ${prompt}`;
  }

  private insert(caller: Caller, input: SkillInput): StoredSkill {
    // A metadata entry always carries `value` on the wire; a fixture may leave it out.
    const metadata = input.metadata?.map((entry) => ({ ...entry, value: entry.value ?? null }));
    const id = RECORDS.insert(this.db, {
      ...createdBy(caller, this.db.clock.iso()),
      guid: input.guid ?? newGuid(),
      name: input.name,
      type: input.type,
      metadata,
    });
    return RECORDS.find(this.db, { id })!;
  }
}

/** Opened by the Store as `store.skills` (./module.ts). */
export const skillStore = storeModule(SkillStore, [SKILLS]);
