/**
 * The plugin's resources: a router by type token (`gms:index:<Kind>`) over the kinds, each served by the
 * same generic provider the dynamic resources use (`providerOf`, src/provider/provider.ts). Nothing of a
 * kind's logic is here; what is here is what a native provider owes the engine beyond the dynamic contract:
 * - secrets arrive wrapped (the plugin accepts secrets): the kinds get plain values, and the generic provider the
 *   names of the inputs that held a secret, so every message is blanked as the dynamic resources' are; what goes
 *   back is wrapped as secret when it is a declared secret field, the `connection`, or was secret when it came in;
 * - diff answers with the detailed diff the generic provider decides, property by property, in the engine's kinds;
 * - create and update in preview answer without a call, computed outputs unknown;
 * - read with an id and no properties (`pulumi import`) reads the object by its GUID alone. A write-only
 *   value (a key) cannot be read back: the outputs list such fields in `__unknownWriteOnly`, and diff takes the
 *   program's value for them, so the imported resource shows no diff against a program declaring its values.
 */
import { deprecationWarnings, formerTokens } from "../provider/deprecation";
import { MayExistError } from "../client";
import { type FieldNames, fieldNames } from "../provider/field-names";
import { DYNAMIC_ONLY_INPUTS, type Kind } from "../provider/kind";
import { kindProvider, type PropertyChange } from "../provider/provider";
import { INCOMPLETE, UNRESOLVED_CREATE } from "../provider/unsettled";
import type { Session } from "../provider/session";
import { kinds } from "../resources";
import { conceal, type Props, reveal, UNKNOWN } from "./wire";
import { nativeToken } from "../provider/tokens";

/** The output listing the write-only fields whose values state does not know (an imported object's keys). */
export const UNKNOWN_WRITE_ONLY = "__unknownWriteOnly";

/** How the engine names a property's change (pulumirpc.PropertyDiff.Kind). */
export const PropertyDiffKind = { ADD: 0, ADD_REPLACE: 1, DELETE: 2, DELETE_REPLACE: 3, UPDATE: 4, UPDATE_REPLACE: 5 } as const;
export type PropertyDiffKind = (typeof PropertyDiffKind)[keyof typeof PropertyDiffKind];
const DIFF_KIND_OF = { add: "ADD", update: "UPDATE", delete: "DELETE" } as const satisfies Record<PropertyChange["change"], string>;

export interface CheckResult {
  inputs: Props;
  failures: { property: string; reason: string }[];
  /** What the engine shows the program's author: its use of what is deprecated (src/provider/deprecation.ts). */
  warnings: string[];
}
export interface DiffResult {
  changes: boolean;
  replaces: string[];
  deleteBeforeReplace: boolean;
  detailedDiff: Record<string, { kind: PropertyDiffKind; inputDiff: boolean }>;
}
export interface ReadResult {
  id: string;
  properties?: Props;
  inputs?: Props;
}

/** Why the plugin refuses an input only the dynamic resources take, and what to do instead. */
export const dynamicOnlyReason = (kind: string, property: string) =>
  `${property} is an input of the Node.js dynamic resources (gms.${kind}) only: on the provider plugin, bring an existing ` +
  `object in with the import resource option (import: "<guid>") or \`pulumi import ${nativeToken(kind)} <name> <guid>\``;

export class UnknownTypeError extends Error {
  override readonly name = "UnknownTypeError";
}

/** One kind as the plugin serves it. */
export class KindRoute {
  readonly name: string;
  /** The names the kind's fields mark: what the engine always holds as secret, which inputs are write-only. */
  private readonly names: FieldNames;
  private readonly provider: ReturnType<typeof kindProvider>;

  constructor(
    private readonly kind: Kind,
    session: Session,
  ) {
    this.name = kind.name;
    this.names = fieldNames(kind);
    this.provider = kindProvider(kind, session, this.names);
  }

  /** What goes back to the engine: secrets wrapped, those it always holds as secret and those that came in so. */
  private forEngine(props: Props, secretNames: ReadonlySet<string>): Props {
    return conceal(props, new Set([...this.names.alwaysSecret, ...secretNames]));
  }

  /** Stored outputs with the program's value standing in for each write-only value state does not know. */
  private withKnownWriteOnly(olds: Props, news: Props): Props {
    const unknown = olds[UNKNOWN_WRITE_ONLY];
    if (!Array.isArray(unknown)) return olds;
    const filled: Props = { ...olds };
    for (const name of unknown as string[]) if (filled[name] === undefined && news[name] !== undefined) filled[name] = news[name];
    delete filled[UNKNOWN_WRITE_ONLY];
    return filled;
  }

  async check(olds: Props, news: Props): Promise<CheckResult> {
    const before = reveal(olds);
    const after = reveal(news);
    // What only the dynamic resources take is refused here, saying what the plugin offers instead.
    const refused = DYNAMIC_ONLY_INPUTS.filter((name) => after.values[name] !== undefined && after.values[name] !== null);
    for (const name of DYNAMIC_ONLY_INPUTS) delete after.values[name];
    const result = await this.provider.check(before.values, after.values, after.secretNames);
    const failures = [
      ...refused.map((property) => ({ property, reason: dynamicOnlyReason(this.name, property) })),
      ...(result.failures ?? []),
    ];
    return {
      inputs: this.forEngine(result.inputs ?? {}, after.secretNames),
      failures,
      warnings: deprecationWarnings(this.kind, after.values),
    };
  }

  async diff(id: string, oldOutputs: Props, newInputs: Props, ignoreChanges: readonly string[] = []): Promise<DiffResult> {
    const news = reveal(newInputs);
    const olds = reveal(oldOutputs).values;
    for (const name of ignoreChanges) if (name in this.kind.inputs || name === "connection") news.values[name] = olds[name];
    const stored = this.withKnownWriteOnly(olds, news.values);
    const result = await this.provider.diff(id, stored, news.values);
    const detailedDiff: DiffResult["detailedDiff"] = {};
    for (const [name, { change, replace, inputDiff }] of Object.entries(result.detailedDiff))
      detailedDiff[name] = { kind: PropertyDiffKind[`${DIFF_KIND_OF[change]}${replace ? "_REPLACE" : ""}`], inputDiff };
    return { changes: result.changes, replaces: result.replaces, deleteBeforeReplace: result.deleteBeforeReplace === true, detailedDiff };
  }

  async create(inputs: Props, preview: boolean): Promise<{ id: string; properties: Props }> {
    const { values, secretNames } = reveal(inputs);
    if (preview) {
      const outputs: Props = { ...values };
      for (const name of Object.keys(this.kind.outputs)) outputs[name] ??= UNKNOWN;
      return { id: "", properties: this.forEngine(outputs, secretNames) };
    }
    const outcome = await this.provider.create(values, secretNames);
    if (!outcome.partial) return { id: outcome.id, properties: this.forEngine(outcome.outs, secretNames) };
    const { id, properties, message } = outcome.partial;
    throw new MayExistError(message, { state: "made", id, outputs: this.forEngine(properties, secretNames) });
  }

  /** Refresh (stored outputs given) or import (the id alone): the live object as outputs and inputs, or an empty id. */
  async read(id: string, properties: Props, inputs: Props): Promise<ReadResult> {
    const stored = reveal(properties);
    const declared = reveal(inputs);
    const secretNames = new Set([...stored.secretNames, ...declared.secretNames]);
    const importing = Object.keys(stored.values).length === 0;
    const result = await this.provider.read(id, stored.values, secretNames);
    if (!result.id) return { id: "" };
    const outputs: Props = { ...result.props };
    const unknownBefore = Array.isArray(stored.values[UNKNOWN_WRITE_ONLY]) ? (stored.values[UNKNOWN_WRITE_ONLY] as string[]) : [];
    const unknown = this.names.writeOnly.filter((name) => outputs[name] === undefined && (importing || unknownBefore.includes(name)));
    if (unknown.length > 0) outputs[UNKNOWN_WRITE_ONLY] = unknown;
    // Markers of an interrupted create stay until the next `up` replaces the object.
    for (const marker of [INCOMPLETE, UNRESOLVED_CREATE])
      if (stored.values[marker] !== undefined) outputs[marker] ??= stored.values[marker];
    return { id: result.id, properties: this.forEngine(outputs, secretNames), inputs: this.forEngine(result.inputs ?? {}, secretNames) };
  }

  async update(id: string, oldOutputs: Props, newInputs: Props, preview: boolean): Promise<Props> {
    const news = reveal(newInputs);
    const olds = this.withKnownWriteOnly(reveal(oldOutputs).values, news.values);
    if (preview) return this.forEngine({ ...olds, ...news.values }, news.secretNames);
    const { outs } = await this.provider.update(id, olds, news.values, news.secretNames);
    return this.forEngine(outs ?? {}, news.secretNames);
  }

  async delete(id: string, properties: Props): Promise<void> {
    const { values, secretNames } = reveal(properties);
    await this.provider.delete(id, values, secretNames);
  }
}

/**
 * Every kind of `registry` (this package's, unless a test serves others) by token, its former names' tokens too (a
 * renamed kind's old resources in a stack), each route made when first asked for, all on the plugin's session.
 */
export class KindRouter {
  private readonly byToken = new Map<string, Kind>();
  private readonly routes = new Map<Kind, KindRoute>();

  constructor(
    private readonly session: Session,
    registry: Readonly<Record<string, Kind>> = kinds,
  ) {
    for (const kind of Object.values(registry))
      for (const token of [nativeToken(kind.name), ...formerTokens(kind, "native")]) this.byToken.set(token, kind);
  }

  /** The route of the kind a type token names, or an error naming the tokens this provider serves. */
  route(token: string): KindRoute {
    const kind = this.byToken.get(token);
    if (!kind)
      throw new UnknownTypeError(`the gms provider has no resource type ${token}; it serves ${[...this.byToken.keys()].join(", ")}`);
    let route = this.routes.get(kind);
    if (!route) {
      route = new KindRoute(kind, this.session);
      this.routes.set(kind, route);
    }
    return route;
  }
}
