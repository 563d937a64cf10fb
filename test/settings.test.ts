/**
 * The settings' one declaration (src/settings.ts): each setting's form, the same for the plugin's CheckConfig and the
 * dynamic provider's clients; which source a value is taken from and what a refusal shows of it; and the texts the
 * schema and the docs are made from, whose default is the one the client runs with.
 */
import { describe, expect, it } from "vitest";
import { defaultRetryPolicy, GmsClient } from "../src/client";
import { checkConfig } from "../src/plugin/config";
import {
  ConfigurationError,
  configThenEnv,
  SETTING_NAMES,
  SETTINGS,
  settingDefaultText,
  settingDescription,
  settingValue,
} from "../src/settings";

describe("each setting's form", () => {
  it.each([
    ["maxRetries", ["0", "3", 12], ["1e3", " 3", "-1", "1.5", "", true]],
    ["maxRequestsPerSecond", ["5", "0.5", ".25", 2], ["0", "5/s", "1e3", "fast"]],
    ["baseUrl", ["https://gms.example.com/v1", "http://127.0.0.1:4000/v1/"], ["https://gms.example.com", "ftp://x/v1", "x", 5]],
    ["apiKey", ["gms_key"], ["", 12345]],
  ] as const)("%s takes %j and refuses %j, in CheckConfig and in the dynamic provider alike", (name, taken, refused) => {
    for (const value of taken) {
      expect(SETTINGS[name].parse(value), `${value}`).toBeDefined();
      expect(checkConfig({ [name]: value }).failures, `${value}`).toEqual([]);
    }
    for (const value of refused) {
      expect(SETTINGS[name].parse(value), `${value}`).toBeUndefined();
      expect(
        checkConfig({ [name]: value }).failures.map(({ property }) => property),
        `${value}`,
      ).toEqual([name]);
      if (typeof value === "string" && value !== "")
        expect(() => settingValue(name, configThenEnv(name, value)), value).toThrow(ConfigurationError);
    }
  });
});

describe("settingValue", () => {
  it("takes the first source that sets it; an empty text is no value", () => {
    expect(settingValue("maxRetries", configThenEnv("maxRetries", "2", { GMS_MAX_RETRIES: "5" }))).toBe(2);
    expect(settingValue("maxRetries", configThenEnv("maxRetries", undefined, { GMS_MAX_RETRIES: "5" }))).toBe(5);
    expect(settingValue("maxRetries", configThenEnv("maxRetries", "", { GMS_MAX_RETRIES: "5" }))).toBeUndefined();
    expect(settingValue("maxRetries", configThenEnv("maxRetries", undefined, {}))).toBeUndefined();
  });

  it("names the source of a refused value, and shows the value only from the environment", () => {
    expect(() => settingValue("maxRetries", configThenEnv("maxRetries", "many", {}))).toThrow(
      new ConfigurationError("gms:maxRetries must be a whole number of 0 or more"),
    );
    expect(() => settingValue("maxRetries", configThenEnv("maxRetries", undefined, { GMS_MAX_RETRIES: "many" }))).toThrow(
      new ConfigurationError('GMS_MAX_RETRIES must be a whole number of 0 or more, not "many"'),
    );
  });
});

describe("the settings' texts", () => {
  it("say the default the client runs with, or what no value means", () => {
    expect(settingDescription("maxRetries")).toMatch(new RegExp(` Default ${defaultRetryPolicy.maxRetries}\\.$`));
    expect(settingDescription("retryBaseDelayMs")).toMatch(new RegExp(` Default ${defaultRetryPolicy.baseDelayMs}\\.$`));
    const client = new GmsClient({ baseUrl: "https://gms.example.com/v1", apiKey: "k" });
    expect(settingDescription("requestDeadlineMs")).toMatch(new RegExp(` Default ${client.requestDeadlineMs}\\.$`));
    expect(settingDescription("baseUrl")).toMatch(/ Defaults to the GMS_BASE_URL environment variable\.$/);
    expect(settingDescription("maxRequestsPerSecond")).toMatch(/ Default: no limit\.$/);
    expect(SETTING_NAMES.map(settingDefaultText)).toEqual(["none (required)", "none (required)", "3", "500", "60000", "none (no limit)"]);
  });
});
