// One way to read a file someone else may have put there: opened non-blocking (a FIFO at that
// name must not wait for a writer: Codex's config.toml as a FIFO hung check, doctor, install
// and uninstall, docs/decisions.md#installer-second-trial-from-outside), accepted only when the
// opened descriptor is a regular file (a link
// to /dev/zero once fed 1 GB to `check`), and read up to a bound whatever stat says (a sparse
// file's size costs nothing to fake, and it may grow while we read).
import * as fs from "node:fs";

export type BoundedRead =
  | { readonly ok: true; readonly bytes: Buffer; readonly stat: fs.Stats }
  | { readonly ok: false; readonly code: string | undefined; readonly problem: string; readonly stat?: fs.Stats };

/**
 * readBoundedFile(p, maxBytes, { followLink }) → at most maxBytes of a regular file, with the
 * descriptor's stat; or why not: "is not a regular file", "is larger than …", "is a symlink"
 * (followLink false), "cannot be read (CODE)". `code` is the errno code when there is one
 * (ENOENT: the file is absent). Never throws.
 */
export function readBoundedFile(
  filePath: string,
  maxBytes: number,
  options: { readonly followLink: boolean },
): BoundedRead {
  let fd: number | undefined;
  try {
    const noFollow = options.followLink ? 0 : (fs.constants.O_NOFOLLOW ?? 0);
    fd = fs.openSync(filePath, fs.constants.O_RDONLY | noFollow | (fs.constants.O_NONBLOCK ?? 0));
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return { ok: false, code: undefined, problem: "is not a regular file", stat };
    const tooLarge = { ok: false as const, code: undefined, problem: `is larger than ${describeSize(maxBytes)}`, stat };
    if (stat.size > maxBytes) return tooLarge;
    // Sized from stat, grown when the file grew since: never past one byte over the bound.
    let bytes = Buffer.allocUnsafe(Math.min(maxBytes + 1, stat.size + 1));
    let filled = 0;
    for (;;) {
      if (filled === bytes.length) {
        if (bytes.length > maxBytes) return tooLarge;
        const larger = Buffer.allocUnsafe(Math.min(maxBytes + 1, bytes.length * 2 + 4096));
        bytes.copy(larger, 0, 0, filled);
        bytes = larger;
      }
      const count = fs.readSync(fd, bytes, filled, bytes.length - filled, null);
      if (count === 0) return { ok: true, bytes: bytes.subarray(0, filled), stat };
      filled += count;
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === "ELOOP" && !options.followLink) return { ok: false, code, problem: "is a symlink" };
    return { ok: false, code, problem: `cannot be read (${code ?? "error"})` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** describeSize(16 << 20) → "16 MiB"; 64 << 10 → "64 KiB". */
function describeSize(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes >= 1 << 10 && bytes % (1 << 10) === 0) return `${bytes / (1 << 10)} KiB`;
  return `${bytes} bytes`;
}
