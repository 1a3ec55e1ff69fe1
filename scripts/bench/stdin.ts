// All of stdin as text, by synchronous reads: the way a careful hook reads its payload, shared by
// the bench's reference programs (io-floor.ts, stop-syscalls.ts). A static import is bundled into
// the importing program's one chunk, so it adds no module for the engine to load.
import * as fs from "node:fs";

export function readStdin(): string {
  const chunks: Buffer[] = [];
  const chunk = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
      if ((error as NodeJS.ErrnoException).code === "EOF") break;
      throw error;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString("utf8");
}
