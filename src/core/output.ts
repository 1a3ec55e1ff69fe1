// Writing to stdout/stderr with synchronous writes only. Hosts read a hook's stdout to EOF and
// ignore the whole answer when it is cut, so a short write is continued, and a pipe that is
// momentarily full (EAGAIN on a non-blocking descriptor) is waited on rather than dropped.
import * as fs from "node:fs";

/** writeFully(1, text) → every byte of text written to fd, unless the reader has gone (EPIPE). */
export function writeFully(fd: number, text: string): void {
  if (text === "") return;
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      return; // The reader is gone: nobody is left to answer.
    }
  }
}
