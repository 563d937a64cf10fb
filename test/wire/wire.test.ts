import { describe, expect, it } from "vitest";
import { z } from "zod";
import { wire } from "../../src/api/wire";

describe("wire(): one declaration in the wire's names, a codec to the package's", () => {
  const Record = wire(
    z.object({
      created_at: z.string(),
      loader_config: z.array(z.object({ item_name: z.string(), is_required: z.boolean().optional() })),
      // Free keys are data: never renamed.
      meta_data: z.record(z.string(), z.unknown()).nullable(),
      indexing_metadata: z
        .union([z.strictObject({ documents: z.number(), content_type: z.string() }), z.strictObject({ error_text: z.string() })])
        .nullable(),
    }),
  );
  const onTheWire = {
    created_at: "2026-01-01T00:00:00Z",
    loader_config: [{ item_name: "path", is_required: true }],
    meta_data: { some_key: 1 },
    indexing_metadata: { documents: 2, content_type: "text/plain" },
  };
  const inCode = {
    createdAt: "2026-01-01T00:00:00Z",
    loaderConfig: [{ itemName: "path", isRequired: true }],
    metaData: { some_key: 1 },
    indexingMetadata: { documents: 2, contentType: "text/plain" },
  };

  it("decodes nested objects and arrays into camelCase, leaving a record's free keys alone", () => {
    expect(Record.parse(onTheWire)).toEqual(inCode);
  });

  it("encodes back to the wire's names", () => {
    expect(z.encode(Record, inCode)).toEqual(onTheWire);
  });

  it("renames inside the union option that accepts the value, in both directions", () => {
    const failed = { ...onTheWire, indexing_metadata: { error_text: "loader failed" } };
    const decoded = Record.parse(failed);
    expect(decoded.indexingMetadata).toEqual({ errorText: "loader failed" });
    expect(z.encode(Record, decoded)).toEqual(failed);
  });

  it("refuses a value that no option of a union takes, on either side", () => {
    expect(Record.safeParse({ ...onTheWire, indexing_metadata: { documents: 2, content_type: "x", error_text: "both" } }).success).toBe(
      false,
    );
    expect(() =>
      z.encode(Record, { ...inCode, indexingMetadata: { documents: 2, contentType: "x", errorText: "both" } as never }),
    ).toThrow();
  });
});
