// bun run build:all → every target of the release matrix (targets/matrix.ts) cross-compiled on
// this machine into dist/, named `velesdb-hooks-<version>-<platform>[.exe]`, plus dist/SHA256SUMS
// in the format `sha256sum -c` and install.sh read ("<hex>  <name>", one line per asset), plus
// dist/install.sh: with `--repo owner/name` (the release workflow passes its repository) the
// script's DEFAULT_REPO line names that repository, so `curl …/install.sh | sh` fetches from
// the releases it was uploaded with; without it the copy keeps the placeholder and refuses to
// guess. install.sh is not in SHA256SUMS: it is what reads that file.
//
//   bun scripts/build-all.ts [--only linux-x64,darwin-arm64] [--out DIR] [--version X.Y.Z] [--repo owner/name]
//
// The version defaults to package.json's and is what each binary's `--version` prints. Builds
// run one after another: each takes about a second once Bun has the target runtime cached, and
// two at once only compete for the same cores.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { assetName, RELEASE_TARGETS, type ReleaseTarget } from "../targets/matrix.ts";
import { compileBinary, packageVersion, ROOT, versionDefine } from "./build.ts";

export interface BuiltAsset {
  readonly target: ReleaseTarget;
  readonly name: string;
  readonly path: string;
  readonly sha256: string;
}

export interface ReleaseOptions {
  readonly outDir: string;
  readonly version: string;
  readonly targets?: readonly ReleaseTarget[];
  /** owner/name written into dist/install.sh; undefined keeps the placeholder. */
  readonly repo?: string;
}

const INSTALL_SH_PLACEHOLDER = 'DEFAULT_REPO="OWNER/velesdb-hooks"';
const REPO_PATTERN = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** stampInstallScript(text, "acme/velesdb-hooks") → install.sh with its one DEFAULT_REPO line naming that repository. */
export function stampInstallScript(text: string, repo: string): string {
  if (!REPO_PATTERN.test(repo)) throw new Error(`repository ${JSON.stringify(repo)} is not owner/name`);
  const lines = text.split("\n");
  const at = lines.flatMap((line, i) => (line === INSTALL_SH_PLACEHOLDER ? [i] : []));
  if (at.length !== 1) throw new Error(`install.sh must hold the line ${INSTALL_SH_PLACEHOLDER} exactly once (found ${at.length})`);
  lines[at[0]!] = `DEFAULT_REPO="${repo}"`;
  return lines.join("\n");
}

// A version is stamped into file names and printed by --version; install.sh matches it
// literally, so it must be a plain semver with no shell or glob characters.
const VERSION_PATTERN = /^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$/;

/** buildRelease({ outDir, version, targets }) → the assets written there, and outDir/SHA256SUMS listing exactly them. */
export function buildRelease(options: ReleaseOptions): BuiltAsset[] {
  const { outDir, version } = options;
  if (!VERSION_PATTERN.test(version)) throw new Error(`version ${JSON.stringify(version)} is not X.Y.Z[-pre]`);
  const script = fs.readFileSync(path.join(ROOT, "install.sh"), "utf8");
  const installScript = options.repo ? stampInstallScript(script, options.repo) : script; // refuses a bad --repo before building
  const targets = options.targets ?? RELEASE_TARGETS;
  fs.mkdirSync(outDir, { recursive: true });
  removeStaleAssets(outDir);
  const built: BuiltAsset[] = [];
  for (const target of targets) {
    const name = assetName(version, target);
    const outfile = path.join(outDir, name);
    compileBinary(path.join(ROOT, "src", "cli.ts"), outfile, [`--target=${target.bunTarget}`, ...versionDefine(version)]);
    built.push({ target, name, path: outfile, sha256: sha256File(outfile) });
  }
  // SHA256SUMS is written last and by rename: a reader never sees a list naming an asset
  // that is not in place yet.
  const sums = built.map((asset) => `${asset.sha256}  ${asset.name}\n`).join("");
  const staging = path.join(outDir, `.SHA256SUMS.${process.pid}`);
  fs.writeFileSync(staging, sums);
  fs.renameSync(staging, path.join(outDir, "SHA256SUMS"));
  fs.writeFileSync(path.join(outDir, "install.sh"), installScript, { mode: 0o755 });
  return built;
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
// be uploaded by a careless glob; only files named like a release asset are removed.
function removeStaleAssets(outDir: string): void {
  const ids = RELEASE_TARGETS.map((t) => t.id.replace(/[-]/g, "\\-")).join("|");
  const pattern = new RegExp(`^velesdb-hooks-[0-9][0-9A-Za-z.\\-]*-(${ids})(\\.exe)?$`);
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
      if (unknown.length > 0) throw new Error(`unknown target ${unknown.join(", ")} (targets: ${RELEASE_TARGETS.map((t) => t.id).join(", ")})`);
      targets = RELEASE_TARGETS.filter((t) => wanted.includes(t.id));
    } else throw new Error(`unknown option ${JSON.stringify(flag)} (options: --only, --out, --version, --repo)`);
  }
  return { outDir, version, targets, repo };
}

if (import.meta.main) {
  try {
    const options = parseArgs(process.argv.slice(2));
    const started = performance.now();
    const built = buildRelease(options);
    for (const asset of built) console.log(`${asset.sha256}  ${shownPath(asset.path)}`);
    console.log(`install.sh → ${shownPath(path.join(options.outDir, "install.sh"))}${options.repo ? ` (for ${options.repo})` : " (no --repo: placeholder kept)"}`);
    console.log(`built ${built.length} assets of ${options.version} and SHA256SUMS in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(`build:all: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
