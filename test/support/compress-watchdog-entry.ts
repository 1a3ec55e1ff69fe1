// `compress-watchdog-entry <timeoutMs> <stdinBytes> <command> [args…]`: runs the watchdog
// inside a binary compiled with the release flags and prints its outcome (without stdout) and
// the elapsed milliseconds as one JSON line, so the tests can check that what holds under
// `bun test` also holds in the compiled binary.
import { runWithWatchdog } from "../../src/core/watchdog.ts";

const [timeoutMs, stdinBytes, command, ...args] = process.argv.slice(2);
const started = performance.now();
const outcome = await runWithWatchdog(command ?? "", args, new Uint8Array(Number(stdinBytes)).fill(0x61), {
  timeoutMs: Number(timeoutMs),
  maxStdoutBytes: 1 << 20,
});
const { stdout, ...rest } = outcome;
process.stdout.write(
  `${JSON.stringify({ ...rest, stdoutBytes: stdout.length, elapsedMs: performance.now() - started })}\n`,
);
process.exit(0);
