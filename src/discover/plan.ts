/**
 * What discover makes of a workspace's objects: the `pulumi import --file` document (type token, name, GUID, and the
 * inputs the workspace shows that the service never returns), what it leaves out and why, the config keys to set
 * for the values it cannot know (keys), and notes. A pure function of the listed objects, so that tests can check
 * it as data.
 *
 * Left out: the objects the stack already manages (`--stack`), those the selection does not pick (`--kind`, `--name`,
 * `--exclude`: ./select.ts), and configured Skills. The service creates a Skill
 * only under the name of one that exists, as a copy of it; Skills themselves are configured outside the public
 * interface. The oldest Skill of each name is taken to be that configured one: a program could never create it
 * again once deleted, so it stays out of reach of `pulumi destroy`. Later Skills of its name are copies made
 * through the API, which a program can make again while it stays, and are imported.
 */
import { KIND_NAMES, type KindName, kinds } from "../resources";
import { nativeToken } from "../provider/tokens";
import type { ListedObject } from "./list";
import { assignNames } from "./names";
import type { Language } from "./program";
import { leftOutBy, type Selection } from "./select";
import type { ManagedObjects } from "./stack";
import { configKeys, evidentValue, requiredToCreateOnly } from "./write-only";

export interface ImportEntry {
  type: string;
  name: string;
  id: string;
  /** Values the service never returns that the workspace shows elsewhere: stored in state, written in the generated code. */
  inputs?: Record<string, unknown>;
}

/** The inputs the service shows of each object to adopt, by GUID: the fields the plugin's read of an import returns (./adopt). */
export type LiveInputs = Map<string, Record<string, unknown>>;

export interface LeftOut {
  /** Why, for a machine: already managed by the stack, not picked by the selection, or a configured Skill. */
  code: "managed" | "not-picked" | "configured-skill";
  type: string;
  /** The object's own name. */
  object: string;
  /** The resource name it would have had. */
  name: string;
  guid: string;
  reason: string;
}

/** A secret the program needs to create an object anew, read from config. */
export interface ConfigKey {
  /** The resource's name in the import. */
  resource: string;
  type: string;
  property: string;
  configKey: string;
  /** Run it, and give the value when the CLI asks. */
  setCommand: string;
  /** Which object's key it is, and where its value comes from. */
  about: string;
  /** The line that reads it, to add to the resource's declaration in the code `pulumi import` wrote. */
  programLine: string;
  /** Where that line goes. */
  where: string;
}

export interface Note {
  resource: string;
  type: string;
  property?: string;
  note: string;
}

/** What every imported object of a kind cannot get back once a program deletes it. */
export interface Caveat {
  type: string;
  resources: string[];
  caveat: string;
}

export interface Discovery {
  workspace: { guid: string; name: string };
  /** How many objects of each kind the workspace holds. */
  listed: Record<KindName, number>;
  /** The document for `pulumi import --file`. */
  document: { resources: ImportEntry[] };
  leftOut: LeftOut[];
  configKeys: ConfigKey[];
  notes: Note[];
  caveats: Caveat[];
  /** What the workspace holds that is not a resource, and so never imported. */
  notResources: string;
  /** The project's language the lines are written in, and what its program needs once to read config. */
  language: { runtime: string; assumed?: string; preamble?: string };
  /** The commands to run next, in order. */
  next: string[];
}

export interface DiscoveryOptions {
  workspace: { guid: string; name: string };
  /** What the stack the import goes into manages (`--stack`). */
  managed?: ManagedObjects;
  /** What to adopt (`--kind`, `--name`, `--exclude`); everything when undefined. */
  selection?: Selection;
  language: Language;
  /** Why the language is assumed, when it is not the project's. */
  assumedLanguage?: string;
  /** The import document's path, as the commands to run next name it. */
  file: string;
}

export const NOT_RESOURCES =
  "Actions, Contexts, Data records and Eval types are not resources but lookups (Actions, Contexts and Eval types are " +
  "configured outside the public interface; Data records log generations): they are not imported, and the generated code " +
  "names them by GUID (a program may look them up instead: gms:index:getAction, getContext, getDataRecords, getEvalType). " +
  "Sessions, Feedback and Documents are not managed by the provider either.";

const CONFIGURED_SKILL =
  "a configured Skill: Skills are configured outside the public interface, and the service creates a Skill under this name " +
  "only as a copy of this one, so no program could create it again once deleted; left out so that pulumi destroy never deletes it";

/** Date order, a missing or unreadable time after any other (the service lists oldest first: the first listed wins a tie). */
const createdAt = (object: ListedObject) => Date.parse(String(object.record.createdAt ?? "")) || Number.POSITIVE_INFINITY;

/** The GUIDs of the configured Skills: the oldest of each name (see the top of this file). */
function configuredSkills(objects: readonly ListedObject[]): Set<string> {
  const oldest = new Map<string, ListedObject>();
  for (const skill of objects.filter((object) => object.kind === "Skill")) {
    const first = oldest.get(skill.name);
    if (!first || createdAt(skill) < createdAt(first)) oldest.set(skill.name, skill);
  }
  return new Set([...oldest.values()].map((skill) => skill.guid));
}

/** A key's `pulumi config set --secret` line as printed, with a comment saying which object's key it is and where it comes from. */
export const explainedSetCommand = (key: ConfigKey, setCommand = key.setCommand): string => `${setCommand}   # ${key.about}`;

export function planDiscovery(objects: readonly ListedObject[], options: DiscoveryOptions): Discovery {
  const { managed, language } = options;
  const stackFlag = managed ? ` --stack ${managed.stack}` : "";
  const names = assignNames(objects, managed?.names);
  const configured = configuredSkills(objects);
  const listed = Object.fromEntries(KIND_NAMES.map((kind) => [kind, 0])) as Record<KindName, number>;
  const leftOut: LeftOut[] = [];
  const included: ListedObject[] = [];
  for (const object of objects) {
    listed[object.kind] += 1;
    const type = nativeToken(object.kind);
    const name = names.get(object.guid)!;
    const left = { type, object: object.name, name, guid: object.guid };
    const urn = managed?.urns.get(object.guid);
    const unpicked = options.selection && leftOutBy(options.selection, object);
    if (managed && urn) leftOut.push({ code: "managed", ...left, reason: `managed by stack ${managed.stack} as ${urn}` });
    else if (unpicked) leftOut.push({ code: "not-picked", ...left, reason: `not picked: ${unpicked}` });
    else if (configured.has(object.guid)) {
      const command = `pulumi import ${type} ${name} ${object.guid}${stackFlag}`;
      leftOut.push({ code: "configured-skill", ...left, reason: `${CONFIGURED_SKILL} (to manage it all the same: ${command})` });
    } else included.push(object);
  }
  // By code point, not by locale: the same order on every machine.
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  included.sort((a, b) => KIND_NAMES.indexOf(a.kind) - KIND_NAMES.indexOf(b.kind) || byName(names.get(a.guid)!, names.get(b.guid)!));

  const secrets: { resource: string; guid: string; property: string; type: string; object: string }[] = [];
  const notes: Note[] = [];
  const resources = included.map((object): ImportEntry => {
    const entry: ImportEntry = { type: nativeToken(object.kind), name: names.get(object.guid)!, id: object.guid };
    for (const [property, field] of requiredToCreateOnly(object.kind)) {
      const where = { resource: entry.name, type: entry.type, property };
      if (field.secret) {
        secrets.push({ ...where, guid: object.guid, object: `${object.kind} "${object.name}"` });
        continue;
      }
      const evident = evidentValue(object, property, objects);
      if (evident === undefined) {
        notes.push({
          ...where,
          note:
            `${property} is never returned by the service, so the generated code leaves it out (the object keeps its value): ` +
            `declare it before the program has to create the ${object.kind} anew`,
        });
      } else {
        entry.inputs = { ...entry.inputs, [property]: evident.value };
        notes.push({
          ...where,
          note:
            `${property} ${JSON.stringify(evident.value)}, as ${evident.shownBy} (the service never returns it): ` +
            "the import records it, and the generated code declares it",
        });
      }
    }
    return entry;
  });
  const caveats = KIND_NAMES.flatMap((kind) => {
    const caveat = kinds[kind].lostOnDelete;
    const affected = resources.filter((entry) => entry.type === nativeToken(kind)).map((entry) => entry.name);
    return caveat !== undefined && affected.length > 0 ? [{ type: nativeToken(kind), resources: affected, caveat }] : [];
  });

  const keys = configKeys(secrets);
  const configKeyList = secrets.map(({ resource, type, property, guid, object }): ConfigKey => {
    const configKey = keys.get(`${resource}.${property}`)!;
    return {
      resource,
      type,
      property,
      configKey,
      setCommand: `pulumi config set --secret ${configKey}${stackFlag}`,
      about:
        `the ${property} ${object} (${guid}) was made with: the service never returns it, so take it from where your team ` +
        "keeps it (the CLI asks for it)",
      programLine: language.secretConfigLine(property, configKey),
      where: language.where(resource),
    };
  });

  const next = [
    `pulumi import --file ${options.file} --out imported.${language.extension}${stackFlag}`,
    ...configKeyList.map((key) => explainedSetCommand(key)),
    `pulumi preview --expect-no-changes${stackFlag}`,
  ];
  return {
    workspace: options.workspace,
    listed,
    document: { resources },
    leftOut,
    configKeys: configKeyList,
    notes,
    caveats,
    notResources: NOT_RESOURCES,
    language: {
      runtime: language.runtime,
      ...(options.assumedLanguage ? { assumed: options.assumedLanguage } : {}),
      ...(configKeyList.length > 0 && language.preamble ? { preamble: language.preamble } : {}),
    },
    next,
  };
}
