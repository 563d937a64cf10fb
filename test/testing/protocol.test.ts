/** The engine and the program process send their IPC messages in batches, one write per event-loop turn. */
import { describe, expect, it } from "vitest";
import { batchedSender } from "../../src/testing/protocol";

describe("batchedSender", () => {
  it("writes the messages of one turn as one batch, in order, and resolves each once its batch is written", async () => {
    const writes: number[][] = [];
    let written = 0;
    const send = batchedSender<number>((batch, done) => {
      writes.push(batch);
      setTimeout(() => {
        written++;
        done();
      }, 5);
    });
    const first = [send(1), send(2), send(3)];
    expect(writes).toEqual([]);
    await Promise.all(first);
    expect(written).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = send(4);
    await Promise.resolve();
    const third = send(5);
    await Promise.all([second, third]);
    expect(writes).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1));
    await send(6);
    expect(writes).toEqual([[1, 2, 3], [4, 5], [6]]);
    expect(written).toBe(3);
  });
});
