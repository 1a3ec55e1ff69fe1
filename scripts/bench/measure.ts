// What the benches share (scripts/bench.ts, scripts/bench-compress.ts, and the guard's verdict in
// scripts/bench/hook-cases.ts): the statistics their tables print and the page-cache state each
// program is measured in. Kept apart so that the compression bench, which bench.ts loads after
// its own table, needs nothing back from bench.ts.
import * as fs from "node:fs";

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** quantile(values, q) → the q-quantile (linear between ranks), ignoring NaN. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

/** pairedRatios(a, b) → a[i] / b[i]: each run of one program over the run of the other made beside it. */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((t, i) => t / b[i]!);
}

/** ratioCell(a, b) → "1.07 (1.02–1.12)": the median of the paired ratios and their interquartile range. */
export function ratioCell(a: readonly number[], b: readonly number[]): string {
  const ratios = pairedRatios(a, b);
  return `${median(ratios).toFixed(2)} (${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)})`;
}

/**
 * dropPageCache(file) → true once the file's pages are out of the page cache (GNU dd's nocache
 * flag: posix_fadvise DONTNEED). Written back first: DONTNEED leaves dirty pages where they are,
 * and a fresh copy's are dirty until written back (seen: one run in two dropped nothing).
 */
export function dropPageCache(file: string): boolean {
  writeBack(file);
  const result = Bun.spawnSync(["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  return result.exitCode === 0;
}

/**
 * writeBack(file): the file's dirty pages written to disk, its pages left in the page cache as
 * they are. A fresh copy of a ~110 MB binary is dirty until the kernel writes it back, and
 * three of them written just before a table were being written back while its first cases ran:
 * the floor alone cost 7.1–7.4 ms in the rounds between and 9.5–13.6 ms in the rounds during
 * (measured, one case, 40 rounds), which spread the per-run ratios of those cases over ±0.15.
 * An installed binary is long written back when its hooks run.
 */
export function writeBack(file: string): void {
  const fd = fs.openSync(file, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * writeBackEverything(): every dirty page on the machine written to disk (sync(1)), before a table.
 * `bun run build` just before the bench leaves its own ~110 MB output dirty (measured: Dirty
 * 108 MB in /proc/meminfo right after a build), and the kernel writes dirty pages back once they
 * are 30 s old (vm.dirty_expire_centisecs = 3000): during the first table, which starts ~15 s
 * after the bench does. The copies the bench makes are written back by freshCopy; this is for
 * what it did not write.
 */
export function writeBackEverything(): void {
  Bun.spawnSync(["sync"], { stdout: "ignore", stderr: "ignore" });
}

/**
 * freshCopy(program, target) → target: a new executable copy of program, as `install` makes one
 * (its pages as a copy leaves them), written back to disk (writeBack) so that no bench measures
 * while it is being written.
 */
export function freshCopy(program: string, target: string): string {
  fs.rmSync(target, { force: true });
  fs.copyFileSync(program, target);
  fs.chmodSync(target, 0o755);
  writeBack(target);
  return target;
}
