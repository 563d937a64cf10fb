export * from "./resources";
export * from "./lookups";
export * from "./workspace";
