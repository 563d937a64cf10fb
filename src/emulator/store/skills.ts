import { z } from "zod";
import { type RawRow, integer, json, nullable, table, text } from "./columns";
import type { Database } from "./database";
import { RecordNotFoundError } from "./errors";
import { type Audited, type Caller, RECORD_COLUMNS, audited, newGuid, toJson } from "./records";
import type { WorkspaceStore } from "./workspaces";

export interface SkillMetadataEntry {
  name: string;
  required: boolean;
  value: unknown;
  type?: string | undefined;
}

export interface SkillRecord extends Audited {
  id: number;
  guid: string;
  name: string;
  type: string;
  metadata: SkillMetadataEntry[] | null;
}

/** A Skill type and the metadata definitions (name, required, value type) its Skills use. */
export interface SkillTypeRecord {
  name: string;
  metadata: { name: string; required: boolean; type: string | null }[];
}

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

export class SkillStore {
  constructor(
    private readonly db: Database,
    /** The other stores this one calls (the `Store` itself, read when called). */
    private readonly store: { readonly workspaces: WorkspaceStore },
  ) {}

  /** Every non-deleted Skill of the workspace, oldest first: Skill lists ignore paging (spec). */
  list(caller: Caller): SkillRecord[] {
    return this.db.all("SELECT * FROM skills WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id", caller.workspaceId).map(toRecord);
  }

  /**
   * The distinct types of the workspace's Skills, each with the metadata definitions of its Skills (by
   * entry name, first seen wins). Spec: shape not shown; the emulator derives types from existing Skills.
   */
  listTypes(caller: Caller): SkillTypeRecord[] {
    const types = new Map<string, Map<string, SkillTypeRecord["metadata"][number]>>();
    for (const skill of this.list(caller)) {
      const definitions = types.get(skill.type) ?? new Map<string, SkillTypeRecord["metadata"][number]>();
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
  create(caller: Caller, input: SkillInput): SkillRecord {
    return this.db.transaction(() => {
      const namesake = this.db.get(
        "SELECT 1 FROM skills WHERE workspace_id = ? AND name = ? AND deleted_at IS NULL",
        caller.workspaceId,
        input.name,
      );
      if (!namesake) throw new RecordNotFoundError("Type not found");
      this.store.workspaces.reserve(caller, "skills");
      return this.insert(caller, input);
    });
  }

  /**
   * A pre-configured Skill (fixtures): new Skills are configured outside the public interface. It is an
   * ordinary Skill of the workspace and counts towards usage, but fixtures are not refused by the limit.
   */
  createConfigured(caller: Caller, input: SkillInput): SkillRecord {
    return this.insert(caller, input);
  }

  /** A non-deleted Skill of the caller's workspace; anything else is 404 `Skill not found`. */
  get(caller: Caller, guid: string): SkillRecord {
    const row = this.db.get("SELECT * FROM skills WHERE guid = ? AND workspace_id = ? AND deleted_at IS NULL", guid, caller.workspaceId);
    if (!row) throw new RecordNotFoundError("Skill not found");
    return toRecord(row);
  }

  /** Renames; type and metadata are never replaced (spec). */
  update(caller: Caller, guid: string, input: { name: string }): SkillRecord {
    const skill = this.get(caller, guid);
    this.db.run(
      "UPDATE skills SET name = ?, updated_at = ?, last_updated_by_id = ? WHERE id = ?",
      input.name,
      this.db.clock.iso(),
      caller.userId,
      skill.id,
    );
    return this.get(caller, guid);
  }

  softDelete(caller: Caller, guid: string): SkillRecord {
    const skill = this.get(caller, guid);
    this.db.run("UPDATE skills SET deleted_at = ? WHERE id = ?", this.db.clock.iso(), skill.id);
    return skill;
  }

  /**
   * Prompts a Skill. The emulator calls no model: the answer is `[<skill name>] <prompt>`, deterministic
   * so that tests can assert it. Spec: not shown; the emulator's stand-in for the generated text.
   */
  prompt(caller: Caller, guid: string, prompt: string): string {
    return `[${this.get(caller, guid).name}] ${prompt}`;
  }

  private insert(caller: Caller, input: SkillInput): SkillRecord {
    const stamp = this.db.clock.iso();
    // A metadata entry always carries `value` on the wire; a fixture may leave it out.
    const metadata = input.metadata?.map((entry) => ({ ...entry, value: entry.value ?? null }));
    const id = this.db.run(
      `INSERT INTO skills (guid, workspace_id, name, type, metadata, created_at, updated_at, created_by_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      input.guid ?? newGuid(),
      caller.workspaceId,
      input.name,
      input.type,
      toJson(metadata),
      stamp,
      stamp,
      caller.userId,
    );
    return toRecord(this.db.get("SELECT * FROM skills WHERE id = ?", id)!);
  }
}

function toRecord(raw: RawRow): SkillRecord {
  const row = SKILLS.decode(raw);
  const metadata: SkillMetadataEntry[] | null = row.metadata;
  return { id: row.id, guid: row.guid, name: row.name, type: row.type, metadata, ...audited(row) };
}
