// The release build (SPEC §11): `bun run build:all` cross-compiles every target of
// targets/matrix.ts on this Linux machine, names each asset with the version, and writes a
// SHA256SUMS that `sha256sum -c` accepts. Each asset is checked for the format its platform
// loads (file(1) and our own header reader agree), and the one this machine can run is run.
// The build happens once for the file (about 10 s with Bun's target runtimes cached; the first
// run fetches each runtime, ~100 MB unpacked, from the npm registry).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { packageVersion } from "../scripts/build.ts";
import { assetName, RELEASE_TARGETS, type ReleaseTarget } from "../targets/matrix.ts";
import { readFormat } from "./support/release-formats.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const VERSION = packageVersion();
const REPO = "acme/velesdb-hooks";
const STALE = "velesdb-hooks-0.0.0-linux-x64";

let out: string;
let build: { exitCode: number; stdout: string; stderr: string; seconds: number };

beforeAll(async () => {
  out = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-build-all-")));
  fs.writeFileSync(path.join(out, STALE), "an asset of an earlier build\n");
  fs.writeFileSync(path.join(out, "notes.txt"), "not ours\n");
  const started = performance.now();
  const child = Bun.spawn([process.execPath, path.join(ROOT, "scripts", "build-all.ts"), "--out", out, "--repo", REPO], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  build = { exitCode, stdout, stderr, seconds: (performance.now() - started) / 1000 };
}, 900_000);
afterAll(() => {
  if (out) fs.rmSync(out, { recursive: true, force: true });
});

const assetPath = (target: ReleaseTarget) => path.join(out, assetName(VERSION, target));

describe("bun run build:all", () => {
  test("builds every target of the matrix, named with the version, and removes assets of earlier builds", () => {
    expect({ exitCode: build.exitCode, stderr: build.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(build.stdout).toContain(`built ${RELEASE_TARGETS.length} assets of ${VERSION}`);
    const expected = [...RELEASE_TARGETS.map((t) => assetName(VERSION, t)), "SHA256SUMS", "install.sh", "notes.txt"].sort();
    expect(fs.readdirSync(out).sort()).toEqual(expected);
    console.log(`build:all: ${RELEASE_TARGETS.length} targets in ${build.seconds.toFixed(1)} s`);
  });

  test("the matrix is the one SPEC §11 names: linux x64/arm64 × glibc/musl, darwin x64/arm64, windows x64", () => {
    expect(RELEASE_TARGETS.map((t) => t.id).sort()).toEqual(
      ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-arm64-musl", "linux-x64", "linux-x64-musl", "windows-x64"].sort(),
    );
    expect(assetName("1.2.3", RELEASE_TARGETS.find((t) => t.os === "windows")!)).toBe("velesdb-hooks-1.2.3-windows-x64.exe");
    expect(assetName("1.2.3", RELEASE_TARGETS.find((t) => t.id === "linux-arm64-musl")!)).toBe("velesdb-hooks-1.2.3-linux-arm64-musl");
  });

  test("SHA256SUMS lists exactly the assets with their digests, and sha256sum -c accepts it", () => {
    const sums = fs.readFileSync(path.join(out, "SHA256SUMS"), "utf8");
    const lines = sums.trimEnd().split("\n");
    expect(lines.map((line) => line.replace(/^[0-9a-f]{64} {2}/, ""))).toEqual(RELEASE_TARGETS.map((t) => assetName(VERSION, t)));
    for (const target of RELEASE_TARGETS) {
      const digest = new Bun.CryptoHasher("sha256").update(fs.readFileSync(assetPath(target))).digest("hex");
      expect(lines).toContain(`${digest}  ${assetName(VERSION, target)}`);
    }
    const check = Bun.spawnSync(["sha256sum", "--strict", "-c", "SHA256SUMS"], { cwd: out });
    expect(check.exitCode).toBe(0);
    expect(check.stdout.toString().trim().split("\n")).toEqual(RELEASE_TARGETS.map((t) => `${assetName(VERSION, t)}: OK`));
  });

  test.each(RELEASE_TARGETS.map((t) => [t.id, t] as const))("%s is the executable format its platform loads", (_id, target) => {
    const file = Bun.which("file");
    if (!file) throw new Error("file(1) is not installed (apt-get install file)");
    const says = Bun.spawnSync([file, "-b", assetPath(target)]).stdout.toString();
    for (const fragment of target.fileSays) expect(says).toContain(fragment);

    const format = readFormat(assetPath(target));
    const machine = target.arch === "x64" ? "x86-64" : "aarch64";
    if (target.os === "linux") {
      const loader = target.libc === "musl" ? `/lib/ld-musl-${target.arch === "x64" ? "x86_64" : "aarch64"}.so.1` : target.arch === "x64" ? "/lib64/ld-linux-x86-64.so.2" : "/lib/ld-linux-aarch64.so.1";
      expect(format).toEqual({ kind: "elf", bits: 64, machine, interpreter: loader });
    } else if (target.os === "darwin") {
      expect(format).toEqual({ kind: "mach-o", cpu: target.arch === "x64" ? "x86_64" : "arm64", executable: true, signed: true });
    } else {
      expect(format).toEqual({ kind: "pe", machine: "x86-64", pe32plus: true, console: true });
    }
    expect(fs.statSync(assetPath(target)).mode & 0o111).not.toBe(0);
  });

  test("the asset for this machine runs and prints package.json's version", () => {
    const id = `${process.platform}-${process.arch}`;
    const target = RELEASE_TARGETS.find((t) => t.id === id && t.libc !== "musl");
    if (!target) throw new Error(`this machine (${id}) has no glibc target in the matrix`);
    const run = Bun.spawnSync([assetPath(target), "--version"]);
    expect({ exitCode: run.exitCode, stdout: run.stdout.toString() }).toEqual({ exitCode: 0, stdout: `velesdb-hooks ${VERSION}\n` });
  });

  test("a cross-built asset ignores .env and bunfig.toml in the directory it runs in; control: bun itself loads the preload", () => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-untrusted-")));
    try {
      const marker = path.join(repo, "preload-ran");
      fs.writeFileSync(path.join(repo, "preload.ts"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x");\n`);
      fs.writeFileSync(path.join(repo, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
      fs.writeFileSync(path.join(repo, ".env"), "VELESDB_HOOKS_HOME=relative\n");
      fs.writeFileSync(path.join(repo, "empty.ts"), "");
      const target = RELEASE_TARGETS.find((t) => t.id === `${process.platform}-${process.arch}`)!;
      const run = Bun.spawnSync([assetPath(target), "--version"], { cwd: repo, env: { PATH: "/usr/bin:/bin", HOME: repo } });
      expect(run.stdout.toString()).toBe(`velesdb-hooks ${VERSION}\n`);
      expect(fs.existsSync(marker)).toBe(false);
      Bun.spawnSync([process.execPath, "empty.ts"], { cwd: repo, env: { PATH: "/usr/bin:/bin", HOME: repo } });
      expect(fs.existsSync(marker)).toBe(true);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  test("install.sh is written beside the assets, naming the repository given with --repo", () => {
    const script = fs.readFileSync(path.join(out, "install.sh"), "utf8");
    expect(script.split("\n").filter((line) => line.startsWith("DEFAULT_REPO="))).toEqual([`DEFAULT_REPO="${REPO}"`]);
    expect(script.endsWith('\nmain "$@"\n')).toBe(true);
  });

  test.each([
    [["--only", "linux-x64,solaris-sparc"], "unknown target solaris-sparc"],
    [["--version", "1.2"], 'version "1.2" is not X.Y.Z[-pre]'],
    [["--repo", "no slash"], 'repository "no slash" is not owner/name'],
    [["--frobnicate", "1"], 'unknown option "--frobnicate"'],
  ])("build:all %p is refused with a message", (args, message) => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "vh-build-refused-"));
    try {
      const run = Bun.spawnSync([process.execPath, path.join(ROOT, "scripts", "build-all.ts"), "--out", empty, ...args], { cwd: ROOT });
      expect(run.exitCode).toBe(1);
      expect(run.stderr.toString()).toContain(message);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
