/**
 * Feedback: a label on one Data record. The spec names the fields and the rating values (1 negative, 2
 * positive); the types besides a rating, what each accepts and what PUT replaces are the emulator's choice
 * (README, "Where the spec is silent").
 */
import { z } from "zod";
import { Guid, JsonObject, UnnamedAuditFields } from "./common";

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

const FeedbackBody = z.object({
  type: FeedbackType,
  value: FeedbackValue,
  source: z.string().min(1),
  metadata: JsonObject.nullable().optional(),
  meta_data: JsonObject.nullable().optional(),
});
type FeedbackBody = z.infer<typeof FeedbackBody>;

/** Checks the value against the type (400 at `value`), turns a rating word into its number and folds `meta_data` into `metadata`. */
function checkedFields<B extends FeedbackBody>({ meta_data, ...body }: B, context: z.RefinementCtx) {
  const value = normalValue(body.type, body.value);
  if (value === undefined) {
    context.addIssue({
      code: "custom",
      path: ["value"],
      input: body.value,
      message: `Invalid value for type '${body.type}': ${VALUE_RULES[body.type]}`,
    });
    return z.NEVER;
  }
  return { ...body, value, metadata: body.metadata === undefined ? meta_data : body.metadata };
}

/** What POST /feedback/{guid} takes and PUT replaces: `type`, `value`, `source`, `metadata` (legacy name `meta_data`). */
export const FeedbackFields = FeedbackBody.transform(checkedFields);
export type FeedbackFields = z.output<typeof FeedbackFields>;

/** POST /feedback: the same fields plus the Data GUID as `data`. */
export const FeedbackCreate = FeedbackBody.extend({ data: Guid }).transform(checkedFields);
export type FeedbackCreate = z.output<typeof FeedbackCreate>;

/** Every Feedback route answers this record. */
export const Feedback = z.object({
  guid: Guid,
  /** The labelled Data record. */
  data: Guid,
  type: FeedbackType,
  value: FeedbackValue,
  source: z.string(),
  metadata: JsonObject.nullable(),
  deleted: z.boolean(),
  ...UnnamedAuditFields,
});
export type Feedback = z.infer<typeof Feedback>;
