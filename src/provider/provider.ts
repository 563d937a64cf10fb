/**
 * The dynamic-provider contract, derived once from a kind's field declaration:
 * - check validates every field with zod and reports `{property, reason}`; it never calls the API and
 *   lets the engine's unknown marker through during preview. A required write-only field (a key) may be left
 *   out of an existing object's inputs, since an imported object's cannot be read back; a create or a
 *   replacement without it fails before any call, naming it;
 * - diff compares declared inputs with the stored outputs: no change, no diff, no API call; a changed
 *   replace-only field is listed in `replaces`, and so is the output a kind's `replaceWhen` names for a
 *   stored object it cannot keep (a FineTune whose job failed, a Model linked elsewhere than meant);
 * - create adopts an existing object when `adopt` names one, else creates. A create that made its object
 *   but failed afterwards is reported to the engine as partially created (id and properties, as the
 *   dynamic-provider host forwards them), so state records it, marked incomplete: the next `up` replaces
 *   it (whatever of it is left, which a lost answer may have deleted already), `refresh` reads it whole.
 *   One whose answer was lost and could not be looked up is recorded under a placeholder id with the
 *   time window it may have been created in: refresh adopts what it finds there, and `up` replaces the
 *   placeholder (deleting what it finds). A placeholder never takes an object another resource of the
 *   stack holds: one this process met, or one the engine lists in GMS_STACK_IDS_FILE before it starts;
 *   an object it cannot tell apart from its own is named in a warning, never adopted nor deleted;
 * - read returns the live object as outputs and inputs (empty id when gone); write-only values stay;
 * - update passes only the changed fields to the kind; delete treats 404 as already gone.
 * Every kind also takes `connection` (secret) and `adopt` (a GUID). Another service (base URL) replaces
 * the object; another API key updates in place once both keys are shown to select the same workspace.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { z } from "zod";
import {
  type CreatedCandidate,
  describeTimeout,
  GmsError,
  type GmsClient,
  MayExistError,
  NotFoundError,
  operationTimeout,
  timeLeft,
} from "../client";
import { Connection } from "./connection";
import { failure, goneMessage, redactSecrets, ProviderError, codeOf } from "./errors";
import { type FieldNames, fieldNames } from "./field-names";
import { type InputField, requiredToDeclare } from "./fields";
import { providerLog } from "./log";
import { COMMON_INPUTS, type CheckFailure, type Kind, type Outputs } from "./kind";
import { PROVIDER_KEY } from "./provider-text";
import { listedSecretInputs, SECRET_INPUTS, secretStrings } from "./secret-inputs";
import type { Session } from "./session";
import { containsUnknown, sameValue } from "./values";
import { INCOMPLETE, placeholderId, UNRESOLVED_CREATE } from "./unsettled";
import { LOCAL_CLOCK, type RecordedWindow, serviceWindow, STACK_IDS_FILE } from "./window";
import { Guid } from "../api/common";

type Props = Record<string, unknown>;

/**
 * What a placeholder records: the window its lost create may have made the object in and, for a kind whose
 * object its inputs do not identify (a file-backed Context Source, by its upload), what does.
 */
export interface Placeholder extends RecordedWindow {
  identity?: Record<string, string>;
}

/** What a placeholder recorded beyond its window (see `Placeholder.identity`), read from its stored outputs. */
export const placeholderIdentity = (props: Props): Record<string, string> | undefined =>
  (props[UNRESOLVED_CREATE] as Placeholder | undefined)?.identity;

/**
 * An object a kind's lookup found. `doubt` says why it cannot be told apart from objects the create did not
 * make: such a candidate is named as a possible orphan, never adopted nor deleted.
 */
export interface Candidate extends CreatedCandidate {
  doubt?: string;
}

/** The ids of every resource in the stack's state, as the engine lists them (none when it does not). */
function heldByStack(): ReadonlySet<string> {
  const file = process.env[STACK_IDS_FILE];
  if (!file) return new Set();
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ProviderError(
      "stack_ids_unreadable",
      `${STACK_IDS_FILE} names ${file}, which cannot be read (${(error as Error).message}); without it a placeholder ` +
        "could take another resource's object for its own",
    );
  }
  return new Set(
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== ""),
  );
}

/** How a property changes in a diff: added, updated or deleted, in place or by replacing the object. */
export interface PropertyChange {
  change: "add" | "update" | "delete";
  replace: boolean;
  /** False for a replacement no input explains (an output that says the stored object cannot stay). */
  inputDiff: boolean;
}

/** A diff's decision, with the change of each property that changes. */
export interface DiffDecision {
  changes: boolean;
  replaces: string[];
  deleteBeforeReplace?: boolean;
  detailedDiff: Record<string, PropertyChange>;
}

/**
 * A create that made its object (or may have) but did not finish: the id state records (the object's GUID, or a
 * placeholder's), the properties it records, marked incomplete or unresolved (./unsettled.ts), and why, secrets blanked.
 */
export interface PartialCreate {
  id: string;
  properties: Props;
  message: string;
}

/** A create's outcome: the object, or what was made of it. */
export type CreateOutcome = { id: string; outs: Outputs; partial?: undefined } | { partial: PartialCreate };

/**
 * A kind's provider as the dynamic resources (`resourceProvider`) and the plugin (src/plugin/router.ts) both run it:
 * its clients and claims are the session's (the dynamic-provider host's, the plugin's, a test's). `names` are those its
 * fields mark (./field-names.ts): the secret inputs, blanked from every message with the names each call is told the
 * program passed as secrets, and the write-only ones, whose stored value is the program's.
 */
export function kindProvider(kind: Kind, session: Session, names: FieldNames) {
  const fields = Object.entries(kind.inputs) as [string, InputField][];

  /** The declared fields whose new value differs from the stored one (a left-out field without a default is not managed). */
  const changedFields = (olds: Props, news: Props): string[] =>
    fields
      .filter(([name, field]) => !(news[name] === undefined && field.default === undefined))
      .filter(([name]) => containsUnknown(news[name]) || !sameValue(olds[name], news[name]))
      .map(([name]) => name);

  /** Outputs as stored: declared inputs (write-only ones from the program), then what the API says. */
  const outputsOf = (inputs: Props, record: Outputs): Outputs => {
    const outs: Outputs = {};
    for (const name of Object.keys(kind.inputs)) {
      const value = names.writeOnly.includes(name) || record[name] === undefined ? inputs[name] : record[name];
      if (value !== undefined) outs[name] = value;
    }
    for (const name of Object.keys(kind.outputs)) if (record[name] !== undefined) outs[name] = record[name];
    for (const name of COMMON_INPUTS) if (inputs[name] !== undefined) outs[name] = inputs[name];
    return outs;
  };

  const clientOf = (props: Props) => session.clientFor(props.connection as Connection | undefined);

  /** A new object cannot be made without a required write-only value that the program left out (an imported object's key). */
  const requireForCreate = (inputs: Props, label: string) => {
    const missing = fields.filter(([name, field]) => field.required && (inputs[name] === undefined || inputs[name] === null));
    if (missing.length === 0) return;
    const names = missing.map(([name]) => name).join(" and ");
    throw new ProviderError(
      "required_to_create",
      `${label} needs ${names}: it may be left out only while the object exists (the service never returns it), ` +
        `and this change makes a new ${kind.name}. Declare ${names} in the program.`,
    );
  };

  /** The values of the secret inputs (declared, or made secret by the program), blanked from every message the provider passes on. */
  const secretValues = (secretNames: ReadonlySet<string>, ...props: Props[]): string[] =>
    props.flatMap((each) => secretStrings(each, [...names.secretInputs, ...secretNames]));
  const redacted = (error: unknown, secretNames: ReadonlySet<string>, ...props: Props[]): unknown => {
    const secrets = secretValues(secretNames, ...props);
    return error instanceof Error && secrets.length > 0
      ? Object.assign(new ProviderError(codeOf(error), redactSecrets(error.message, secrets)), { name: error.name })
      : error;
  };

  /** What a create that may have made its object records of it: the object marked incomplete, or a placeholder for it. */
  const partialCreate = (error: MayExistError, inputs: Props, secretNames: ReadonlySet<string>): PartialCreate => {
    const partial = (message: string, id: string, properties: Props): PartialCreate => ({
      id,
      properties,
      message: redactSecrets(message, secretValues(secretNames, inputs)),
    });
    const { made } = error;
    if (made.state === "made") return partial(error.message, made.id, { ...outputsOf(inputs, made.outputs), [INCOMPLETE]: true });
    const { window } = made;
    const message =
      `${error.message} Pulumi records it as possibly created between ${window.since} and ${window.until}: ` +
      "`pulumi refresh` adopts the object if it is there (and forgets it if not); `pulumi up` replaces the placeholder, deleting the object if it is there.";
    return partial(message, placeholderId(randomUUID()), { ...outputsOf(inputs, {}), [UNRESOLVED_CREATE]: window });
  };

  /** Each property that changes, as the plugin shows it: the declared inputs and `connection`, then unexplained replacements. */
  const detailedDiffOf = (olds: Props, news: Props, replaces: readonly string[]): Record<string, PropertyChange> => {
    const detailed: Record<string, PropertyChange> = {};
    const changed = [...changedFields(olds, news), ...(sameValue(olds.connection, news.connection) ? [] : ["connection"])];
    for (const name of changed) {
      const [before, after] = [olds[name], news[name]];
      const change = before === undefined || before === null ? "add" : after === undefined || after === null ? "delete" : "update";
      detailed[name] = { change, replace: replaces.includes(name), inputDiff: true };
    }
    for (const name of replaces) detailed[name] ??= { change: "update", replace: true, inputDiff: false };
    return detailed;
  };

  /**
   * The object a placeholder's lost create made: the one match created in its window that no other resource
   * of the stack holds, or none; several are an error naming them. Candidates nothing tells apart from the
   * object (no creation time and no list taken before the POST, or a kind's doubt) are named in a warning
   * when nothing else matches, and left alone. The match is claimed before anything else can run, so two
   * placeholders resolved at once (a refresh reads in parallel) never take one object.
   */
  const unresolvedObject = async (client: GmsClient, id: string, props: Props, settling: string): Promise<string | undefined> => {
    const window = props[UNRESOLVED_CREATE] as Placeholder;
    let found: Candidate[] = await kind.findCreated(client, props);
    // After the lookup, whose answers carried the service's Date: a window LocalEngine took on its machine's clock is shifted onto the service's.
    const { since, until } = serviceWindow(window, client);
    // The window of a create a killed run had in flight stays open until the service's deadline for it: it may
    // yet receive its object, so the lookup is made again once it has closed, and nothing lands after it. (The
    // provider's own windows close when the client stopped waiting for the deadline: see ../client/create.ts.)
    const open = window.clock === LOCAL_CLOCK ? until - client.serverNow() : 0;
    const bound = operationTimeout();
    if (bound !== undefined && open > timeLeft()) {
      throw new ProviderError(
        "step_timeout",
        `${kind.name} ${id}: a create a killed run had in flight may still land for ${Math.ceil(open / 1000)} s, longer than ` +
          `${describeTimeout(bound)} leaves; run it again once that has passed, or raise the timeout`,
      );
    }
    if (open > 0) {
      await providerLog.info(
        `${kind.name} ${id}: waiting ${Math.ceil(open / 1000)} s for the service's deadline of a create in flight when a run was killed`,
      );
      await sleep(open);
      found = await kind.findCreated(client, props);
    }
    const held = heldByStack();
    const matches: string[] = [];
    const doubtful: { guid: string; doubt: string }[] = [];
    for (const candidate of found) {
      const { guid } = candidate;
      if (held.has(guid) || client.claimed.has(guid) || window.existing?.includes(guid)) continue;
      if (candidate.createdAt) {
        const created = Date.parse(candidate.createdAt);
        if (created < since || created > until) continue;
      } else if (window.existing === undefined) {
        // Without a creation time only the list taken before the POST tells a new object from an old one.
        doubtful.push({ guid, doubt: `the service reports no creation time for a ${kind.name} and no list was taken before the POST` });
        continue;
      }
      if (candidate.doubt) doubtful.push({ guid, doubt: candidate.doubt });
      else matches.push(guid);
    }
    if (matches.length > 1) {
      throw new ProviderError(
        "ambiguous_lost_create",
        `${kind.name}: ${matches.length} objects match the create whose answer was lost ` +
          `(${matches.join(", ")}); delete the ones you do not want, then run \`pulumi refresh\``,
      );
    }
    const guid = matches[0];
    if (guid !== undefined) client.claimed.add(guid);
    else if (doubtful.length > 0) await providerLog.warn(possibleOrphans(id, props, doubtful, settling));
    return guid;
  };

  /** The warning for objects a placeholder may have made but cannot tell apart: each GUID, why, and what to do. */
  const possibleOrphans = (id: string, props: Props, doubtful: { guid: string; doubt: string }[], settling: string): string => {
    const label = typeof props.name === "string" ? ` "${props.name}"` : "";
    const objects = doubtful.map(({ guid, doubt }) => `${guid} (${doubt})`).join(", ");
    return (
      `${kind.name}${label} ${id}: the create whose answer was lost may have made ${doubtful.length === 1 ? "this object" : "one of these objects"}, ` +
      `which nothing tells apart from objects it did not make: ${objects}. ${settling}; Pulumi neither adopts nor deletes ` +
      `${doubtful.length === 1 ? "it. If it is" : "them. If one is"} this resource's, delete it, or adopt it (\`adopt: "<guid>"\`) instead.`
    );
  };

  /** read's answer: the live object as outputs and inputs (write-only values kept), or an empty id when it is gone. */
  const readLive = async (id: string, props: Props) => {
    const client = clientOf(props);
    const guid =
      props[UNRESOLVED_CREATE] === undefined
        ? id
        : await unresolvedObject(client, id, props, "The refresh drops the placeholder without adopting any object");
    const record = guid === undefined ? undefined : await orUndefinedIfGone(kind.read(client, guid, props));
    if (!record || guid === undefined) return { id: "", props: {} };
    client.claimed.add(guid);
    const outs = outputsOf(props, record);
    const inputs: Props = {};
    for (const name of [...Object.keys(kind.inputs), ...COMMON_INPUTS]) if (outs[name] !== undefined) inputs[name] = outs[name];
    return { id: guid, props: outs, inputs };
  };

  return {
    async check(olds: Props, news: Props, secretNames: ReadonlySet<string>) {
      const failures: CheckFailure[] = [];
      const creating = Object.keys(olds).length === 0;
      const inputs: Props = {};
      /** A known value is parsed (failures named by property path); the engine's unknown marker passes as is. */
      const checkValue = (name: string, schema: z.ZodType, value: unknown) => {
        if (containsUnknown(value)) {
          inputs[name] = value;
          return;
        }
        const parsed = schema.safeParse(value);
        if (parsed.success) inputs[name] = parsed.data;
        else
          failures.push(
            ...parsed.error.issues.map((issue) => ({ property: [name, ...issue.path.map(String)].join("."), reason: issue.message })),
          );
      };
      for (const [name, value] of Object.entries(news)) {
        if (name === PROVIDER_KEY || value === undefined || name in kind.inputs || name in kind.outputs) continue;
        if (kind.derived && name in kind.derived) continue;
        if ((COMMON_INPUTS as readonly string[]).includes(name)) continue;
        failures.push({
          property: name,
          reason: `${kind.name} has no property "${name}"; it takes ${[...Object.keys(kind.inputs), ...COMMON_INPUTS].join(", ")}`,
        });
      }
      for (const [name, field] of fields) {
        let value = news[name];
        if ((value === undefined || value === null) && field.default !== undefined) value = field.default;
        if (value === undefined || value === null) {
          if (field.required && (creating || requiredToDeclare(field))) failures.push({ property: name, reason: `${name} is required` });
          if (value === null) inputs[name] = null;
          continue;
        }
        checkValue(name, field.schema, value);
      }
      for (const [name, schema] of [
        ["connection", Connection],
        ["adopt", Guid],
      ] as const) {
        const value = news[name];
        if (value !== undefined && value !== null) checkValue(name, schema, value);
      }
      // No service to reach is found now, not at `up`: the failure names the setting and its three sources.
      if (!containsUnknown(inputs.connection))
        for (const reason of session.missingSettings(inputs.connection as Connection | undefined)) failures.push({ property: "", reason });
      if (failures.length === 0 && kind.validate && !containsUnknown(inputs)) {
        failures.push(...kind.validate(inputs));
      }
      for (const [name, schema] of Object.entries(kind.derived ?? {})) if (news[name] !== undefined) checkValue(name, schema, news[name]);
      const secrets = secretValues(secretNames, news);
      return { inputs, failures: failures.map(({ property, reason }) => ({ property, reason: redactSecrets(reason, secrets) })) };
    },

    async diff(id: string, olds: Props, news: Props): Promise<DiffDecision> {
      // What an interrupted create left is replaced, deleted first (a 404 there is fine): so a placeholder is
      // resolved before any replacement exists that its lookup could take for the lost object.
      for (const marker of [UNRESOLVED_CREATE, INCOMPLETE]) {
        if (olds[marker] !== undefined)
          return { changes: true, replaces: [marker], deleteBeforeReplace: true, detailedDiff: detailedDiffOf(olds, news, [marker]) };
      }
      // The object of a resource in the state is that resource's: a placeholder's lookup never takes it for
      // the object its lost create made (identical objects of one kind differ by nothing else).
      clientOf(olds).claimed.add(id);
      const unusable = kind.replaceWhen?.(olds, news);
      const changed = changedFields(olds, news);
      const replaces = [
        ...changed.filter((name) => kind.inputs[name]!.change === "replace"),
        ...(unusable === undefined ? [] : [unusable]),
      ];
      const connectionChanged = !sameValue(olds.connection, news.connection);
      // Another service is another object: create it there, delete the old one with the old connection.
      const moved =
        connectionChanged &&
        !containsUnknown(news.connection) &&
        session.effectiveBaseUrl(olds.connection as Connection) !== session.effectiveBaseUrl(news.connection as Connection);
      const changes = unusable !== undefined || changed.length > 0 || connectionChanged;
      if (replaces.length > 0 || moved) requireForCreate(news, `Replacing ${kind.name} ${id}`);
      const replacing = moved ? [...replaces, "connection"] : replaces;
      return { changes, replaces: replacing, detailedDiff: detailedDiffOf(olds, news, replacing) };
    },

    async create(inputs: Props, secretNames: ReadonlySet<string>): Promise<CreateOutcome> {
      const client = clientOf(inputs);
      const adopt = inputs.adopt as string | undefined;
      if (!adopt) requireForCreate(inputs, `Creating a ${kind.name}`);
      try {
        const record = adopt
          ? await adoptExisting(kind, client, adopt, inputs, changedFields, names.writeOnly)
          : await kind.create(client, inputs);
        return { id: record.guid as string, outs: outputsOf(inputs, record) };
      } catch (error) {
        if (error instanceof MayExistError) return { partial: partialCreate(error, inputs, secretNames) };
        throw redacted(error, secretNames, inputs);
      }
    },

    async read(id: string, props: Props, secretNames: ReadonlySet<string>) {
      try {
        return await readLive(id, props);
      } catch (error) {
        throw redacted(error, secretNames, props);
      }
    },

    async update(id: string, olds: Props, news: Props, secretNames: ReadonlySet<string>) {
      if (olds[UNRESOLVED_CREATE] !== undefined)
        throw new ProviderError(
          "placeholder_needs_refresh",
          `${kind.name} ${id} is a placeholder for a create whose answer was lost: run \`pulumi refresh\` first`,
        );
      const client = clientOf(news);
      if (!sameValue(olds.connection, news.connection)) await requireSameWorkspace(session, kind, id, clientOf(olds), client, olds);
      const changed = changedFields(olds, news).filter((name) => kind.inputs[name]!.change === "update");
      if (changed.length === 0) return { outs: outputsOf(news, olds) };
      try {
        return { outs: outputsOf(news, await kind.update(client, id, news, new Set(changed), olds)) };
      } catch (error) {
        // A 404 may name something the update refers to; only a read that 404s too means the object is gone.
        if (error instanceof NotFoundError && !(await orUndefinedIfGone(kind.read(client, id, olds)))) {
          throw new ProviderError("gone", goneMessage(kind.name, id));
        }
        // A kind's own explanation passes as it is; a bare client error is worded like the kinds' create failures.
        throw redacted(error instanceof GmsError ? failure(`Cannot update ${kind.name} ${id}`, error) : error, secretNames, news, olds);
      }
    },

    async delete(id: string, props: Props, secretNames: ReadonlySet<string>) {
      const client = clientOf(props);
      // Deleted or not, never a placeholder's (a destroy deletes both at once).
      if (props[UNRESOLVED_CREATE] === undefined) client.claimed.add(id);
      try {
        const guid =
          props[UNRESOLVED_CREATE] === undefined
            ? id
            : await unresolvedObject(client, id, props, "The placeholder is deleted without deleting any object");
        if (guid !== undefined) await orUndefinedIfGone(kind.delete(client, guid, props));
      } catch (error) {
        throw redacted(error instanceof GmsError ? failure(`Cannot delete ${kind.name} ${id}`, error) : error, secretNames, props);
      }
    },
  };
}

/**
 * The dynamic-provider contract over a kind's provider. The names of the inputs the program passed as secrets travel
 * in the inputs and state as `__secretInputs` (./secret-inputs.ts): read from there for the core, and kept in what goes
 * back. A partial create travels as a `MayExistError`, from which the host reads `{message, id, properties, reasons}`, with
 * `__provider` in the properties because the host does not add it there; a diff is answered without its detailed
 * diff, which the host has no place for.
 */
export function resourceProvider(kind: Kind, session: Session): Required<Omit<dynamic.ResourceProvider, "configure">> {
  const provider = kindProvider(kind, session, fieldNames(kind));
  /** `values` with the secret inputs `from` lists, when it lists any. */
  const listing = <T extends Props>(values: T, from: Props): T =>
    from[SECRET_INPUTS] === undefined ? values : { ...values, [SECRET_INPUTS]: from[SECRET_INPUTS] };
  return {
    async check(olds: Props, news: Props) {
      const { [SECRET_INPUTS]: listed, ...declared } = news;
      const result = await provider.check(olds, declared, listedSecretInputs(news));
      return Array.isArray(listed) ? { ...result, inputs: { ...result.inputs, [SECRET_INPUTS]: listed } } : result;
    },
    async diff(id: string, olds: Props, news: Props) {
      const { detailedDiff: _shownByThePluginOnly, ...decision } = await provider.diff(id, olds, news);
      return decision;
    },
    async create(inputs: Props) {
      const outcome = await provider.create(inputs, listedSecretInputs(inputs));
      if (!outcome.partial) return { id: outcome.id, outs: listing(outcome.outs, inputs) };
      const { id, properties, message } = outcome.partial;
      throw new MayExistError(message, {
        state: "made",
        id,
        outputs: { ...listing(properties, inputs), [PROVIDER_KEY]: inputs[PROVIDER_KEY] },
      });
    },
    async read(id: string, props: Props) {
      const result = await provider.read(id, props, listedSecretInputs(props));
      return result.id === "" ? result : { ...result, props: listing(result.props, props), inputs: listing(result.inputs ?? {}, props) };
    },
    async update(id: string, olds: Props, news: Props) {
      const { outs } = await provider.update(id, olds, news, listedSecretInputs(news, olds));
      return { outs: listing(outs, news) };
    },
    delete: (id: string, props: Props) => provider.delete(id, props, listedSecretInputs(props)),
  };
}

/**
 * A new API key for the same service may select another workspace, where this object does not exist.
 * Both keys' workspaces are compared (one cached read per key and process); when the old key no longer
 * works (rotated and revoked), the object itself is read with the new key.
 */
async function requireSameWorkspace(
  session: Session,
  kind: Kind,
  id: string,
  before: GmsClient,
  after: GmsClient,
  state: Props,
): Promise<void> {
  if (before === after) return;
  const same = await session.sameWorkspace(before, after);
  if (same === true || (same === undefined && (await orUndefinedIfGone(kind.read(after, id, state))) !== undefined)) return;
  throw new ProviderError(
    "wrong_workspace",
    `${kind.name} ${id} lives in another workspace than the one the new connection's API key selects; an object cannot move between workspaces in place. ` +
      "Keep the key of its workspace, or declare the resource under a new name so that Pulumi creates it in the new workspace and deletes this one.",
  );
}

/**
 * Adopting instead of creating (the engine's import does not work for dynamic resources): the object
 * must exist, its replace-only fields must already match the program, the rest is updated to it.
 */
async function adoptExisting(
  kind: Kind,
  client: GmsClient,
  guid: string,
  inputs: Props,
  changedFields: (olds: Props, news: Props) => string[],
  writeOnly: readonly string[],
): Promise<Outputs> {
  // The declared inputs stand in for the state a read usually gets (e.g. the parent a child lives under).
  const live = await orUndefinedIfGone(kind.read(client, guid, inputs));
  if (!live) throw new ProviderError("adopt_not_found", `Cannot adopt ${kind.name} ${guid}: no such object in the workspace`);
  const changed = changedFields(live, inputs).filter((name) => live[name] !== undefined && !writeOnly.includes(name));
  const mismatched = changed.filter((name) => kind.inputs[name]!.change === "replace");
  if (mismatched.length > 0) {
    throw new ProviderError(
      "adopt_mismatch",
      `Cannot adopt ${kind.name} ${guid}: ${mismatched.join(", ")} ${mismatched.length === 1 ? "differs" : "differ"} ` +
        `from the program and cannot be changed in place; declare the existing value or let Pulumi create a new object`,
    );
  }
  return changed.length > 0 ? { ...live, ...(await kind.update(client, guid, inputs, new Set(changed), live)) } : live;
}

/** 404 means the object is gone: read reports an empty id, delete succeeds. */
async function orUndefinedIfGone<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
