/** An App as an operation's state holds it, for the engine's unit tests that need no program or provider host. */
import type { ResourceState } from "../../src/testing/state";

export const urn = (name: string) => `urn:pulumi:dev::p::pulumi-nodejs:dynamic/gms:App::${name}`;

export const resource = (name: string, over: Partial<ResourceState> = {}): ResourceState => ({
  urn: urn(name),
  type: "pulumi-nodejs:dynamic/gms:App",
  name,
  id: `guid-${name}`,
  dependencies: [],
  inputs: { name },
  outputs: { name },
  additionalSecretOutputs: [],
  ...over,
});
