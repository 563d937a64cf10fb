export * from "./resources";
export * from "./lookups";
