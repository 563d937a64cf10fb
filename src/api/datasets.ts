import { z } from "zod";
import { Guid, Timestamp } from "./common";
import { DataValue } from "./data";

/** A Dataset as every Dataset route returns it: exactly these five fields. */
export const Dataset = z.object({
  guid: Guid,
  name: z.string(),
  description: z.string().nullable(),
  app: Guid.nullable(),
  created_by_id: z.string(),
});
export type Dataset = z.infer<typeof Dataset>;

// Spec: not shown for malformed GUIDs; the emulator skips them like any unresolvable GUID (no Item, no 400).
const DataGuids = z.array(z.string());

export const DatasetCreate = z.object({
  // Spec: not shown which create fields are required; the emulator requires `name` only.
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  app: Guid.nullable().optional(),
  data: DataGuids.optional(),
});
export type DatasetCreate = z.infer<typeof DatasetCreate>;

/** `app` is accepted and ignored: the existing App relationship is retained. */
export const DatasetUpdate = z.object({
  name: z.string().min(1).optional(),
  description: z.string().nullable().optional(),
  app: Guid.nullable().optional(),
  datapoints: DataGuids.optional(),
});
export type DatasetUpdate = z.infer<typeof DatasetUpdate>;

// Spec: not shown; the emulator names Dataset Item fields guid, input, output, data (the linked Data GUID), created_at.
export const DatasetItem = z.object({
  guid: Guid,
  input: DataValue,
  output: DataValue,
  data: Guid.nullable(),
  created_at: Timestamp,
});
export type DatasetItem = z.infer<typeof DatasetItem>;
