import { describe, expect, it } from "vitest";
import { path } from "../../src/client";

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
});
