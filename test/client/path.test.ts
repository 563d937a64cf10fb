import { describe, expect, it } from "vitest";
import { childPath, path } from "../../src/client";

describe("path", () => {
  it("keeps literal parts and encodes every interpolated value", () => {
    expect(path`/apps`).toBe("/apps");
    expect(path`/apps/${"6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f"}/actions`).toBe("/apps/6f1d8a52-3c1e-4b7a-9d2f-0a1b2c3d4e5f/actions");
    expect(path`/skills/${"../admin?x=1#frag"}/prompt`).toBe("/skills/..%2Fadmin%3Fx%3D1%23frag/prompt");
    expect(path`/a/${"é ü"}/${7}`).toBe("/a/%C3%A9%20%C3%BC/7");
  });

  it("refuses an empty value that would turn a record route into its collection", () => {
    expect(() => path`/apps/${""}`).toThrow(TypeError);
  });

  it.each([".", ".."])("refuses %j, a dot segment that a URL resolves to another route", (value) => {
    expect(() => path`/apps/${value}/actions`).toThrow(new TypeError(`path parameter "${value}" after "/apps/" would change the route`));
    expect(() => path`/skills/${"triage"}/${value}`).toThrow(TypeError);
    // What the refusal prevents: the URL the request would go to.
    expect(new URL(`http://gms.test/apps/${value}/actions`).pathname).not.toMatch(/^\/apps\/[^/]+\/actions$/);
  });

  it("keeps values that only contain dots, and encoded dots, as one segment", () => {
    expect(path`/skills/${"..."}`).toBe("/skills/...");
    expect(path`/files/${".env"}/${"a.b"}`).toBe("/files/.env/a.b");
    expect(path`/apps/${"%2e%2e"}`).toBe("/apps/%252e%252e");
    expect(new URL(`http://gms.test${path`/apps/${"..."}/actions`}`).pathname).toBe("/apps/.../actions");
  });
});

describe("childPath", () => {
  it("appends one encoded segment", () => {
    expect(childPath(path`/apps`, "a/b c")).toBe("/apps/a%2Fb%20c");
  });

  it.each(["", ".", ".."])("refuses %j", (segment) => {
    expect(() => childPath(path`/apps`, segment)).toThrow(TypeError);
  });
});
