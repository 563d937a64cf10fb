import "./node-guard";
export * from "./resources";
export * from "./lookups";
export * from "./workspace";
export * as native from "./native";
