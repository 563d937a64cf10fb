/**
 * `node --require` entry of the provider host: the engine holds the write end of the host's standard input, so
 * when the engine is gone (it exited, or was killed without a chance to end its children) the input ends and so
 * does the host, at once: it takes and sends no request for an engine that can no longer record the answer.
 */
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.stdin.resume();
