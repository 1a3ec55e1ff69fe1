// The release build (docs/contract.md §11): `bun run build:all` cross-compiles every target of
// targets/matrix.ts on this Linux machine, packs each binary into an archive named with the
// version (.tar.gz, .zip for Windows), and writes a SHA256SUMS of the archives that
// `sha256sum -c` accepts. Each binary is checked for the format its platform loads (file(1)
// and our own header reader agree); the one this machine runs is run, linux-arm64 is run
// under qemu-user with Debian's arm64 C and C++ libraries (--version, a hook, an install),
// the musl builds' shared-library needs are matched against what install.sh checks, and the
// macOS and Windows binaries are format-checked only (Windows runs under Wine in its own
// suite; the release workflow runs the installers on real Windows, macOS and Linux runners).
// The build happens once per `bun test` run, shared with test/npm-registry.test.ts
// (test/support/release-build.ts: about 10 s of compiling with Bun's target runtimes cached,
// plus packing; the first run fetches each runtime, ~100 MB unpacked, from the npm registry).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { packArchive } from "../scripts/build-all.ts";
import { MAIN_PACKAGE, platformPackageName } from "../scripts/npm-packages.ts";
import { packageVersion } from "../scripts/build.ts";
import { assetName, binaryName, RELEASE_TARGETS, type ReleaseTarget } from "../targets/matrix.ts";
import { readFormat } from "./support/release-formats.ts";
import { NOT_OURS, RELEASE_REPO, type ReleaseBuild, sharedReleaseBuild } from "./support/release-build.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const VERSION = packageVersion();
const REPO = RELEASE_REPO;

let out: string;
/** One directory per target id holding what its archive extracted to. */
let extracted: string;
let build: ReleaseBuild;

beforeAll(async () => {
  extracted = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-extracted-")));
  build = await sharedReleaseBuild();
  out = build.out;
  if (build.exitCode !== 0) return;
  for (const target of RELEASE_TARGETS) {
    const dir = path.join(extracted, target.id);
    fs.mkdirSync(dir);
    const unpack =
      target.os === "windows"
        ? ["unzip", "-q", archivePath(target), "-d", dir]
        : ["tar", "-xzf", archivePath(target), "-C", dir];
    const result = Bun.spawnSync(unpack);
    if (result.exitCode !== 0) throw new Error(`${unpack.join(" ")} failed: ${result.stderr.toString()}`);
  }
}, 900_000);
afterAll(() => {
  // `out` is the shared build: test/support/teardown.ts removes it after the last file.
  if (extracted) fs.rmSync(extracted, { recursive: true, force: true });
});

const archivePath = (target: ReleaseTarget) => path.join(out, assetName(VERSION, target));
const binaryPath = (target: ReleaseTarget) => path.join(extracted, target.id, binaryName(target));
const targetById = (id: string) => RELEASE_TARGETS.find((t) => t.id === id)!;

/** npm's fixed mtime for a packed file (1985-10-26T08:15:00Z), as `tar --utc` prints it. */
const NPM_TIME = "1985-10-26 08:15";

interface TarEntry {
  mode: string;
  owner: string;
  size: number;
  time: string;
  name: string;
  sha256?: string;
}

/** tarListing(tarball, digests) → each entry's mode, numeric owner, size, UTC time and name, and with digests its content's SHA-256. */
function tarListing(tarball: string, digests = false): TarEntry[] {
  const verbose = Bun.spawnSync(["tar", "--numeric-owner", "--utc", "-tvzf", tarball]);
  if (verbose.exitCode !== 0) throw new Error(`tar -tvzf ${tarball} failed: ${verbose.stderr.toString()}`);
  return verbose.stdout
    .toString()
    .trimEnd()
    .split("\n")
    .map((line) => {
      const [mode, owner, size, date, time, name] = line.split(/ +/);
      const entry: TarEntry = { mode: mode!, owner: owner!, size: Number(size), time: `${date} ${time}`, name: name! };
      if (digests)
        entry.sha256 = new Bun.CryptoHasher("sha256")
          .update(Bun.spawnSync(["tar", "-xzOf", tarball, name!]).stdout)
          .digest("hex");
      return entry;
    });
}

describe("bun run build:all", () => {
  test("builds every target of the matrix, named with the version, and removes assets of earlier builds (bare binaries and archives)", () => {
    expect({ exitCode: build.exitCode, stderr: build.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(build.stdout).toContain(`built ${RELEASE_TARGETS.length} assets of ${VERSION}`);
    const expected = [
      ...RELEASE_TARGETS.map((t) => assetName(VERSION, t)),
      "SHA256SUMS",
      "install.sh",
      "install.ps1",
      NOT_OURS,
      "npm",
    ].sort();
    expect(fs.readdirSync(out).sort()).toEqual(expected);
    console.log(`build:all: ${RELEASE_TARGETS.length} targets in ${build.seconds.toFixed(1)} s`);
  });

  test.each(RELEASE_TARGETS.map((t) => [t.id, t] as const))(
    "%s: the archive holds exactly the binary, executable, owned by root, at the top level",
    (_id, target) => {
      if (target.os === "windows") {
        expect(Bun.spawnSync(["unzip", "-Z", "-1", archivePath(target)]).stdout.toString()).toBe(
          `${binaryName(target)}\n`,
        );
      } else {
        expect(tarListing(archivePath(target)).map(({ mode, owner, name }) => `${mode} ${owner} ${name}`)).toEqual([
          `-rwxr-xr-x 0/0 ${binaryName(target)}`,
        ]);
      }
      const archiveBytes = fs.statSync(archivePath(target)).size;
      const binaryBytes = fs.statSync(binaryPath(target)).size;
      expect(archiveBytes).toBeLessThan(binaryBytes * 0.7); // compression is the point of the archive
      console.log(
        `${assetName(VERSION, target)}: ${(archiveBytes / 1e6).toFixed(1)} MB download, ${(binaryBytes / 1e6).toFixed(1)} MB installed`,
      );
    },
  );

  // Every tarball comes out of the same packDirectory; the targets differ only in the binary's
  // name, so two platform packages (with and without .exe) and the launcher stand for all (each
  // listing reads a ~55 MB tarball twice).
  test.each([
    ...["linux-x64", "windows-x64"]
      .map(targetById)
      .map((t) => [platformPackageName(t), `bin/${binaryName(t)}`] as const),
    [MAIN_PACKAGE, "bin/velesdb-hooks.js"] as const,
  ])(
    "npm tarball %s: package.json, README.md and its one executable under package/, owned by root, at npm's fixed time",
    (name, executable) => {
      const tarball = path.join(out, "npm", `${name}-${VERSION}.tgz`);
      const entries = tarListing(tarball).map(({ mode, owner, time, name }) => `${mode} ${owner} ${time} ${name}`);
      expect(entries.sort()).toEqual(
        [
          `-rw-r--r-- 0/0 ${NPM_TIME} package/README.md`,
          `-rw-r--r-- 0/0 ${NPM_TIME} package/package.json`,
          `-rwxr-xr-x 0/0 ${NPM_TIME} package/${executable}`,
        ].sort(),
      );
      const manifest = JSON.parse(
        Bun.spawnSync(["tar", "-xzOf", tarball, "package/package.json"]).stdout.toString(),
      ) as { name: string; version: string };
      expect({ name: manifest.name, version: manifest.version }).toEqual({ name, version: VERSION });
    },
  );

  test("the launcher's tarball holds what `npm pack` makes of the same files; control: a file made executable lists otherwise", () => {
    const npm = Bun.which("npm");
    if (!npm) throw new Error("npm must be on PATH");
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-npm-pack-")));
    try {
      const ours = path.join(out, "npm", `${MAIN_PACKAGE}-${VERSION}.tgz`);
      const npmPack = (edit: (pkg: string) => void, label: string) => {
        const unpacked = path.join(dir, label);
        fs.mkdirSync(unpacked);
        expect(Bun.spawnSync(["tar", "-xzf", ours, "-C", unpacked]).exitCode).toBe(0);
        edit(path.join(unpacked, "package"));
        const packed = Bun.spawnSync(
          [npm, "pack", path.join(unpacked, "package"), "--json", "--ignore-scripts", "--pack-destination", unpacked],
          { cwd: unpacked, env: { ...process.env, npm_config_update_notifier: "false" } },
        );
        expect(packed.exitCode).toBe(0);
        const [result] = JSON.parse(packed.stdout.toString()) as { filename: string }[];
        return tarListing(path.join(unpacked, result!.filename), true);
      };
      const byName = (listing: TarEntry[]) => [...listing].sort((a, b) => a.name.localeCompare(b.name));
      const oursListed = byName(tarListing(ours, true));
      expect(oursListed).toEqual(byName(npmPack(() => {}, "same")));
      expect(oursListed).not.toEqual(
        byName(npmPack((pkg) => fs.chmodSync(path.join(pkg, "README.md"), 0o755), "changed")),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the matrix is the one docs/contract.md §11 names: linux x64/arm64 × glibc/musl, darwin x64/arm64, windows x64", () => {
    expect(RELEASE_TARGETS.map((t) => t.id).sort()).toEqual(
      [
        "darwin-arm64",
        "darwin-x64",
        "linux-arm64",
        "linux-arm64-musl",
        "linux-x64",
        "linux-x64-musl",
        "windows-x64",
      ].sort(),
    );
    expect(assetName("1.2.3", RELEASE_TARGETS.find((t) => t.os === "windows")!)).toBe(
      "velesdb-hooks-1.2.3-windows-x64.zip",
    );
    expect(assetName("1.2.3", RELEASE_TARGETS.find((t) => t.id === "linux-arm64-musl")!)).toBe(
      "velesdb-hooks-1.2.3-linux-arm64-musl.tar.gz",
    );
  });

  test("SHA256SUMS lists exactly the archives with their digests, and sha256sum -c accepts it", () => {
    const sums = fs.readFileSync(path.join(out, "SHA256SUMS"), "utf8");
    const lines = sums.trimEnd().split("\n");
    expect(lines.map((line) => line.replace(/^[0-9a-f]{64} {2}/, ""))).toEqual(
      RELEASE_TARGETS.map((t) => assetName(VERSION, t)),
    );
    for (const target of RELEASE_TARGETS) {
      const digest = new Bun.CryptoHasher("sha256").update(fs.readFileSync(archivePath(target))).digest("hex");
      expect(lines).toContain(`${digest}  ${assetName(VERSION, target)}`);
    }
    const check = Bun.spawnSync(["sha256sum", "--strict", "-c", "SHA256SUMS"], { cwd: out });
    expect(check.exitCode).toBe(0);
    expect(check.stdout.toString().trim().split("\n")).toEqual(
      RELEASE_TARGETS.map((t) => `${assetName(VERSION, t)}: OK`),
    );
  });

  test.each(RELEASE_TARGETS.map((t) => [t.id, t] as const))(
    "%s is the executable format its platform loads",
    (_id, target) => {
      const file = Bun.which("file");
      if (!file) throw new Error("file(1) is not installed (apt-get install file)");
      const says = Bun.spawnSync([file, "-b", binaryPath(target)]).stdout.toString();
      for (const fragment of target.fileSays) expect(says).toContain(fragment);

      const format = readFormat(binaryPath(target));
      const machine = target.arch === "x64" ? "x86-64" : "aarch64";
      if (target.os === "linux") {
        const loader =
          target.libc === "musl"
            ? `/lib/ld-musl-${target.arch === "x64" ? "x86_64" : "aarch64"}.so.1`
            : target.arch === "x64"
              ? "/lib64/ld-linux-x86-64.so.2"
              : "/lib/ld-linux-aarch64.so.1";
        expect(format).toEqual({ kind: "elf", bits: 64, machine, interpreter: loader });
      } else if (target.os === "darwin") {
        expect(format).toEqual({
          kind: "mach-o",
          cpu: target.arch === "x64" ? "x86_64" : "arm64",
          executable: true,
          signed: true,
        });
      } else {
        expect(format).toEqual({ kind: "pe", machine: "x86-64", pe32plus: true, console: true });
      }
      if (target.os !== "windows") expect(fs.statSync(binaryPath(target)).mode & 0o777).toBe(0o755);
    },
  );

  test("the asset for this machine runs and prints package.json's version", () => {
    const id = `${process.platform}-${process.arch}`;
    const target = RELEASE_TARGETS.find((t) => t.id === id && t.libc !== "musl");
    if (!target) throw new Error(`this machine (${id}) has no glibc target in the matrix`);
    const run = Bun.spawnSync([binaryPath(target), "--version"]);
    expect({ exitCode: run.exitCode, stdout: run.stdout.toString() }).toEqual({
      exitCode: 0,
      stdout: `velesdb-hooks ${VERSION}\n`,
    });
  });

  test("every shared library a Linux binary names (readelf NEEDED) is its C library's own, or one install.sh checks for on musl", () => {
    const readelf = Bun.which("readelf");
    if (!readelf) throw new Error("readelf is not installed (apt-get install binutils)");
    const checked = muslLibrariesInstallShChecks();
    const needs: Record<string, string[]> = {};
    const unchecked: Record<string, string[]> = {};
    for (const target of RELEASE_TARGETS.filter((t) => t.os === "linux")) {
      const dynamic = Bun.spawnSync([readelf, "-d", binaryPath(target)]).stdout.toString();
      const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]!);
      expect(needed.length).toBeGreaterThan(0); // the reader found the entries at all
      needs[target.id] = needed;
      unchecked[target.id] = uncheckedNeeds(target, needed, checked);
    }
    console.log(
      `NEEDED: ${Object.entries(needs)
        .map(([id, names]) => `${id}: ${names.join(" ")}`)
        .join("; ")}`,
    );
    expect(unchecked).toEqual({ "linux-x64": [], "linux-arm64": [], "linux-x64-musl": [], "linux-arm64-musl": [] });
    // Control: had install.sh checked only for libgcc_s, the musl builds' C++ runtime would show.
    const musl = targetById("linux-x64-musl");
    expect(uncheckedNeeds(musl, needs[musl.id]!, ["libgcc_s.so.1"])).toEqual(["libstdc++.so.6"]);
  });
});

const GLIBC_OWN =
  /^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-(x86-64|aarch64)\.so\.[12])$/;
const MUSL_OWN = /^libc\.musl-(x86_64|aarch64)\.so\.1$/;

/** uncheckedNeeds(target, needed, checked) → the libraries a system may lack that install.sh does not look for (glibc builds: anything not glibc's own). */
function uncheckedNeeds(target: ReleaseTarget, needed: readonly string[], checked: readonly string[]): string[] {
  if (target.libc === "musl") return needed.filter((name) => !MUSL_OWN.test(name) && !checked.includes(name));
  return needed.filter((name) => !GLIBC_OWN.test(name));
}

// linux-arm64 on this x86-64 machine: qemu-user runs the binary, with Debian's arm64 C and
// C++ libraries (libc6-arm64-cross, libstdc++6-arm64-cross) as its root for the loader.
describe("linux-arm64 under qemu-aarch64-static", () => {
  const SYSROOT = "/usr/aarch64-linux-gnu";
  const qemu = () => {
    const program = Bun.which("qemu-aarch64-static");
    if (!program || !fs.existsSync(path.join(SYSROOT, "lib", "ld-linux-aarch64.so.1"))) {
      throw new Error(
        "qemu-aarch64-static and the arm64 libraries are not installed (apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross)",
      );
    }
    return [program, "-L", SYSROOT];
  };
  const arm64 = () => targetById("linux-arm64");

  test("--version prints package.json's version; control: run directly, this machine cannot start it", () => {
    const run = Bun.spawnSync([...qemu(), binaryPath(arm64()), "--version"]);
    expect({ exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() }).toEqual({
      exitCode: 0,
      stdout: `velesdb-hooks ${VERSION}\n`,
      stderr: "",
    });
    if (process.arch === "x64") {
      // Without qemu and the arm64 loader the kernel refuses it (ENOEXEC, thrown by spawn) or,
      // where binfmt_misc hands it to qemu with no arm64 libraries, the loader is missing.
      let direct = "";
      try {
        direct = Bun.spawnSync([binaryPath(arm64()), "--version"]).stdout.toString();
      } catch {
        direct = "";
      }
      expect(direct).toBe("");
    }
  });

  test("a hook answers exactly as this machine's build does", () => {
    const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-arm64-hook-")));
    try {
      const repo = path.join(home, "repo");
      fs.mkdirSync(repo);
      const payload = JSON.stringify({
        session_id: "arm64",
        cwd: repo,
        hook_event_name: "SessionStart",
        source: "startup",
      });
      const env = { PATH: "/usr/bin:/bin", HOME: home };
      const answer = (argv: string[]) => {
        const run = Bun.spawnSync([...argv, "claude", "session-start"], {
          stdin: Buffer.from(payload),
          env,
          cwd: repo,
        });
        return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
      };
      const onArm64 = answer([...qemu(), binaryPath(arm64())]);
      expect(onArm64.exitCode).toBe(0);
      expect(JSON.parse(onArm64.stdout).hookSpecificOutput.hookEventName).toBe("SessionStart");
      const host = targetById(`${process.platform}-${process.arch}`);
      expect(onArm64).toEqual(answer([binaryPath(host)]));
      console.log(`linux-arm64 under qemu, claude session-start: ${onArm64.stdout.slice(0, 120)}…`);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  test("install --client claude into a private HOME: the copied binary runs, the entries name it, check is in step", () => {
    const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-arm64-install-")));
    try {
      fs.mkdirSync(path.join(home, ".claude"));
      const env = { PATH: "/usr/bin:/bin", HOME: home };
      const install = Bun.spawnSync([...qemu(), binaryPath(arm64()), "install", "--client", "claude"], {
        env,
        cwd: home,
      });
      expect({ exitCode: install.exitCode, stderr: install.stderr.toString() }).toEqual({ exitCode: 0, stderr: "" });
      const stable = path.join(home, ".velesdb-hooks", "bin", "velesdb-hooks");
      expect(readFormat(stable)).toEqual(readFormat(binaryPath(arm64()))); // the arm64 binary copied itself, not qemu
      expect(fs.readFileSync(path.join(home, ".claude", "settings.json"), "utf8")).toContain(JSON.stringify(stable));
      // check fails on hooks without a velesdb-memory server (docs/mcp-server.md): the user has the daemon's.
      fs.writeFileSync(
        path.join(home, ".claude.json"),
        '{"mcpServers":{"velesdb-memory":{"type":"http","url":"https://127.0.0.1:18090/mcp"}}}\n',
      );
      // No daemon listens there, and check starts each configured server (docs/doctor.md): this case
      // is about the arm64 binary's entries, so the probe is off; test/server-probe.test.ts proves it.
      const check = Bun.spawnSync([...qemu(), stable, "check", "--client", "claude"], {
        env: { ...env, VELESDB_HOOKS_SERVER_PROBE: "off" },
        cwd: home,
      });
      expect({ exitCode: check.exitCode, stdout: check.stdout.toString() }).toMatchObject({ exitCode: 0 });
      expect(check.stdout.toString()).toContain("claude: entries in step");
      expect(check.stdout.toString()).toContain("claude: MCP server not started (VELESDB_HOOKS_SERVER_PROBE=off)"); // the entry was read
      // Control: with the probe on, the same check fails on the server nobody runs.
      const probed = Bun.spawnSync([...qemu(), stable, "check", "--client", "claude"], { env, cwd: home });
      expect({ exitCode: probed.exitCode, stdout: probed.stdout.toString() }).toMatchObject({
        exitCode: 1,
        stdout: expect.stringContaining("does not answer"),
      });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("bun run build:all, its scripts and refusals", () => {
  test.each([["linux-x64"], ["windows-x64"]])(
    "%s: the same binary packs into the same bytes, whatever its timestamp; control: other bytes pack differently",
    (id) => {
      const target = targetById(id);
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-pack-")));
      try {
        const pack = (content: string, mtime: Date, name: string) => {
          const staging = path.join(dir, name);
          fs.mkdirSync(staging);
          const binary = path.join(staging, binaryName(target));
          fs.writeFileSync(binary, content, { mode: 0o700 });
          fs.utimesSync(binary, mtime, mtime);
          const archive = path.join(dir, `${name}-${assetName("1.0.0", target)}`);
          packArchive(binary, archive, target);
          return fs.readFileSync(archive);
        };
        const first = pack("the same program\n", new Date("2001-02-03T04:05:06Z"), "a");
        const second = pack("the same program\n", new Date(), "b");
        expect(Buffer.compare(first, second)).toBe(0);
        expect(Buffer.compare(first, pack("another program\n", new Date(), "c"))).not.toBe(0);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  test("a cross-built asset ignores .env and bunfig.toml in the directory it runs in; control: bun itself loads the preload", () => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-untrusted-")));
    try {
      const marker = path.join(repo, "preload-ran");
      fs.writeFileSync(
        path.join(repo, "preload.ts"),
        `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x");\n`,
      );
      fs.writeFileSync(path.join(repo, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
      fs.writeFileSync(path.join(repo, ".env"), "VELESDB_HOOKS_HOME=relative\n");
      fs.writeFileSync(path.join(repo, "empty.ts"), "");
      const target = targetById(`${process.platform}-${process.arch}`);
      const run = Bun.spawnSync([binaryPath(target), "--version"], {
        cwd: repo,
        env: { PATH: "/usr/bin:/bin", HOME: repo },
      });
      expect(run.stdout.toString()).toBe(`velesdb-hooks ${VERSION}\n`);
      expect(fs.existsSync(marker)).toBe(false);
      Bun.spawnSync([process.execPath, "empty.ts"], { cwd: repo, env: { PATH: "/usr/bin:/bin", HOME: repo } });
      expect(fs.existsSync(marker)).toBe(true);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  test("install.sh and install.ps1 are written beside the assets, naming the repository given with --repo", () => {
    const script = fs.readFileSync(path.join(out, "install.sh"), "utf8");
    expect(script.split("\n").filter((line) => line.startsWith("DEFAULT_REPO="))).toEqual([`DEFAULT_REPO="${REPO}"`]);
    expect(script.endsWith('\nmain "$@"\n')).toBe(true);
    const ps1 = fs.readFileSync(path.join(out, "install.ps1"), "utf8");
    expect(ps1.split("\n").filter((line) => line.includes("$DefaultRepo = "))).toEqual([
      `    $DefaultRepo = "${REPO}"`,
    ]);
    expect(ps1).toBe(
      fs.readFileSync(path.join(ROOT, "install.ps1"), "utf8").replace('"OWNER/velesdb-hooks"', `"${REPO}"`),
    );
  });

  test.each([
    [["--only", "linux-x64,solaris-sparc"], "unknown target solaris-sparc"],
    [["--version", "1.2"], 'version "1.2" is not X.Y.Z[-pre]'],
    [["--repo", "no slash"], 'repository "no slash" is not owner/name'],
    [["--frobnicate", "1"], 'unknown option "--frobnicate"'],
  ])("build:all %p is refused with a message", (args, message) => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "vh-build-refused-"));
    try {
      const run = Bun.spawnSync(
        [process.execPath, path.join(ROOT, "scripts", "build-all.ts"), "--out", empty, ...args],
        { cwd: ROOT },
      );
      expect(run.exitCode).toBe(1);
      expect(run.stderr.toString()).toContain(message);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});

/** muslLibrariesInstallShChecks() → the names on install.sh's MUSL_NEEDED_LIBRARIES line. */
function muslLibrariesInstallShChecks(): string[] {
  const lines = fs.readFileSync(path.join(ROOT, "install.sh"), "utf8").split("\n");
  const line = lines.filter((l) => l.startsWith("MUSL_NEEDED_LIBRARIES="));
  if (line.length !== 1) throw new Error("install.sh must set MUSL_NEEDED_LIBRARIES exactly once");
  return line[0]!.replace(/^MUSL_NEEDED_LIBRARIES="(.*)"$/, "$1").split(" ");
}
