/**
 * missingSettings (src/provider/session.ts), which Check runs so that a preview fails as `up` would: no service URL
 * or no API key from any of the three sources is named with them; one source is enough; a setting the plugin's
 * Configure got as unknown (an explicit provider's output, in a preview) is not missing. The real CLI's side is
 * test/pulumi-cli/required-settings.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { unknownConfigKeys } from "../../src/plugin/config";
import { Session, settingTexts } from "../../src/provider/session";
import { UNKNOWN } from "../../src/provider/values";

const config = (values: Record<string, string>) => settingTexts({ get: (key: string) => values[key] });
const session = new Session();
const configure = session.configure.bind(session);
const missingSettings = session.missingSettings.bind(session);

describe("missingSettings", () => {
  afterEach(() => {
    configure(config({}));
    vi.unstubAllEnvs();
  });

  it("names each missing setting with its three sources, and none when any source gives it", () => {
    vi.stubEnv("GMS_BASE_URL", "");
    vi.stubEnv("GMS_API_KEY", "");
    configure(config({}));
    expect(missingSettings(undefined)).toEqual([
      "No service URL: set `pulumi config set gms:baseUrl https://.../v1`, or GMS_BASE_URL, or the resource's connection.baseUrl",
      "No API key: set `pulumi config set --secret gms:apiKey ...`, or GMS_API_KEY, or the resource's connection.apiKey",
    ]);
    expect(missingSettings({ baseUrl: "https://gms.example.com/v1", apiKey: "k" })).toEqual([]);
    configure(config({ "gms:baseUrl": "https://gms.example.com/v1" }));
    expect(missingSettings(undefined)).toEqual([expect.stringMatching(/^No API key/)]);
    vi.stubEnv("GMS_API_KEY", "k");
    expect(missingSettings(undefined)).toEqual([]);
  });

  it("takes a setting the plugin's Configure got as unknown for one that will be known", () => {
    vi.stubEnv("GMS_BASE_URL", "");
    vi.stubEnv("GMS_API_KEY", "");
    const args = { baseUrl: UNKNOWN, apiKey: UNKNOWN, maxRetries: 2 };
    expect(unknownConfigKeys(args)).toEqual(["baseUrl", "apiKey"]);
    expect(unknownConfigKeys(undefined)).toEqual([]);
    configure(config({}), unknownConfigKeys(args));
    expect(missingSettings(undefined)).toEqual([]);
  });
});
