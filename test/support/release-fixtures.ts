// Fixtures for the install.sh tests: release directories built for this machine (once per
// version per test file), a private HOME per case, install.sh run under a chosen shell, and a
// snapshot of a directory tree precise enough to prove "nothing changed".
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildRelease, packArchive } from "../../scripts/build-all.ts";
import { assetName, binaryName, RELEASE_TARGETS, type ReleaseTarget } from "../../targets/matrix.ts";

export const REPO_ROOT = path.resolve(import.meta.dir, "..", "..");
export const INSTALL_SH = path.join(REPO_ROOT, "install.sh");

/** The shells install.sh must run under; each is the absolute path of an installed program. */
export const SHELLS = {
  dash: ["dash"],
  busybox: ["busybox", "sh"],
  "bash --posix": ["bash", "--posix"],
} as const;
export type ShellName = keyof typeof SHELLS;

/** shellCommand("dash") → argv prefix with the program resolved, or a clear failure. */
export function shellCommand(name: ShellName): string[] {
  const [program, ...rest] = SHELLS[name];
  const resolved = Bun.which(program);
  if (!resolved) throw new Error(`${program} is not installed (the install.sh tests need dash, busybox and bash)`);
  return [resolved, ...rest];
}

/** scriptWithoutMain() → install.sh minus its last line (`main "$@"`): sourcing it only defines functions. */
export function scriptWithoutMain(): string {
  const lines = fs.readFileSync(INSTALL_SH, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (lines.at(-1) !== 'main "$@"') throw new Error('install.sh must end with the line main "$@"');
  return `${lines.slice(0, -1).join("\n")}\n`;
}

/** detectedPlatform(env) → what install.sh's detect_platform prints here (with fake tools on PATH, say). */
export function detectedPlatform(env: Record<string, string>): { exitCode: number; stdout: string; stderr: string } {
  const script = `${scriptWithoutMain()}detect_platform\n`;
  const result = Bun.spawnSync(shellCommand("dash"), {
    stdin: Buffer.from(script),
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout.toString().trim(), stderr: result.stderr.toString() };
}

// Removed by removeTemporaryDirs() in the test file's afterAll, not on process exit: bun test
// does not run a test file's exit handlers, and each release directory holds a ~100 MB asset.
const temporaryDirs: string[] = [];

/** removeTemporaryDirs() → deletes every directory tempDir() made (releases, mirrors, sandboxes). */
export function removeTemporaryDirs(): void {
  for (const dir of temporaryDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  releases.clear();
  binaries.clear();
}

/** tempDir("label") → a fresh real path, removed by removeTemporaryDirs(). */
export function tempDir(label: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `vh-${label}-`)));
  temporaryDirs.push(dir);
  return dir;
}

/** hostTarget() → the matrix target install.sh picks on this machine. */
export function hostTarget(): ReleaseTarget {
  const detected = detectedPlatform({ PATH: process.env.PATH ?? "/usr/bin:/bin" });
  const target = RELEASE_TARGETS.find((t) => t.id === detected.stdout);
  if (detected.exitCode !== 0 || !target)
    throw new Error(
      `install.sh detects ${JSON.stringify(detected.stdout)} here (${detected.stderr.trim()}), which is not in the matrix`,
    );
  return target;
}

const releases = new Map<string, string>();
const binaries = new Map<string, string>();

/**
 * buildHostReleases(["0.1.0", "0.0.1"]) → builds this machine's archive of each version, all at
 * once (each is a compile, which overlap, plus ~2 s of packing), for hostRelease to hand out.
 */
export async function buildHostReleases(versions: readonly string[]): Promise<void> {
  await Promise.all(
    versions
      .filter((version) => !releases.has(version))
      .map(async (version) => {
        const dir = tempDir(`release-${version}`);
        await buildRelease({ outDir: dir, version, targets: [hostTarget()], npmPackages: false }); // install.sh reads the archives only
        releases.set(version, dir);
      }),
  );
}

/** hostRelease("0.1.0") → a directory with this machine's archive of that version and its SHA256SUMS (built by buildHostReleases). */
export function hostRelease(version: string): string {
  const known = releases.get(version);
  if (!known) throw new Error(`no host release of ${version}: call buildHostReleases first`);
  return known;
}

/** hostBinary("0.1.0") → the binary inside hostRelease("0.1.0")'s archive, extracted beside no release. */
export function hostBinary(version: string): string {
  const known = binaries.get(version);
  if (known) return known;
  const dir = tempDir(`binary-${version}`);
  const untar = Bun.spawnSync(["tar", "-xzf", path.join(hostRelease(version), assetFileName(version)), "-C", dir]);
  if (untar.exitCode !== 0) throw new Error(`cannot extract ${assetFileName(version)}: ${untar.stderr.toString()}`);
  const binary = path.join(dir, binaryName(hostTarget()));
  binaries.set(version, binary);
  return binary;
}

/** mirrorOf([dirs]) → a new directory holding every asset of those releases and one SHA256SUMS listing all of them. */
export function mirrorOf(releaseDirs: readonly string[]): string {
  const mirror = tempDir("mirror");
  let sums = "";
  for (const dir of releaseDirs) {
    for (const name of fs.readdirSync(dir)) {
      if (name === "SHA256SUMS") sums += fs.readFileSync(path.join(dir, name), "utf8");
      else if (name !== "install.sh" && name !== "install.ps1")
        fs.symlinkSync(path.join(dir, name), path.join(mirror, name));
    }
  }
  fs.writeFileSync(path.join(mirror, "SHA256SUMS"), sums);
  return mirror;
}

/** releaseWithBinary(version, bytes) → a release whose host archive holds `bytes` as the binary, with a matching SHA256SUMS. */
export function releaseWithBinary(version: string, bytes: Uint8Array | string, label: string): string {
  const staging = tempDir(`${label}-binary`);
  const binary = path.join(staging, binaryName(hostTarget()));
  fs.writeFileSync(binary, bytes, { mode: 0o755 });
  const dir = tempDir(label);
  packArchive(binary, path.join(dir, assetFileName(version)), hostTarget());
  return withSums(dir, version);
}

/** releaseWithArchive(version, bytes) → a release whose host archive is `bytes` (any content), with a matching SHA256SUMS. */
export function releaseWithArchive(version: string, bytes: Uint8Array | string, label: string): string {
  const dir = tempDir(label);
  fs.writeFileSync(path.join(dir, assetFileName(version)), bytes);
  return withSums(dir, version);
}

function withSums(dir: string, version: string): string {
  const asset = assetFileName(version);
  const digest = new Bun.CryptoHasher("sha256").update(fs.readFileSync(path.join(dir, asset))).digest("hex");
  fs.writeFileSync(path.join(dir, "SHA256SUMS"), `${digest}  ${asset}\n`);
  return dir;
}

/** assetFileName("0.1.0") → this machine's archive name for that version. */
export function assetFileName(version: string): string {
  return assetName(version, hostTarget());
}

export interface ShRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ShSandbox {
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  /** ~/.velesdb-hooks/bin/velesdb-hooks: where `velesdb-hooks install` puts itself. */
  readonly stable: string;
  /** ~/.local/bin/velesdb-hooks: the link install.sh makes. */
  readonly link: string;
  readonly claudeSettings: string;
  readonly env: Record<string, string>;
  /** run(args, { shell, env, viaStdin }) → install.sh's exit code and output; viaStdin mimics `curl … | sh -s --`. */
  run(
    args: readonly string[],
    options?: { shell?: ShellName; env?: Record<string, string | undefined>; viaStdin?: string },
  ): Promise<ShRun>;
}

const liveSandboxes: string[] = [];

/** removeSandboxes() → deletes every sandbox made so far (each holds a ~100 MB installed binary); call it in afterEach. */
export function removeSandboxes(): void {
  for (const root of liveSandboxes.splice(0)) fs.rmSync(root, { recursive: true, force: true });
}

/** makeShSandbox("label", ["claude"]) → a private HOME (with those agents' directories) and TMPDIR. */
export function makeShSandbox(label: string, clients: readonly ("claude" | "codex")[] = ["claude"]): ShSandbox {
  const root = tempDir(`sh-${label}`);
  liveSandboxes.push(root);
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(tmp);
  for (const client of clients) fs.mkdirSync(path.join(home, `.${client}`));
  // A clean environment: nothing of the developer's (CLAUDE_CONFIG_DIR, CODEX_HOME,
  // VELESDB_HOOKS_*, XDG_BIN_HOME) may leak into a case.
  const env: Record<string, string> = { PATH: "/usr/bin:/bin", HOME: home, TMPDIR: tmp, LANG: "C", LC_ALL: "C" };
  return {
    root,
    home,
    tmp,
    stable: path.join(home, ".velesdb-hooks", "bin", "velesdb-hooks"),
    link: path.join(home, ".local", "bin", "velesdb-hooks"),
    claudeSettings: path.join(home, ".claude", "settings.json"),
    env,
    async run(args, options = {}) {
      const merged: Record<string, string> = { ...env };
      for (const [key, value] of Object.entries(options.env ?? {})) {
        if (value === undefined) delete merged[key];
        else merged[key] = value;
      }
      const shell = shellCommand(options.shell ?? "dash");
      const argv = options.viaStdin !== undefined ? [...shell, "-s", "--", ...args] : [...shell, INSTALL_SH, ...args];
      const child = Bun.spawn(argv, {
        cwd: root,
        env: merged,
        stdin: options.viaStdin !== undefined ? Buffer.from(options.viaStdin) : "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, exitCode] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      return { exitCode, stdout, stderr };
    },
  };
}

/** toolsDir(["curl", …]) → a directory of links to those programs (the ones installed), for a PATH that lacks the rest. */
export function toolsDir(names: readonly string[], extra: Record<string, string> = {}): string {
  const dir = tempDir("tools");
  for (const name of names) {
    const resolved = Bun.which(name, { PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" });
    if (resolved) fs.symlinkSync(resolved, path.join(dir, name));
  }
  for (const [name, script] of Object.entries(extra)) fs.writeFileSync(path.join(dir, name), script, { mode: 0o755 });
  return dir;
}

/** Programs install.sh calls, apart from the downloader and the checksum tool. */
export const BASE_TOOLS = [
  "uname",
  "mktemp",
  "awk",
  "chmod",
  "ln",
  "mv",
  "rm",
  "readlink",
  "tr",
  "sed",
  "wc",
  "grep",
  "cat",
  "mkdir",
  "ldd",
  "getconf",
  "tar",
  "gzip",
] as const;

/**
 * snapshotTree(dir) → one line per entry: path, type, mode, size, mtime and content hash
 * (or link target). Two equal snapshots mean nothing under dir was created, removed,
 * rewritten or re-linked.
 */
export function snapshotTree(dir: string): string[] {
  const lines: string[] = [];
  const walk = (current: string): void => {
    for (const name of fs.readdirSync(current).sort()) {
      const full = path.join(current, name);
      const st = fs.lstatSync(full);
      const rel = path.relative(dir, full);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) lines.push(`${rel} link ${fs.readlinkSync(full)} ${st.mtimeMs} ino=${st.ino}`);
      else if (st.isDirectory()) {
        lines.push(`${rel} dir ${mode}`);
        walk(full);
      } else {
        const digest = new Bun.CryptoHasher("sha256").update(fs.readFileSync(full)).digest("hex");
        lines.push(`${rel} file ${mode} ${st.size} ${st.mtimeMs} ino=${st.ino} ${digest}`);
      }
    }
  };
  walk(dir);
  return lines;
}
