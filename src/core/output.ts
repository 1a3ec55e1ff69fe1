// Writing to stdout/stderr with synchronous writes only. Hosts read a hook's stdout to EOF and
// ignore the whole answer when it is cut, so a short write is continued, and a pipe that is
// momentarily full (EAGAIN on a non-blocking descriptor) is waited on rather than dropped.
import * as fs from "node:fs";

/**
 * writeFully(1, text) → true once every byte of text is written to fd; false when the
 * descriptor refused (closed, EPIPE, ENOSPC), so the caller can answer another way.
 */
export function writeFully(fd: number, text: string): boolean {
  if (text === "") return true;
  // The string in one write first, as nearly every answer goes out: encoding it to a Buffer
  // before every write was the costliest step of writing an answer (Buffer.from of a string,
  // ~0.3 M instructions on its first call; docs/performance/2026-12-02-bench-guard.md). Only
  // a short write (a full pipe) or EAGAIN goes on, from the first byte not written.
  let offset = 0;
  try {
    offset = fs.writeSync(fd, text);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return false;
  }
  if (offset === Buffer.byteLength(text, "utf8")) return true;
  const bytes = Buffer.from(text, "utf8");
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") {
        pauseForPipe(5);
        continue;
      }
      return false;
    }
  }
  return true;
}

/** pauseForPipe(ms): sleeps ms without spinning, while a non-blocking pipe is empty (stdin) or full (stdout). */
export function pauseForPipe(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * stdoutIsDiscarded() → true when fd 1 is the null device. Bun reopens a closed stdout on
 * /dev/null at start-up (measured, 1.4), so a host that closed our stdout sees every write
 * succeed and read by nobody; an answer that must arrive (a deny) needs another channel then.
 */
export function stdoutIsDiscarded(): boolean {
  if (process.platform === "win32") return false;
  try {
    const out = fs.fstatSync(1);
    const nul = fs.statSync("/dev/null");
    return out.isCharacterDevice() && out.rdev === nul.rdev;
  } catch {
    return true; // No usable fd 1 at all.
  }
}
