export * from "./resources";
