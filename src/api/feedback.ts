/**
 * Feedback: a label on one Data record. The spec names the fields and the rating values (1 negative, 2
 * positive); the types besides a rating, what each accepts and what PUT replaces are the emulator's choice
 * (README, "Where the spec is silent").
 */
import { z } from "zod";
import { DeleteMessage, Guid, JsonObject, UnnamedAuditFields } from "./common";
import { endpoint } from "./endpoint";
import { wire } from "./wire";

// Spec: only a rating kind is shown; `correction` and `issue` are the labels the client library logs beside a rating.
export const FeedbackType = z.enum(["rating", "correction", "issue"]);
export type FeedbackType = z.infer<typeof FeedbackType>;

/** A rating is stored as its number; correction and issue values are text. */
export const FeedbackValue = z.union([z.number().int(), z.string()]);
export type FeedbackValue = z.infer<typeof FeedbackValue>;

/** Rating values by the words the client library accepts (any case); direct API calls send the numbers. */
const RATINGS: Record<string, number> = { negative: 1, positive: 2 };

/** The stored value for a type, or undefined when the type does not accept it. */
function normalValue(type: FeedbackType, value: FeedbackValue): FeedbackValue | undefined {
  if (type !== "rating") return typeof value === "string" && value.trim() !== "" ? value : undefined;
  if (typeof value === "number") return Object.values(RATINGS).includes(value) ? value : undefined;
  return RATINGS[value.toLowerCase()];
}

const VALUE_RULES: Record<FeedbackType, string> = {
  rating: "a rating is 1 (negative) or 2 (positive), or the word Negative or Positive",
  correction: "a correction is non-empty text",
  issue: "an issue is non-empty text",
};

/** The fields as sent: `type`, `value`, `source`, `metadata` (legacy name `meta_data`). */
const FeedbackBody = z.object({
  type: FeedbackType,
  value: FeedbackValue,
  source: z.string().min(1),
  metadata: JsonObject.nullable().optional(),
  meta_data: JsonObject.nullable().optional(),
});

/** Checks the value against the type: a mismatch is a 400 at `value`. */
function checkValue(body: { type: FeedbackType; value: FeedbackValue }, context: z.RefinementCtx): void {
  if (normalValue(body.type, body.value) !== undefined) return;
  context.addIssue({
    code: "custom",
    path: ["value"],
    input: body.value,
    message: `Invalid value for type '${body.type}': ${VALUE_RULES[body.type]}`,
  });
}

/** The checked fields as the code uses them: a rating word turned into its number, `meta_data` folded into `metadata`. */
const CheckedFields = {
  type: FeedbackType,
  value: FeedbackValue,
  source: z.string(),
  metadata: JsonObject.nullable().optional(),
};

/** The checked fields of a decoded body (its value already passed `checkValue`). */
const checked = <B extends { type: FeedbackType; value: FeedbackValue; metadata?: unknown; metaData?: unknown }>({
  metaData,
  ...body
}: B) => ({
  ...body,
  value: normalValue(body.type, body.value)!,
  metadata: body.metadata === undefined ? metaData : body.metadata,
});

/**
 * What POST /feedback/{guid} takes and PUT replaces: the wire's fields decoded (./wire) and then checked
 * (a codec both ways: the checked fields encode as they are, `metadata` under its current name).
 */
export const FeedbackFields = z.codec(wire(FeedbackBody.superRefine(checkValue)), z.object(CheckedFields), {
  decode: checked,
  encode: (fields) => fields,
});
export type FeedbackFields = z.output<typeof FeedbackFields>;

/** POST /feedback: the same fields plus the Data GUID as `data`. */
export const FeedbackCreate = z.codec(
  wire(FeedbackBody.extend({ data: Guid }).superRefine(checkValue)),
  z.object({ ...CheckedFields, data: Guid }),
  { decode: checked, encode: (fields) => fields },
);
export type FeedbackCreate = z.output<typeof FeedbackCreate>;

/** Every Feedback route but delete answers this record. */
export const Feedback = wire(
  z.object({
    guid: Guid,
    /** The labelled Data record. */
    data: Guid,
    type: FeedbackType,
    value: FeedbackValue,
    source: z.string(),
    metadata: JsonObject.nullable(),
    deleted: z.boolean(),
    ...UnnamedAuditFields,
  }),
);
/** A Feedback as the code uses it. */
export type Feedback = z.output<typeof Feedback>;

export const feedbackEndpoints = {
  /** The spec writes `/feedback/`; the emulator ignores a trailing slash. */
  list: endpoint({ method: "GET", path: "/feedback", response: Feedback, list: "envelope" }),
  create: endpoint({ method: "POST", path: "/feedback", body: FeedbackCreate, response: Feedback }),
  /** The GUID in the path is the Data record's; a `data` field in the body is ignored. */
  createForData: endpoint({ method: "POST", path: "/feedback/{guid}", body: FeedbackFields, response: Feedback }),
  get: endpoint({ method: "GET", path: "/feedback/{guid}", response: Feedback }),
  /** Spec: "mutable fields replaced", answering the Feedback; the emulator replaces type, value, source and metadata. */
  replace: endpoint({ method: "PUT", path: "/feedback/{guid}", body: FeedbackFields, response: Feedback }),
  /** Spec: response not shown; the emulator answers `{ message: "Feedback <guid> deleted" }`. */
  delete: endpoint({ method: "DELETE", path: "/feedback/{guid}", response: DeleteMessage, shown: false }),
};
