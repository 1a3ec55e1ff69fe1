// The release on the npm registry, the layout native-binary tools use there (esbuild, Biome,
// the agents themselves): a main package `velesdb-hooks` holding only the launcher
// (npm/launcher.js) and listing, as optionalDependencies at its own exact version, one package
// per target of targets/matrix.ts — `velesdb-hooks-<id>`, declaring `os`, `cpu` and on Linux
// `libc`, holding only that target's binary. npm installs the one that fits and skips the
// rest; no install script runs. scripts/build-all.ts writes the tarballs (packDirectory: the
// layout of `npm pack`) into <out>/npm/ beside the archives; scripts/publish-npm.ts publishes them.
import * as fs from "node:fs";
import * as path from "node:path";
import { binaryName, RELEASE_TARGETS, type ReleaseTarget } from "../targets/matrix.ts";
import { packageDescription } from "./host-names.ts";
import { writeTarGz } from "./tar-gz.ts";

export const MAIN_PACKAGE = "velesdb-hooks";
/** Every package's description: package.json's, built from the host table (scripts/host-names.ts). */
export const DESCRIPTION = packageDescription();

/** platformPackageName(target) → "velesdb-hooks-linux-arm64-musl". */
export function platformPackageName(target: ReleaseTarget): string {
  return `${MAIN_PACKAGE}-${target.id}`;
}

/** npmPlatform(target) → the `os`/`cpu`/`libc` fields npm matches against process.platform, process.arch and the C library. */
export function npmPlatform(target: ReleaseTarget): { os: string[]; cpu: string[]; libc?: string[] } {
  const os = target.os === "windows" ? "win32" : target.os;
  return target.libc ? { os: [os], cpu: [target.arch], libc: [target.libc] } : { os: [os], cpu: [target.arch] };
}

export interface PackedPackage {
  readonly name: string;
  /** The tarball's file name in <out>/npm/. */
  readonly file: string;
  readonly path: string;
}

/** The fields every package shares; `repository` only with --repo (npm's provenance checks it against the workflow's repository). */
function commonFields(version: string, repo: string | undefined): Record<string, unknown> {
  return {
    version,
    description: DESCRIPTION,
    license: "MIT",
    ...(repo
      ? {
          repository: { type: "git", url: `git+https://github.com/${repo}.git` },
          homepage: `https://github.com/${repo}#readme`,
        }
      : {}),
  };
}

/** packPlatformPackage(target, binary, version, repo, npmDir) → <npmDir>/velesdb-hooks-<id>-<version>.tgz holding package.json and bin/<binary>. */
export function packPlatformPackage(
  target: ReleaseTarget,
  binary: string,
  version: string,
  repo: string | undefined,
  npmDir: string,
): PackedPackage {
  const name = platformPackageName(target);
  return packDirectory(npmDir, name, version, (dir) => {
    const manifest = {
      name,
      ...commonFields(version, repo),
      ...npmPlatform(target),
      files: [`bin/${binaryName(target)}`],
      preferUnplugged: true,
    };
    fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    fs.writeFileSync(
      path.join(dir, "README.md"),
      `# ${name}\n\nThe ${target.id} binary of [velesdb-hooks](https://www.npmjs.com/package/${MAIN_PACKAGE}). Install \`${MAIN_PACKAGE}\`, which picks this package on ${target.id}.\n`,
    );
    fs.mkdirSync(path.join(dir, "bin"));
    fs.copyFileSync(binary, path.join(dir, "bin", binaryName(target)));
    fs.chmodSync(path.join(dir, "bin", binaryName(target)), 0o755);
  });
}

/** packMainPackage(launcher, version, repo, npmDir) → the launcher package, its optionalDependencies naming every target of the matrix at this exact version. */
export function packMainPackage(
  launcher: string,
  version: string,
  repo: string | undefined,
  npmDir: string,
): PackedPackage {
  return packDirectory(npmDir, MAIN_PACKAGE, version, (dir) => {
    const optionalDependencies = Object.fromEntries(RELEASE_TARGETS.map((t) => [platformPackageName(t), version]));
    const manifest = {
      name: MAIN_PACKAGE,
      ...commonFields(version, repo),
      bin: { [MAIN_PACKAGE]: "bin/velesdb-hooks.js" },
      files: ["bin/velesdb-hooks.js"],
      engines: { node: ">=18" },
      optionalDependencies,
    };
    fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    fs.writeFileSync(path.join(dir, "README.md"), mainReadme(repo));
    fs.mkdirSync(path.join(dir, "bin"));
    fs.writeFileSync(path.join(dir, "bin", "velesdb-hooks.js"), launcher, { mode: 0o755 });
  });
}

function mainReadme(repo: string | undefined): string {
  const home = repo ? `https://github.com/${repo}` : "the project's repository";
  return [
    `# ${MAIN_PACKAGE}`,
    "",
    DESCRIPTION,
    "",
    "```sh",
    "npx velesdb-hooks install",
    "```",
    "",
    "puts the hooks to work for every agent installed on this machine; `velesdb-hooks check`, `doctor` and `uninstall` do what they say.",
    "`install` copies the native binary to `~/.velesdb-hooks/bin/`, and the hooks run that binary directly: no hook starts Node.",
    "",
    `This package is a small launcher; npm installs the binary for your platform from one of its optional dependencies. Documentation: ${home}.`,
    "",
  ].join("\n");
}

/** npm's own fixed mtime for every entry of a packed tarball (pacote); ours match it. */
const NPM_TARBALL_MTIME = new Date("1985-10-26T08:15:00.000Z");

/**
 * packDirectory(npmDir, name, version, fill) → <npmDir>/<name>-<version>.tgz, laid out as
 * `npm pack` lays it out: every file under `package/`, no directory entries, owner 0, mode 644
 * (755 for a file fill made executable), npm's fixed mtime. fill writes exactly the files the
 * package holds (no `files` or .npmignore to apply). Not `npm pack` itself: its level-9 zlib
 * is most of a release's packing time (scripts/tar-gz.ts). test/release.test.ts compares the
 * launcher package with what `npm pack` makes of the same files.
 */
function packDirectory(npmDir: string, name: string, version: string, fill: (dir: string) => void): PackedPackage {
  fs.mkdirSync(npmDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(npmDir, `.package-${name}-`));
  try {
    const root = path.join(staging, "package");
    fs.mkdirSync(root);
    fill(root);
    const files = filesUnder(root).map((f) => path.join("package", f));
    for (const file of files) {
      const full = path.join(staging, file);
      fs.chmodSync(full, fs.statSync(full).mode & 0o100 ? 0o755 : 0o644);
    }
    const tarball = `${name}-${version}.tgz`;
    writeTarGz(path.join(npmDir, tarball), staging, files, NPM_TARBALL_MTIME);
    return { name, file: tarball, path: path.join(npmDir, tarball) };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** filesUnder(dir) → every regular file below dir, relative, sorted (the tarball's order). */
function filesUnder(dir: string, prefix = ""): string[] {
  return fs
    .readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = path.join(prefix, entry.name);
      if (entry.isDirectory()) return filesUnder(dir, relative);
      if (!entry.isFile()) throw new Error(`${relative} is neither a file nor a directory`);
      return [relative];
    })
    .sort();
}
