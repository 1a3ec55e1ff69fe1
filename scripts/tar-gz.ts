// The release's .tar.gz archives and its npm tarballs: GNU tar writes a ustar stream (owner and
// group 0, one mtime for every entry), Bun's libdeflate compresses it at level 6.
//
// Why not gzip(1) or `npm pack`: on a ~110 MB binary (linux-x64, measured 2026-12 on a 2-core
// machine) `gzip -6` took 7.2 s of one core and wrote 53.1 MB; `npm pack` (Node's zlib, level 9
// fixed by npm) 7.5 s and 53.8 MB; libdeflate at level 6 2.0 s and 52.7 MB. A release packs
// fourteen of them (an archive and an npm tarball per target), so this is most of build:all's
// CPU, and users download the smaller file.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";

/** writeTarGz(file, dir, entries, mtime) → file holds exactly `entries` (paths relative to dir, in that order), gzip-compressed; written beside and renamed. */
export function writeTarGz(file: string, dir: string, entries: readonly string[], mtime: Date): void {
  const args = [
    "--format=ustar",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    `--mtime=@${Math.floor(mtime.getTime() / 1000)}`,
    "-cf",
    "-",
    "-C",
    dir,
    "--",
    ...entries,
  ];
  const tar = spawnSync("tar", args, { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 30 });
  if (tar.status !== 0)
    throw new Error(
      `tar failed for ${file}: ${tar.stderr?.toString().trim() || tar.error?.message || `exit ${tar.status}`}`,
    );
  const partial = `${file}.partial-${process.pid}`;
  try {
    fs.writeFileSync(partial, Bun.gzipSync(tar.stdout, { library: "libdeflate", level: 6 }));
    fs.renameSync(partial, file);
  } finally {
    fs.rmSync(partial, { force: true });
  }
}
