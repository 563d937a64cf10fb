/**
 * An App's slug: generated from its name, made unique in the workspace with the first free suffix from 2, in
 * order, whatever else took a suffix, across a restart (the store's memory of the next suffix is only a hint).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadFixtures } from "../../src/emulator/fixtures";
import { Store } from "../../src/emulator/store";

const KEY = "gms_slug_test_key_1234";
const dir = mkdtempSync(join(tmpdir(), "gms-slugs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("App slugs", () => {
  it("hands out base, base-2, base-3, ... skipping a suffix another name took, and after a restart", () => {
    const path = join(dir, "slugs.db");
    let store = new Store(path);
    loadFixtures(store, { workspaces: [{ name: "Slugs", slug: "slugs", apiKey: KEY, limits: { apps: 1000 } }] });
    const create = (name: string) => store.apps.create(store.workspaces.authenticate(KEY)!, { name }).slug;
    expect([create("Support"), create("Support"), create("Support")]).toEqual(["support", "support-2", "support-3"]);
    // A name whose own slug is the next suffix: the next "Support" skips it.
    expect(create("Support 4")).toBe("support-4");
    expect(create("Support")).toBe("support-5");
    store.close();
    // A new process knows no hint: the free suffix is found again.
    store = new Store(path);
    expect([create("Support"), create("Support")]).toEqual(["support-6", "support-7"]);
    expect(create("Other")).toBe("other");
    store.close();
  });

  it("gives 300 Apps of one name 300 distinct slugs, in order", () => {
    const store = new Store();
    loadFixtures(store, { workspaces: [{ name: "Many", slug: "many", apiKey: KEY, limits: { apps: 1000 } }] });
    const caller = store.workspaces.authenticate(KEY)!;
    const slugs = Array.from({ length: 300 }, () => store.apps.create(caller, { name: "Same" }).slug);
    expect(slugs).toEqual(["same", ...Array.from({ length: 299 }, (_, i) => `same-${i + 2}`)]);
    store.close();
  });
});
