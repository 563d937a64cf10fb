/**
 * What GetSchema answers: the package schema `schema.json` holds (generated from the same declarations), with
 * the `provider` section a native provider needs so that an explicit `new gms.Provider(...)` takes the
 * configuration as its inputs (the same properties as the `config` section).
 */
import { generatePackageSchema } from "../schema/package-schema";

interface ConfigSection {
  variables: Record<string, Record<string, unknown>>;
}

export function pluginSchema(): Record<string, unknown> {
  const schema = generatePackageSchema();
  const config = schema.config as ConfigSection;
  return {
    ...schema,
    provider: {
      description: "The gms provider: where calls go (`baseUrl`, `apiKey`) and how hard they are retried.",
      inputProperties: config.variables,
    },
  };
}
