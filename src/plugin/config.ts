/**
 * The provider's configuration: the settings of src/settings.ts, as the dynamic resources read them from stack config
 * (`gms:<name>`), falling back to the same environment variables. CheckConfig reports a bad value as a failure naming
 * the setting; Configure hands the values to the plugin's session (src/provider/session.ts), where every client the
 * kinds use is made.
 *
 * The engine starts one plugin process per provider instance (the default provider and each explicit one),
 * so the configuration is the process's: two providers for two workspaces are two processes.
 */
import { Session } from "../provider/session";
import { containsUnknown, UNKNOWN } from "../provider/values";
import {
  ConfigurationError,
  configKey,
  SETTING_NAMES,
  SETTINGS,
  type Setting,
  type SettingInput,
  type SettingName,
  settingText,
} from "../settings";
import { type DiffResult, PropertyDiffKind } from "./router";
import { conceal, type Props, reveal } from "./wire";

/** Checks the provider's inputs; keys it does not know (the engine's `version`, say) pass as they are. */
export function checkConfig(news: Props): { inputs: Props; failures: { property: string; reason: string }[] } {
  const { values, secretNames } = reveal(news);
  const failures: { property: string; reason: string }[] = [];
  for (const name of SETTING_NAMES) {
    const value = values[name];
    // Unknown during a preview: checked when it is known. A list or an object is no setting's form, unknown parts or not.
    if (value === undefined || value === null || value === UNKNOWN) continue;
    const setting: Setting = SETTINGS[name];
    if (typeof value === "object") {
      failures.push({
        property: name,
        reason: `${configKey(name)} must be a single value, not ${Array.isArray(value) ? "a list" : "an object"}`,
      });
    } else if (setting.parse(value as SettingInput) === undefined) {
      // The value a failure shows, unless it is a secret.
      const shown = setting.secret || secretNames.has(name) ? "" : `, not ${JSON.stringify(settingText(value))}`;
      failures.push({ property: name, reason: `${configKey(name)} ${setting.form}${shown}` });
    }
  }
  const secrets = SETTING_NAMES.filter((name) => SETTINGS[name].secret);
  return { inputs: conceal(values, new Set([...secretNames, ...secrets])), failures };
}

/**
 * The configuration from a ConfigureRequest: its `args` (plain keys, values possibly secret), else its
 * `variables` (`gms:config:<key>` or `gms:<key>`, strings).
 */
export function configFrom(
  args: Props | undefined,
  variables: ReadonlyMap<string, string> | Record<string, string>,
): Partial<Record<SettingName, string>> {
  if (args && Object.keys(args).length > 0) return settingTextsOf(reveal(args).values);
  const config: Partial<Record<SettingName, string>> = {};
  const entries = variables instanceof Map ? [...variables.entries()] : Object.entries(variables);
  for (const [name, value] of entries) {
    const key = name.replace(/^gms:(config:)?/, "");
    if ((SETTING_NAMES as readonly string[]).includes(key) && name.startsWith("gms:")) config[key as SettingName] = value;
  }
  return config;
}

/** The settings' texts of a configuration's plain values. */
function settingTextsOf(values: Props): Partial<Record<SettingName, string>> {
  const texts: Partial<Record<SettingName, string>> = {};
  for (const name of SETTING_NAMES) {
    const text = settingText(values[name]);
    if (text !== undefined) texts[name] = text;
  }
  return texts;
}

/** The keys of a ConfigureRequest's `args` whose values a preview does not know yet (an explicit provider's outputs). */
export function unknownConfigKeys(args: Props | undefined): string[] {
  if (!args) return [];
  const { values } = reveal(args);
  return SETTING_NAMES.filter((name) => values[name] !== undefined && containsUnknown(values[name]));
}

/**
 * DiffConfig: what a change of the provider's configuration means for its resources, as a `connection` change
 * means for a dynamic resource. Another service (`baseUrl`) is another object: the provider is replaced, so
 * the engine replaces each of its resources (created there, deleted here with the old configuration). Another
 * `apiKey` is an update when both keys select the same workspace (a rotated key), or when the old key no longer
 * works (revoked after rotation: nothing could delete with it); a key of another workspace replaces. Retry,
 * deadline and rate settings are updates. An unknown new value (preview) is an update, as the dynamic resources decide.
 */
export async function diffConfig(olds: Props, news: Props): Promise<DiffResult> {
  const before = reveal(olds).values;
  const after = reveal(news).values;
  // Each configuration's own session, as its clients would be made: the values, else the environment.
  const sessions = [before, after].map((values) => {
    const session = new Session();
    session.configure(settingTextsOf(values));
    return session;
  }) as [Session, Session];
  try {
    return await diffSessions(before, after, ...sessions);
  } finally {
    await Promise.all(sessions.map((session) => session.close()));
  }
}

async function diffSessions(before: Props, after: Props, old: Session, next: Session): Promise<DiffResult> {
  const detailedDiff: DiffResult["detailedDiff"] = {};
  const replaces: string[] = [];
  for (const key of SETTING_NAMES) {
    if (containsUnknown(after[key])) {
      detailedDiff[key] = { kind: PropertyDiffKind.UPDATE, inputDiff: true };
      continue;
    }
    const was = settingText(before[key]);
    const is = settingText(after[key]);
    if (was === is) continue;
    const moves =
      key === "baseUrl"
        ? old.effectiveBaseUrl(undefined) !== next.effectiveBaseUrl(undefined)
        : key === "apiKey" && (await otherWorkspace(old, next));
    if (moves) replaces.push(key);
    const change = was === undefined ? "ADD" : is === undefined ? "DELETE" : "UPDATE";
    detailedDiff[key] = { kind: PropertyDiffKind[moves ? (`${change}_REPLACE` as const) : change], inputDiff: true };
  }
  const changes = Object.keys(detailedDiff).length > 0;
  return { changes, replaces, deleteBeforeReplace: false, detailedDiff };
}

/** Whether the new API key selects another workspace than the old one (false when either cannot tell: a key refused). */
async function otherWorkspace(old: Session, next: Session): Promise<boolean> {
  try {
    return (await old.sameWorkspace(old.clientFor(undefined), next.clientFor(undefined))) === false;
  } catch (error) {
    if (error instanceof ConfigurationError) return false;
    throw error;
  }
}
