/**
 * What one operation of LocalEngine shows of its steps: each step printed (unchanged ones only counted, as
 * `pulumi` does) and listed in a fixed order whatever order they finish in (OrderedSteps), the deletes held back
 * printed with why, and the steps' counts for the result.
 */
import { OrderedSteps } from "./parallel";
import { formatHeldBack, formatStep } from "./plan";
import type { HeldBack, PlanStep, StepOp } from "./results";

export class StepReport {
  private readonly steps: PlanStep[] = [];
  private readonly ordered: OrderedSteps;

  constructor(
    private readonly log: (line: string) => void,
    preview: boolean,
  ) {
    this.ordered = new OrderedSteps((step) => {
      this.steps.push(step);
      if (step.op !== "same") this.log(formatStep(step, preview));
    });
  }

  /** The first key after every one settled so far: where the keys of the deletes start. */
  get nextKey(): number {
    return this.ordered.nextKey;
  }

  /** The work of `key` is done, with its step or none (OrderedSteps.settle). */
  settle(key: number | undefined, step?: PlanStep): void {
    this.ordered.settle(key, step);
  }

  /** Shows what is still held back by work that never settled (a program that failed midway). */
  flush(): void {
    this.ordered.flush();
  }

  /** Printed, so that nothing is left in place without a word. */
  heldBack(held: HeldBack[]): void {
    for (const each of held) this.log(formatHeldBack(each));
  }

  /** Every step shown so far (what was still held back included), and their counts. */
  result(): { steps: PlanStep[]; counts: Record<StepOp, number> } {
    this.flush();
    const counts: Record<StepOp, number> = { create: 0, update: 0, replace: 0, delete: 0, same: 0, refresh: 0, read: 0 };
    for (const step of this.steps) counts[step.op]++;
    return { steps: [...this.steps], counts };
  }
}
