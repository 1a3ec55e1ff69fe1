// The release matrix (docs/contract.md §11): one asset per OS/arch/libc, all cross-compiled on one Linux
// machine by `bun run build:all` (scripts/build-all.ts) and verified by test/release.test.ts.
//
// Assets are archives named with the version: `velesdb-hooks-<version>-<id>.tar.gz` (Linux,
// macOS) or `.zip` (Windows), e.g. `velesdb-hooks-0.1.0-linux-arm64-musl.tar.gz`, each holding
// one file, `velesdb-hooks` (`velesdb-hooks.exe`). The binary compresses to about half, and
// tar/gzip and Expand-Archive are on every machine that installs it. A downloaded file says
// what it is, several versions can sit in one mirror directory, and install.sh / install.ps1
// find their asset by this exact pattern in SHA256SUMS — keep `assetName`, install.sh's
// `sums_lines` and install.ps1's `Find-Asset` in step.
//
// x64 targets use Bun's "baseline" runtime (no AVX2 requirement). The default x64 runtime
// dies with SIGILL on CPUs older than Haswell and under Rosetta before macOS 15; a hook
// binary that crashes is worse than one a few percent slower, and one asset per platform
// keeps install.sh free of CPU-feature probing. arm64 has no such split.
//
// Bun fetches each target's runtime from the npm registry (`@oven/bun-<os>-<arch>[-musl]
// [-baseline]`, at the version of the running bun, pinned in package.json) into its install
// cache on first use; nothing else is downloaded.

export type TargetOs = "linux" | "darwin" | "windows";
export type TargetArch = "x64" | "arm64";

export interface ReleaseTarget {
  /** Platform id as it appears in asset names and install.sh: `<os>-<arch>[-musl]`. */
  readonly id: string;
  readonly os: TargetOs;
  readonly arch: TargetArch;
  /** Linux only: which C library the runtime links against. */
  readonly libc?: "glibc" | "musl";
  /** The value of `bun build --target`. */
  readonly bunTarget: string;
  /** What `file -b` must say about the asset (every fragment must appear). */
  readonly fileSays: readonly string[];
}

export const RELEASE_TARGETS: readonly ReleaseTarget[] = [
  {
    id: "linux-x64",
    os: "linux",
    arch: "x64",
    libc: "glibc",
    bunTarget: "bun-linux-x64-baseline",
    fileSays: ["ELF 64-bit LSB", "x86-64", "interpreter /lib64/ld-linux-x86-64.so.2"],
  },
  {
    id: "linux-arm64",
    os: "linux",
    arch: "arm64",
    libc: "glibc",
    bunTarget: "bun-linux-arm64",
    fileSays: ["ELF 64-bit LSB", "ARM aarch64", "interpreter /lib/ld-linux-aarch64.so.1"],
  },
  {
    id: "linux-x64-musl",
    os: "linux",
    arch: "x64",
    libc: "musl",
    bunTarget: "bun-linux-x64-musl-baseline",
    fileSays: ["ELF 64-bit LSB", "x86-64", "interpreter /lib/ld-musl-x86_64.so.1"],
  },
  {
    id: "linux-arm64-musl",
    os: "linux",
    arch: "arm64",
    libc: "musl",
    bunTarget: "bun-linux-arm64-musl",
    fileSays: ["ELF 64-bit LSB", "ARM aarch64", "interpreter /lib/ld-musl-aarch64.so.1"],
  },
  {
    id: "darwin-x64",
    os: "darwin",
    arch: "x64",
    bunTarget: "bun-darwin-x64-baseline",
    fileSays: ["Mach-O 64-bit", "x86_64", "executable"],
  },
  {
    id: "darwin-arm64",
    os: "darwin",
    arch: "arm64",
    bunTarget: "bun-darwin-arm64",
    fileSays: ["Mach-O 64-bit", "arm64", "executable"],
  },
  {
    id: "windows-x64",
    os: "windows",
    arch: "x64",
    bunTarget: "bun-windows-x64-baseline",
    fileSays: ["PE32+ executable", "x86-64"],
  },
];

/** assetName("0.1.0", target) → "velesdb-hooks-0.1.0-linux-x64.tar.gz" (".zip" for Windows). */
export function assetName(version: string, target: ReleaseTarget): string {
  return `velesdb-hooks-${version}-${target.id}${archiveExtension(target)}`;
}

/** archiveExtension(target) → ".zip" for Windows (Expand-Archive reads it), ".tar.gz" elsewhere. */
export function archiveExtension(target: ReleaseTarget): ".zip" | ".tar.gz" {
  return target.os === "windows" ? ".zip" : ".tar.gz";
}

/** binaryName(target) → the one file inside the archive: "velesdb-hooks" or "velesdb-hooks.exe". */
export function binaryName(target: ReleaseTarget): string {
  return target.os === "windows" ? "velesdb-hooks.exe" : "velesdb-hooks";
}

/** hostTargetId() → the matrix id of the machine running this, or undefined when it is not in the matrix. */
export function hostTargetId(platform: NodeJS.Platform = process.platform, arch: string = process.arch, musl = false): string | undefined {
  const os = platform === "win32" ? "windows" : platform;
  const id = `${os}-${arch}${musl ? "-musl" : ""}`;
  return RELEASE_TARGETS.some((t) => t.id === id) ? id : undefined;
}
