import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../src/emulator";
import { lookupDeclarations } from "../src/lookups";
import { type InputField, REQUIRED_TO_CREATE, requiredToDeclare } from "../src/provider/fields";
import * as lookups from "../src/lookups";
import { kinds } from "../src/resources";
import { renderPackageSchema } from "../src/docs/schema-file";
import { generatePackageSchema } from "../src/schema/package-schema";
import { TEST_FIXTURES } from "./emulator/harness";
import { startFineTune } from "./provider/fine-tune-fixture";

const root = join(__dirname, "..");
const schemaPath = join(root, "schema.json");
// CI checks the repository out with shared/ beside it; a user's clone has nothing beside it. The check
// runs when the metaschema is there, is skipped (saying why) when it is not, and is required when CI=true.
const metaschemaPath = join(root, "..", "shared", "vendor", "pulumi-package-metaschema.json");
const checkMetaschema = existsSync(metaschemaPath) || process.env.CI === "true";
if (!checkMetaschema) {
  process.stdout.write(
    `schema.test.ts: skipping the Pulumi Package Metaschema check: ${metaschemaPath} ` +
      `is absent (it ships with this team's shared/ folder, not with the repository)\n`,
  );
}

interface Property {
  type?: string;
  $ref?: string;
  items?: Property;
  secret?: boolean;
  replaceOnChanges?: boolean;
  description?: string;
}
interface ObjectType {
  properties: Record<string, Property>;
  required?: string[];
}
interface Resource extends ObjectType {
  inputProperties: Record<string, Property>;
  requiredInputs: string[];
}
interface PackageSchema {
  name: string;
  version: string;
  config: { variables: Record<string, Property & { defaultInfo?: { environment: string[] } }> };
  types: Record<string, ObjectType>;
  resources: Record<string, Resource>;
  functions: Record<string, { inputs: ObjectType; outputs: ObjectType | Property }>;
}

const committed = (): PackageSchema => JSON.parse(readFileSync(schemaPath, "utf8")) as PackageSchema;
const typeOf = (schema: PackageSchema, ref: string | undefined): ObjectType => {
  expect(ref).toMatch(/^#\/types\//);
  const type = schema.types[ref!.slice("#/types/".length)];
  expect(type, `${ref} is not in types`).toBeDefined();
  return type!;
};

function metaschemaValidator() {
  expect(
    existsSync(metaschemaPath),
    `the Pulumi Package Metaschema is missing at ${metaschemaPath} (shared/vendor/ beside the repository)`,
  ).toBe(true);
  const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true });
  // The two formats the metaschema uses.
  ajv.addFormat("regex", { validate: (value: string) => isRegex(value) });
  ajv.addFormat("uri-reference", { validate: (value: string) => URL.canParse(value, "https://example.invalid/") });
  return ajv.compile(JSON.parse(readFileSync(metaschemaPath, "utf8")) as object);
}
function isRegex(value: string): boolean {
  try {
    new RegExp(value);
    return true;
  } catch {
    return false;
  }
}

describe("schema.json", () => {
  it("is what the declarations generate", () => {
    expect(existsSync(schemaPath), "schema.json is missing: run `npm run schema`").toBe(true);
    expect(readFileSync(schemaPath, "utf8"), "schema.json is stale: run `npm run schema` and commit the result").toBe(
      renderPackageSchema(),
    );
  });

  it("passes the CLI's --check", () => {
    const check = spawnSync(process.execPath, [join(root, "dist", "schema", "cli.js"), "--check"], { encoding: "utf8" });
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
  });

  it.runIf(checkMetaschema)("is a valid Pulumi package schema", () => {
    const validate = metaschemaValidator();
    expect(validate(committed()), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // The validator does reject a broken schema: a primitive property that also names array items.
    const broken = committed();
    broken.resources["gms:index:App"]!.inputProperties.name!.items = { type: "string" };
    expect(validate(broken)).toBe(false);
  });

  it("names the package, its version and its configuration", () => {
    const schema = committed();
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    expect(schema.name).toBe("gms");
    expect(schema.version).toBe(manifest.version);
    expect(schema.config.variables.apiKey).toMatchObject({ type: "string", secret: true, defaultInfo: { environment: ["GMS_API_KEY"] } });
    expect(schema.config.variables.baseUrl).toMatchObject({ type: "string", defaultInfo: { environment: ["GMS_BASE_URL"] } });
    expect(schema.config.variables.baseUrl!.secret).toBeUndefined();
  });

  it("has every kind with every declared field, and the inputs every kind accepts on the plugin (no dynamic-only one)", () => {
    const schema = committed();
    expect(Object.keys(schema.resources).sort()).toEqual(
      Object.keys(kinds)
        .map((name) => `gms:index:${name}`)
        .sort(),
    );
    for (const kind of Object.values(kinds)) {
      const resource = schema.resources[`gms:index:${kind.name}`]!;
      const inputs = Object.keys(kind.inputs);
      expect(Object.keys(resource.inputProperties).sort(), kind.name).toEqual([...inputs, "connection"].sort());
      expect(Object.keys(resource.properties).sort(), kind.name).toEqual([...inputs, "connection", ...Object.keys(kind.outputs)].sort());
      const requiredInputs = Object.entries(kind.inputs as Record<string, InputField>).filter(([, field]) => requiredToDeclare(field));
      expect(resource.requiredInputs.sort(), kind.name).toEqual(requiredInputs.map(([name]) => name).sort());
      expect(resource.inputProperties.connection, kind.name).toMatchObject({ $ref: "#/types/gms:index:Connection", secret: true });
      expect(resource.required, kind.name).toContain("guid");
      for (const [name, field] of Object.entries(kind.inputs as Record<string, InputField>)) {
        for (const side of [resource.inputProperties, resource.properties]) {
          expect(side[name]!.secret === true, `${kind.name}.${name} secret`).toBe(field.secret);
          expect(side[name]!.replaceOnChanges === true, `${kind.name}.${name} replaceOnChanges`).toBe(field.change === "replace");
        }
      }
    }
    expect(typeOf(schema, "#/types/gms:index:Connection").properties.apiKey).toMatchObject({ type: "string", secret: true });
  });

  it("carries the flags of the fields the contract names", () => {
    const schema = committed();
    const key = schema.resources["gms:index:ProviderConnection"]!;
    expect(key.inputProperties.key).toMatchObject({ type: "string", secret: true, replaceOnChanges: true });
    expect(key.properties.key).toMatchObject({ secret: true, replaceOnChanges: true });
    // Required to create only: an imported connection's key cannot be read back, so its program may leave it out.
    expect(key.requiredInputs).not.toContain("key");
    expect(key.inputProperties.key!.description).toContain(REQUIRED_TO_CREATE);
    expect(key.inputProperties.nickname!.replaceOnChanges).toBeUndefined();

    const app = schema.resources["gms:index:App"]!;
    expect(app.inputProperties.name).toMatchObject({ type: "string" });
    expect(app.inputProperties.name!.replaceOnChanges).toBeUndefined();
    expect(app.requiredInputs).toEqual(["name"]);

    const model = schema.resources["gms:index:Model"]!;
    expect(model.requiredInputs.sort()).toEqual(["llm", "provider"]);
    expect(model.inputProperties.llm!.replaceOnChanges).toBeUndefined();
    expect(model.inputProperties.key).toMatchObject({ secret: true, replaceOnChanges: true });

    const evalTypes = schema.resources["gms:index:Eval"]!.inputProperties.evalTypes!;
    expect(evalTypes.type).toBe("array");
    const selection = typeOf(schema, evalTypes.items!.$ref);
    expect(selection.required).toEqual(["guid"]);
    expect(selection.properties.guid).toMatchObject({ type: "string" });
    expect(selection.properties.variables!.type).toBe("array");
    expect(Object.keys(typeOf(schema, selection.properties.variables!.items!.$ref).properties).sort()).toEqual(["name", "value"]);
  });

  it("has every lookup, with its arguments and its result", () => {
    const schema = committed();
    expect(Object.keys(schema.functions).sort()).toEqual(
      Object.keys(lookupDeclarations)
        .map((name) => `gms:index:${name}`)
        .sort(),
    );
    for (const name of Object.keys(lookupDeclarations)) expect(typeof (lookups as Record<string, unknown>)[name], name).toBe("function");

    const getAction = schema.functions["gms:index:getAction"]!;
    expect(getAction.inputs.required).toEqual(["app", "name"]);
    expect(getAction.inputs.properties.connection).toMatchObject({ $ref: "#/types/gms:index:Connection", secret: true });
    expect(Object.keys((getAction.outputs as ObjectType).properties).sort()).toEqual(["actionType", "app", "guid", "model", "name"]);
    // A list result is the function's return type: an array of a named object type.
    const getActions = schema.functions["gms:index:getActions"]!.outputs as Property;
    expect(getActions.type).toBe("array");
    expect(typeOf(schema, getActions.items!.$ref).properties).toEqual((getAction.outputs as ObjectType).properties);
  });

  it("generates the same schema on every run", () => {
    expect(JSON.stringify(generatePackageSchema())).toBe(JSON.stringify(generatePackageSchema()));
  });
});

describe("lookup declarations", () => {
  let emulator: RunningEmulator;
  let connection: { baseUrl: string; apiKey: string };
  beforeAll(async () => {
    emulator = await startEmulator({ fixtures: TEST_FIXTURES });
    connection = { baseUrl: emulator.url, apiKey: emulator.apiKey };
  });
  afterAll(() => emulator?.close());

  it("describe what each lookup returns", async () => {
    const summarize = await lookups.getAction({ app: "Support", name: "Summarize", connection });
    const logged = await fetch(`${emulator.url}/data`, {
      method: "POST",
      headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ action: summarize.guid, input: "in", output: "out" }),
    });
    expect(logged.status).toBe(200);
    const results: Record<Exclude<keyof typeof lookupDeclarations, "getFineTunes" | "getFineTune">, unknown> = {
      getWorkspace: await lookups.getWorkspace({ connection }),
      getUsage: await lookups.getUsage({ connection }),
      getActions: await lookups.getActions({ app: "Support", connection }),
      getAction: summarize,
      getContexts: await lookups.getContexts({ connection }),
      getContext: await lookups.getContext({ name: "FAQ", connection }),
      getSkillTypes: await lookups.getSkillTypes({ connection }),
      getEvalTypes: await lookups.getEvalTypes({ connection }),
      getEvalType: await lookups.getEvalType({ name: "Toxicity", connection }),
      getDataRecords: await lookups.getDataRecords({ app: "Support", connection }),
    };
    expect(results.getDataRecords).toHaveLength(1);
    await startFineTune(emulator, "Described tone");
    const fineTunes = {
      getFineTunes: await lookups.getFineTunes({ app: "Support", connection }),
      getFineTune: await lookups.getFineTune({ app: "Support", name: "Described tone", connection }),
    };
    expect(fineTunes.getFineTunes).toHaveLength(1);
    const all: Record<keyof typeof lookupDeclarations, unknown> = { ...results, ...fineTunes };
    for (const [name, declaration] of Object.entries(lookupDeclarations)) {
      const parsed = declaration.result.safeParse(all[name as keyof typeof lookupDeclarations]);
      expect(parsed.success, `${name}: ${parsed.error?.message}`).toBe(true);
    }
  });
});
