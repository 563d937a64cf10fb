/**
 * The drift report of the scheduled `refresh` job: what the service holds against what the program declares, as
 * `drift.json` (for a machine) and `drift.md` (for a person, as a pull-request comment).
 *
 * Pure functions, in two steps. `driftFacts` reads the facts from the engine events the Automation API gives
 * (`onEvent`) of the refresh and of the preview after it, and from what `pulumi-gms discover --stack --json` listed;
 * `renderDriftJson` and `renderDriftMarkdown` turn those facts into the two documents.
 *
 * Three kinds of drift:
 *   - a field the program declares changed in the service: the preview's `update`/`replace` step names it in its
 *     `detailedDiff`; the service's value is in the step's old state (read by the refresh), the program's in its new
 *     inputs. The next `up` puts it back.
 *   - an object deleted outside Pulumi: the refresh drops it from the state and the preview plans its `create`. The
 *     next `up` makes it again (with a new GUID).
 *   - an object of the workspace that the stack does not manage (made in the console, or by another tool): the next
 *     `up` leaves it; it stays until someone deletes it or imports it.
 *
 * Secret values never reach either document: the engine's events already show them as "[secret]", and any value
 * that is a secret envelope or holds one of the secrets the caller names is written as "[secret]" too.
 */

/** What this file reads of the Automation API's `EngineEvent` (`@pulumi/pulumi/automation`, events.d.ts). */
export interface StepState {
  type: string;
  urn: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

export interface StepMetadata {
  op: string;
  urn: string;
  type: string;
  old?: StepState;
  new?: StepState;
  diffs?: string[];
  /** The fields whose change replaces the resource. */
  keys?: string[];
  detailedDiff?: Record<string, { diffKind: string; inputDiff?: boolean }>;
}

export interface StepEvent {
  resourcePreEvent?: { metadata: StepMetadata };
  resOutputsEvent?: { metadata: StepMetadata };
}

/** What `pulumi-gms discover --json` prints that the report uses: the objects the stack does not manage. */
export interface DiscoverListing {
  document: { resources: { type: string; name: string; id: string }[] };
}

/** A field the program declares that holds another value in the service. */
export interface ChangedField {
  /** The resource's name in the program. */
  resource: string;
  kind: string;
  id: string;
  /** The property path, as Pulumi names it (`name`, `splitterConfig.chunkSize`, `evalTypes[0].guid`). */
  field: string;
  service: unknown;
  program: unknown;
  /** The next `up` puts the program's value back; `replaces` when it does so by replacing the object. */
  putBack: true;
  replaces: boolean;
}

/** An object of the stack that the service no longer holds. */
export interface DeletedObject {
  resource: string;
  kind: string;
  /** The GUID it had; the next `up` makes it again with a new one. */
  id: string;
  putBack: true;
}

/** An object of the workspace that the stack does not manage. */
export interface UnmanagedObject {
  /** The resource name `pulumi import` would give it (`pulumi-gms discover`: made from the object's own name). */
  importName: string;
  kind: string;
  id: string;
  putBack: false;
}

export interface DriftFacts {
  stack: string;
  /** When the refresh ran (ISO 8601). */
  checkedAt: string;
  changedFields: ChangedField[];
  deleted: DeletedObject[];
  /** Undefined when the listing failed: `unmanagedError` says why. */
  unmanaged?: UnmanagedObject[];
  unmanagedError?: string;
}

export interface DriftSources {
  stack: string;
  checkedAt: string;
  refreshEvents: StepEvent[];
  previewEvents: StepEvent[];
  /** The discover listing, or why there is none. */
  discover: DiscoverListing | { error: string };
  /** Values that must never be written (the API key, a provider key): masked as "[secret]" wherever they appear. */
  secrets?: string[];
}

const SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d";
/** How a secret value is written in every report. */
export const SECRET = "[secret]";
/** What a preview shows for a value the program computes during `up` (an output of another resource). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** How a value the program computes during `up` is written in every report. */
export const KNOWN_AFTER_UP = "[known after up]";

/** Only resources the program declares: not the stack, not the providers. */
export const isProgramResource = (type: string) => type !== "pulumi:pulumi:Stack" && !type.startsWith("pulumi:providers:");

/** `pulumi-nodejs:dynamic/gms:Workflow` and `gms:index:Workflow` alike: `Workflow`. */
export const kindOf = (type: string) => type.slice(type.lastIndexOf(":") + 1);

/** The resource's name in the program: the URN's last part. */
export const resourceName = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

const metadataOf = (event: StepEvent) => event.resourcePreEvent?.metadata ?? event.resOutputsEvent?.metadata;

/** The value at a Pulumi property path (`a.b`, `a[0].b`, `["a.b"]`), or undefined. */
export function valueAt(value: unknown, path: string): unknown {
  const parts = [...path.matchAll(/\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|([^.[\]]+)/g)].map(([, index, quoted, plain]) =>
    index !== undefined ? Number(index) : (quoted ?? plain!),
  );
  let here = value;
  for (const part of parts) {
    if (here === null || typeof here !== "object") return undefined;
    here = (here as Record<string | number, unknown>)[part];
  }
  return here;
}

/** The value with every secret replaced by "[secret]". */
export function masked(value: unknown, secrets: readonly string[] = []): unknown {
  if (value === UNKNOWN) return KNOWN_AFTER_UP;
  if (typeof value === "string") return secrets.some((secret) => secret !== "" && value.includes(secret)) ? SECRET : value;
  if (Array.isArray(value)) return value.map((each) => masked(each, secrets));
  if (value !== null && typeof value === "object") {
    if (SECRET_SIGNATURE in value) return SECRET;
    return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, masked(each, secrets)]));
  }
  return value;
}

/**
 * The fields a step changes: its `diffs`, else, for a provider that answers a diff without naming the fields (the
 * dynamic providers), the inputs whose old value (the service's, after the refresh) differs from the program's, as
 * the CLI's own display finds them.
 */
export function changedKeys(step: StepMetadata): string[] {
  if (step.diffs && step.diffs.length > 0) return step.diffs;
  const olds = step.old?.inputs ?? {};
  const news = step.new?.inputs ?? {};
  return [...new Set([...Object.keys(news), ...Object.keys(olds)])].filter(
    (key) => JSON.stringify(olds[key] ?? null) !== JSON.stringify(news[key] ?? null),
  );
}

/** The steps of a preview that change a field: `update` and `replace` (a replacement's other steps repeat it). */
const FIELD_STEPS = new Set(["update", "replace"]);

/** The facts of one refresh and the preview after it. */
export function driftFacts(sources: DriftSources): DriftFacts {
  const secrets = sources.secrets ?? [];
  const clean = (value: unknown) => masked(value, secrets);

  // What the state held before the refresh, and what the refresh found gone.
  const known = new Map<string, StepState>();
  const gone = new Set<string>();
  for (const event of sources.refreshEvents) {
    const step = metadataOf(event);
    if (!step || !isProgramResource(step.type)) continue;
    if (step.old) known.set(step.urn, step.old);
    if (event.resOutputsEvent && (step.op === "delete" || (step.op === "refresh" && step.old && !step.new?.id))) gone.add(step.urn);
  }

  const changedFields: ChangedField[] = [];
  const seen = new Set<string>();
  const deleted = new Map<string, DeletedObject>();
  for (const event of sources.previewEvents) {
    const step = event.resourcePreEvent?.metadata;
    if (!step || !isProgramResource(step.type)) continue;
    if (step.op === "create" && known.has(step.urn)) gone.add(step.urn);
    if (!FIELD_STEPS.has(step.op)) continue;
    const diffs = step.detailedDiff ?? Object.fromEntries(changedKeys(step).map((field) => [field, { diffKind: "update" }]));
    for (const [field, { diffKind }] of Object.entries(diffs)) {
      // The dynamic provider's own inputs (`__provider`) are not the program's.
      if (field.startsWith("__") || seen.has(`${step.urn}\0${field}`)) continue;
      seen.add(`${step.urn}\0${field}`);
      const service = valueAt(step.old?.outputs, field) ?? valueAt(step.old?.inputs, field);
      changedFields.push({
        resource: resourceName(step.urn),
        kind: kindOf(step.type),
        id: step.old?.id ?? "",
        field,
        service: clean(service ?? null),
        program: clean(valueAt(step.new?.inputs, field) ?? null),
        putBack: true,
        replaces: step.op === "replace" || diffKind.endsWith("-replace"),
      });
    }
  }
  for (const urn of gone) {
    const old = known.get(urn);
    deleted.set(urn, {
      resource: resourceName(urn),
      kind: kindOf(old?.type ?? urn.split("::")[2] ?? ""),
      id: old?.id ?? "",
      putBack: true,
    });
  }

  const unmanaged =
    "error" in sources.discover
      ? undefined
      : sources.discover.document.resources.map(
          (entry): UnmanagedObject => ({ importName: String(clean(entry.name)), kind: kindOf(entry.type), id: entry.id, putBack: false }),
        );
  return {
    stack: sources.stack,
    checkedAt: sources.checkedAt,
    changedFields,
    deleted: [...deleted.values()],
    ...(unmanaged ? { unmanaged } : { unmanagedError: String(clean((sources.discover as { error: string }).error)) }),
  };
}

/** Whether the next `up` has anything to put back: what `--fail-on-drift` fails on. Unmanaged objects are not. */
export const hasDrift = (facts: DriftFacts) => facts.changedFields.length > 0 || facts.deleted.length > 0;

/** `drift.json`: the facts, with their counts. */
export function renderDriftJson(facts: DriftFacts): string {
  const summary = {
    drifted: hasDrift(facts),
    changedFields: facts.changedFields.length,
    changedResources: new Set(facts.changedFields.map((change) => change.resource)).size,
    deleted: facts.deleted.length,
    unmanaged: facts.unmanaged?.length ?? null,
  };
  const { stack, checkedAt, ...found } = facts;
  return `${JSON.stringify({ stack, checkedAt, summary, ...found }, null, 2)}\n`;
}

export const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** A value in a table cell: as JSON in a code span, shortened, with nothing that breaks the table. */
export function cell(value: unknown): string {
  if (value === SECRET || value === KNOWN_AFTER_UP) return value;
  let text = value === undefined ? "null" : JSON.stringify(value);
  if (text.length > 80) text = `${text.slice(0, 77)}...`;
  text = text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
  const fence = text.includes("`") ? "``" : "`";
  return `${fence}${fence === "``" ? ` ${text} ` : text}${fence}`;
}

const name = (text: string) => text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");

const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");

/** `drift.md`: a heading, one line of counts, and a table per kind of drift; reads as a pull-request comment. */
export function renderDriftMarkdown(facts: DriftFacts): string {
  const changedResources = new Set(facts.changedFields.map((change) => change.resource)).size;
  const counts = [
    `${plural(facts.changedFields.length, "field", "fields")} changed on ${plural(changedResources, "resource", "resources")}`,
    `${plural(facts.deleted.length, "object", "objects")} deleted outside Pulumi`,
    facts.unmanaged === undefined
      ? "objects not managed by the stack: not listed"
      : `${plural(facts.unmanaged.length, "object", "objects")} of the workspace not managed by the stack`,
  ];
  const putBack = [
    ...(facts.changedFields.length > 0 ? ["puts the program's values back"] : []),
    ...(facts.deleted.length > 0 ? ["makes the deleted objects again"] : []),
  ];
  const verdict = hasDrift(facts) ? `The next \`up\` ${putBack.join(" and ")}.` : "The service holds what the program declares.";
  const lines = [`## Drift report: stack \`${facts.stack}\``, "", `**${counts.join(" · ")}.** ${verdict}`, ""];

  lines.push("### Fields changed outside Pulumi", "");
  if (facts.changedFields.length === 0) lines.push("None.");
  else
    lines.push(
      table(
        ["Resource", "Kind", "Field", "Service holds", "Program declares", "Put back by `up`"],
        facts.changedFields.map((change) => [
          name(change.resource),
          change.kind,
          `\`${name(change.field)}\``,
          cell(change.service),
          cell(change.program),
          change.replaces ? "yes, by replacing the object" : "yes",
        ]),
      ),
    );

  lines.push("", "### Objects deleted outside Pulumi", "");
  if (facts.deleted.length === 0) lines.push("None.");
  else
    lines.push(
      table(
        ["Resource", "Kind", "GUID it had", "Put back by `up`"],
        facts.deleted.map((gone) => [name(gone.resource), gone.kind, `\`${gone.id}\``, "yes, made again (with a new GUID)"]),
      ),
    );

  lines.push("", "### Objects the stack does not manage", "");
  if (facts.unmanaged === undefined) lines.push(`Not listed: ${name(facts.unmanagedError ?? "unknown reason")}.`);
  else if (facts.unmanaged.length === 0) lines.push("None.");
  else
    lines.push(
      table(
        ["Object (its import name)", "Kind", "GUID", "Put back by `up`"],
        facts.unmanaged.map((object) => [
          name(object.importName),
          object.kind,
          `\`${object.id}\``,
          "no: it stays (delete it, or import it with `pulumi-gms discover`)",
        ]),
      ),
    );
  lines.push("", `<sub>Checked ${facts.checkedAt} by \`node pipeline.ts refresh\`.</sub>`, "");
  return lines.join("\n");
}
