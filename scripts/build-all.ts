// bun run build:all → every target of the release matrix (targets/matrix.ts) cross-compiled on
// this machine and packed into dist/ as `velesdb-hooks-<version>-<platform>.tar.gz` (`.zip` for
// Windows), each archive holding the one binary; plus dist/SHA256SUMS listing the archives in
// the format `sha256sum -c`, install.sh and install.ps1 read ("<hex>  <name>", one line each),
// plus dist/install.sh and dist/install.ps1: with `--repo owner/name` (the release workflow
// passes its repository) each script's default-repository line names that repository, so
// `curl …/install.sh | sh` and `irm …/install.ps1 | iex` fetch from the releases they were
// uploaded with; without it the copies keep the placeholder and refuse to guess. The scripts
// are not in SHA256SUMS: they are what reads that file. The bare binary for this machine
// comes from `bun run build` (dist/velesdb-hooks).
//
//   bun scripts/build-all.ts [--only linux-x64,darwin-arm64] [--out DIR] [--version X.Y.Z] [--repo owner/name]
//
// Beside them, <out>/npm/ holds the release for the npm registry (scripts/npm-packages.ts):
// one tarball per target, `velesdb-hooks-<id>-<version>.tgz`, and the launcher package
// `velesdb-hooks-<version>.tgz`, all of the same version; scripts/publish-npm.ts publishes them.
//
// The version defaults to package.json's and is what each binary's `--version` prints. Two
// targets are built at once: a compile takes about a second once Bun has the target runtime
// cached, then packing a ~110 MB binary takes ~2 s of one core (tar + libdeflate,
// scripts/tar-gz.ts) per .tar.gz or npm tarball and ~7 s for Windows' zip, so a second target
// keeps the other core busy. Archives are made with GNU tar and zip, which the Linux machines
// that run this have (Debian: `apt-get install zip`).
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { archiveExtension, assetName, binaryName, RELEASE_TARGETS, type ReleaseTarget } from "../targets/matrix.ts";
import { compileBinaryAsync, packageVersion, ROOT, versionDefine } from "./build.ts";
import { packMainPackage, packPlatformPackage, type PackedPackage } from "./npm-packages.ts";
import { writeTarGz } from "./tar-gz.ts";

export interface BuiltAsset {
  readonly target: ReleaseTarget;
  /** The archive's file name, as SHA256SUMS lists it. */
  readonly name: string;
  readonly path: string;
  readonly sha256: string;
  readonly archiveBytes: number;
  /** Size of the binary inside: what an install puts on disk. */
  readonly binaryBytes: number;
}

export interface ReleaseOptions {
  readonly outDir: string;
  readonly version: string;
  readonly targets?: readonly ReleaseTarget[];
  /** owner/name written into dist/install.sh, dist/install.ps1 and the npm launcher; undefined keeps the placeholders. */
  readonly repo?: string;
  /** false: archives only, no <out>/npm/ (the install.sh tests need just this machine's archive). */
  readonly npmPackages?: boolean;
}

/** The npm tarballs buildRelease wrote: one per built target, then the launcher package. */
export const NPM_DIR = "npm";

const INSTALL_SH_PLACEHOLDER = 'DEFAULT_REPO="OWNER/velesdb-hooks"';
const INSTALL_PS1_PLACEHOLDER = '    $DefaultRepo = "OWNER/velesdb-hooks"';
const LAUNCHER_PLACEHOLDER = 'const REPOSITORY = "OWNER/velesdb-hooks";';
const REPO_PATTERN = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** stampInstallScript(text, "acme/velesdb-hooks") → install.sh with its one DEFAULT_REPO line naming that repository. */
export function stampInstallScript(text: string, repo: string): string {
  return stampLine(text, INSTALL_SH_PLACEHOLDER, `DEFAULT_REPO="${checkedRepo(repo)}"`, "install.sh");
}

/** stampPowerShellScript(text, "acme/velesdb-hooks") → install.ps1 with its one $DefaultRepo line naming that repository. */
export function stampPowerShellScript(text: string, repo: string): string {
  return stampLine(text, INSTALL_PS1_PLACEHOLDER, `    $DefaultRepo = "${checkedRepo(repo)}"`, "install.ps1");
}

/** stampLauncher(text, "acme/velesdb-hooks") → npm/launcher.js naming that repository's release in its "no binary" line. */
export function stampLauncher(text: string, repo: string): string {
  return stampLine(text, LAUNCHER_PLACEHOLDER, `const REPOSITORY = "${checkedRepo(repo)}";`, "npm/launcher.js");
}

function checkedRepo(repo: string): string {
  if (!REPO_PATTERN.test(repo)) throw new Error(`repository ${JSON.stringify(repo)} is not owner/name`);
  return repo;
}

function stampLine(text: string, placeholder: string, replacement: string, script: string): string {
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.split(newline);
  const at = lines.flatMap((line, i) => (line === placeholder ? [i] : []));
  if (at.length !== 1) throw new Error(`${script} must hold the line ${placeholder} exactly once (found ${at.length})`);
  lines[at[0]!] = replacement;
  return lines.join(newline);
}

// A version is stamped into file names and printed by --version; install.sh matches it
// literally, so it must be a plain semver with no shell or glob characters.
const VERSION_PATTERN = /^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$/;

/**
 * Targets built at once. Compiling is mostly I/O, packing mostly gzip on one core: two targets
 * in flight keep two cores busy (measured: the 7-target matrix on two
 * cores, docs/performance/2026-12-02-suite-time.md).
 */
const BUILD_JOBS = Math.max(1, Math.min(2, os.availableParallelism()));

/** buildRelease({ outDir, version, targets }) → the archives written there, outDir/SHA256SUMS listing exactly them, and outDir/npm/. */
export async function buildRelease(options: ReleaseOptions): Promise<BuiltAsset[]> {
  return (await buildReleaseWithPackages(options)).assets;
}

export async function buildReleaseWithPackages(
  options: ReleaseOptions,
): Promise<{ assets: BuiltAsset[]; npmPackages: PackedPackage[] }> {
  const { outDir, version } = options;
  if (!VERSION_PATTERN.test(version)) throw new Error(`version ${JSON.stringify(version)} is not X.Y.Z[-pre]`);
  // Both scripts are read and stamped first: a bad --repo is refused before anything is built.
  let shScript = fs.readFileSync(path.join(ROOT, "install.sh"), "utf8");
  let ps1Script = fs.readFileSync(path.join(ROOT, "install.ps1"), "utf8");
  let launcher = fs.readFileSync(path.join(ROOT, "npm", "launcher.js"), "utf8");
  if (options.repo) {
    shScript = stampInstallScript(shScript, options.repo);
    ps1Script = stampPowerShellScript(ps1Script, options.repo);
    launcher = stampLauncher(launcher, options.repo);
  }
  const withNpm = options.npmPackages !== false;
  const npmDir = path.join(outDir, NPM_DIR);
  const targets = options.targets ?? RELEASE_TARGETS;
  fs.mkdirSync(outDir, { recursive: true });
  removeStaleAssets(outDir);
  // npm/ is build:all's own: an earlier run's tarballs (another version, say) must not be published with these.
  fs.rmSync(npmDir, { recursive: true, force: true });
  const buildOne = async (
    target: ReleaseTarget,
  ): Promise<{ asset: BuiltAsset; npmPackage: PackedPackage | undefined }> => {
    // Each binary is compiled into a private directory of its own, so the archive holds
    // exactly one entry with the plain name install.sh and install.ps1 extract.
    const staging = fs.mkdtempSync(path.join(outDir, `.build-${target.id}-`));
    try {
      const binary = path.join(staging, binaryName(target));
      await compileBinaryAsync(path.join(ROOT, "src", "cli.ts"), binary, [
        `--target=${target.bunTarget}`,
        ...versionDefine(version),
      ]);
      const name = assetName(version, target);
      const archive = path.join(outDir, name);
      await packArchiveAsync(binary, archive, target);
      const asset = {
        target,
        name,
        path: archive,
        sha256: sha256File(archive),
        archiveBytes: fs.statSync(archive).size,
        binaryBytes: fs.statSync(binary).size,
      };
      const npmPackage = withNpm ? packPlatformPackage(target, binary, version, options.repo, npmDir) : undefined;
      return { asset, npmPackage };
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  };
  // Results keep the matrix's order, whatever order the builds finish in.
  const results: Array<{ asset: BuiltAsset; npmPackage: PackedPackage | undefined }> = new Array(targets.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(BUILD_JOBS, targets.length) }, async () => {
      for (let i = next++; i < targets.length; i = next++) results[i] = await buildOne(targets[i]!);
    }),
  );
  const built = results.map((r) => r.asset);
  const npmPackages = results.flatMap((r) => (r.npmPackage ? [r.npmPackage] : []));
  // SHA256SUMS is written last and by rename: a reader never sees a list naming an asset
  // that is not in place yet.
  const sums = built.map((asset) => `${asset.sha256}  ${asset.name}\n`).join("");
  const staging = path.join(outDir, `.SHA256SUMS.${process.pid}`);
  fs.writeFileSync(staging, sums);
  fs.renameSync(staging, path.join(outDir, "SHA256SUMS"));
  fs.writeFileSync(path.join(outDir, "install.sh"), shScript, { mode: 0o755 });
  fs.writeFileSync(path.join(outDir, "install.ps1"), ps1Script, { mode: 0o644 });
  if (withNpm) npmPackages.push(packMainPackage(launcher, version, options.repo, npmDir));
  return { assets: built, npmPackages };
}

const ARCHIVE_EPOCH = new Date("2020-01-01T00:00:00Z");

/** packArchive(binary, archive, target) → archive holds the one file `binary`, at the top level, mode 755. */
export function packArchive(binary: string, archive: string, target: ReleaseTarget): void {
  const { dir, file, partial } = preparePack(binary, archive);
  if (archiveExtension(target) === ".zip") {
    run("zip", zipArgs(partial, binary), dir, "Debian: apt-get install zip");
    fs.renameSync(partial, archive);
  } else {
    writeTarGz(archive, dir, [file], ARCHIVE_EPOCH);
  }
}

/** packArchiveAsync(binary, archive, target) → packArchive, with zip's ~7 s run without blocking (tar.gz: scripts/tar-gz.ts, ~2 s in this process). */
export async function packArchiveAsync(binary: string, archive: string, target: ReleaseTarget): Promise<void> {
  if (archiveExtension(target) !== ".zip") return packArchive(binary, archive, target);
  const { dir, partial } = preparePack(binary, archive);
  const zip = Bun.spawn(["zip", ...zipArgs(partial, binary)], {
    cwd: dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([zip.exited, new Response(zip.stderr).text()]);
  if (code !== 0) throw new Error(`zip failed (exit ${code}): ${stderr.trim()}`);
  fs.renameSync(partial, archive);
}

function preparePack(binary: string, archive: string): { dir: string; file: string; partial: string } {
  fs.chmodSync(binary, 0o755);
  fs.utimesSync(binary, ARCHIVE_EPOCH, ARCHIVE_EPOCH);
  const partial = `${archive}.partial-${process.pid}`;
  fs.rmSync(partial, { force: true });
  return { dir: path.dirname(binary), file: path.basename(binary), partial };
}

const zipArgs = (partial: string, binary: string): string[] => ["-q", "-X", "-j", partial, binary];

function run(program: string, args: readonly string[], cwd: string, hint: string): void {
  const result = spawnSync(program, args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
  if (result.error) throw new Error(`${program} is needed to pack the release (${hint}): ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`${program} failed (exit ${result.status}): ${result.stderr.toString().trim()}`);
}

/** sha256File(path) → lowercase hex digest, read in chunks (assets are ~100 MB). */
export function sha256File(file: string): string {
  const hash = createHash("sha256");
  const fd = fs.openSync(file, "r");
  try {
    const chunk = Buffer.alloc(1 << 20);
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest("hex");
}

// Assets of an earlier version or an earlier run would otherwise sit next to the new ones and
// be uploaded by a careless glob; only files named like a release asset (an archive, or a bare
// binary of the releases before archives) are removed.
function removeStaleAssets(outDir: string): void {
  const ids = RELEASE_TARGETS.map((t) => t.id.replace(/[-]/g, "\\-")).join("|");
  const pattern = new RegExp(`^velesdb-hooks-[0-9][0-9A-Za-z.\\-]*-(${ids})(\\.exe|\\.tar\\.gz|\\.zip)?$`);
  for (const entry of fs.readdirSync(outDir)) {
    if (pattern.test(entry) || entry === "SHA256SUMS") fs.rmSync(path.join(outDir, entry), { force: true });
  }
}

/** shownPath(p) → relative to the repository when inside it ("dist/SHA256SUMS"), else as given. */
function shownPath(p: string): string {
  const relative = path.relative(ROOT, p);
  return relative.startsWith("..") || path.isAbsolute(relative) ? p : relative;
}

function parseArgs(argv: readonly string[]): ReleaseOptions {
  let outDir = path.join(ROOT, "dist");
  let version = packageVersion();
  let targets: readonly ReleaseTarget[] = RELEASE_TARGETS;
  let repo: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    i++;
    if (flag === "--out") outDir = path.resolve(value);
    else if (flag === "--version") version = value.replace(/^v/, "");
    else if (flag === "--repo") repo = value;
    else if (flag === "--only") {
      const wanted = value.split(",");
      const unknown = wanted.filter((id) => !RELEASE_TARGETS.some((t) => t.id === id));
      if (unknown.length > 0)
        throw new Error(
          `unknown target ${unknown.join(", ")} (targets: ${RELEASE_TARGETS.map((t) => t.id).join(", ")})`,
        );
      targets = RELEASE_TARGETS.filter((t) => wanted.includes(t.id));
    } else throw new Error(`unknown option ${JSON.stringify(flag)} (options: --only, --out, --version, --repo)`);
  }
  return { outDir, version, targets, repo };
}

if (import.meta.main) {
  try {
    const options = parseArgs(process.argv.slice(2));
    const started = performance.now();
    const { assets: built, npmPackages } = await buildReleaseWithPackages(options);
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    for (const asset of built)
      console.log(
        `${asset.sha256}  ${shownPath(asset.path)}  (${mb(asset.archiveBytes)}; binary ${mb(asset.binaryBytes)})`,
      );
    const scripts = `${shownPath(path.join(options.outDir, "install.sh"))}, ${shownPath(path.join(options.outDir, "install.ps1"))}`;
    for (const pkg of npmPackages) console.log(`npm package ${pkg.name} → ${shownPath(pkg.path)}`);
    console.log(
      `install scripts → ${scripts}${options.repo ? ` (for ${options.repo})` : " (no --repo: placeholders kept)"}`,
    );
    console.log(
      `built ${built.length} assets of ${options.version} and SHA256SUMS in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  } catch (error) {
    console.error(`build:all: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
