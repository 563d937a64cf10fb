/**
 * "Did you mean": an unknown key of a workspace document named with the nearest key its object accepts,
 * when one is close enough to be the key the author meant (a typo, not a different word).
 */

/**
 * The edit distance between two words: insertions, deletions, substitutions and swaps of two adjacent
 * characters each count one (optimal string alignment), and letters differing only in case count nothing.
 */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  // Three rows of the table: two back (for swaps), the previous one and the current one.
  let before: number[] = [];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[y.length]!;
}

/**
 * The most edits a key may be away from a valid one and still be taken for a typo of it: one for keys of
 * up to five characters, two up to eight, then one more for every four characters. Farther keys are
 * words of their own, and naming a valid key for them would mislead.
 */
export const closeEnough = (length: number): number => (length <= 5 ? 1 : length <= 8 ? 2 : 2 + Math.floor((length - 5) / 4));

/** The valid key nearest to `key` if it is close enough, the first declared of equally near ones; otherwise undefined. */
export function nearestKey(key: string, valid: Iterable<string>): string | undefined {
  let nearest: string | undefined;
  let nearestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of valid) {
    const distance = editDistance(key, candidate);
    if (distance < nearestDistance && distance <= closeEnough(Math.max(key.length, candidate.length))) {
      nearest = candidate;
      nearestDistance = distance;
    }
  }
  return nearest;
}

/** The message for an unknown key of an object that accepts `valid`: `unknown key; did you mean "<nearest>"?`, or `unknown key`. */
export function unknownKeyMessage(key: string, valid: Iterable<string>): string {
  const nearest = nearestKey(key, valid);
  return nearest === undefined ? "unknown key" : `unknown key; did you mean "${nearest}"?`;
}
