// Publishes the npm tarballs scripts/build-all.ts wrote (<out>/npm/): every platform package
// first, the launcher package last, so no one can install a `velesdb-hooks` whose optional
// dependencies are not there yet. The release workflow runs it on a version tag with
// --provenance; the tests run it against a registry on 127.0.0.1 (npm's own configuration —
// `npm_config_registry`, `npm_config_userconfig` — says where).
//
//   bun scripts/publish-npm.ts DIR [--provenance]
//
// A re-run after a partial failure skips what the registry already holds with the same bytes
// (its integrity equals the tarball's) and stops at anything it holds with other bytes: a
// version on npm can never be replaced.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MAIN_PACKAGE } from "./npm-packages.ts";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

interface Tarball {
  readonly path: string;
  readonly name: string;
  readonly version: string;
  readonly optionalDependencies: Record<string, string>;
  /** "sha512-<base64>", the form npm records in dist.integrity and lockfiles. */
  readonly integrity: string;
}

/** readTarball(file) → its package.json's name, version and optionalDependencies, and its integrity. */
function readTarball(file: string): Tarball {
  const tar = spawnSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (tar.status !== 0) throw new Error(`${path.basename(file)} holds no package/package.json`);
  const manifest = JSON.parse(tar.stdout) as {
    name?: unknown;
    version?: unknown;
    optionalDependencies?: Record<string, string>;
  };
  if (typeof manifest.name !== "string" || typeof manifest.version !== "string")
    throw new Error(`${path.basename(file)}: package.json has no name or version`);
  const integrity = `sha512-${createHash("sha512").update(fs.readFileSync(file)).digest("base64")}`;
  return {
    path: file,
    name: manifest.name,
    version: manifest.version,
    optionalDependencies: manifest.optionalDependencies ?? {},
    integrity,
  };
}

/** publishOrder(tarballs) → platform packages then the launcher; throws unless they are exactly one release of one version. */
export function publishOrder(tarballs: readonly Tarball[]): Tarball[] {
  const main = tarballs.filter((t) => t.name === MAIN_PACKAGE);
  if (main.length !== 1) throw new Error(`expected one ${MAIN_PACKAGE} tarball, found ${main.length}`);
  const { version, optionalDependencies } = main[0]!;
  const platform = tarballs.filter((t) => t.name !== MAIN_PACKAGE);
  const wanted = Object.entries(optionalDependencies);
  for (const [name, range] of wanted) {
    if (range !== version)
      throw new Error(`${MAIN_PACKAGE} ${version} asks for ${name}@${range}: the versions must move together`);
    const found = platform.filter((t) => t.name === name);
    if (found.length !== 1 || found[0]!.version !== version)
      throw new Error(
        `${name}@${version} is missing from the tarballs (found ${found.map((t) => t.version).join(", ") || "none"})`,
      );
  }
  const extra = platform.filter((t) => !(t.name in optionalDependencies));
  if (extra.length > 0)
    throw new Error(`tarballs ${MAIN_PACKAGE} does not list: ${extra.map((t) => t.name).join(", ")}`);
  return [...platform, main[0]!];
}

/** publishedIntegrity(name, version) → the registry's dist.integrity, or undefined when it has no such version. */
function publishedIntegrity(name: string, version: string): string | undefined {
  const view = spawnSync(npm, ["view", `${name}@${version}`, "dist.integrity", "--json"], { encoding: "utf8" });
  if (view.status !== 0) {
    if (/E404|404 Not Found/.test(view.stderr)) return undefined; // no package of that name yet
    throw new Error(`npm view ${name}@${version} failed: ${view.stderr.trim().split("\n")[0]}`);
  }
  const out = view.stdout.trim();
  return out === "" ? undefined : (JSON.parse(out) as string);
}

function publish(dir: string, provenance: boolean): void {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".tgz"))
    .sort();
  const order = publishOrder(files.map((f) => readTarball(path.join(dir, f))));
  for (const tarball of order) {
    const label = `${tarball.name}@${tarball.version}`;
    const existing = publishedIntegrity(tarball.name, tarball.version);
    if (existing === tarball.integrity) {
      console.log(`${label}: already published with these bytes`);
      continue;
    }
    if (existing !== undefined)
      throw new Error(
        `${label} is already published with other bytes (${existing}); a published version cannot be replaced: release a new version`,
      );
    // npm refuses to put a prerelease on `latest` without being told; it goes to `next`.
    const tag = tarball.version.includes("-") ? ["--tag", "next"] : [];
    const args = ["publish", tarball.path, "--access", "public", ...tag, ...(provenance ? ["--provenance"] : [])];
    const result = spawnSync(npm, args, { stdio: ["ignore", "inherit", "inherit"] });
    if (result.status !== 0)
      throw new Error(`npm publish ${label} failed (${result.error?.message ?? `exit ${result.status}`})`);
    console.log(`${label}: published`);
  }
}

if (import.meta.main) {
  try {
    const args = process.argv.slice(2);
    const provenance = args.includes("--provenance");
    const rest = args.filter((a) => a !== "--provenance");
    if (rest.length !== 1 || rest[0]!.startsWith("-"))
      throw new Error("usage: bun scripts/publish-npm.ts DIR [--provenance]");
    publish(path.resolve(rest[0]!), provenance);
  } catch (error) {
    console.error(`publish-npm: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
