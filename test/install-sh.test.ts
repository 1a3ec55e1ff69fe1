// install.sh end to end (docs/contract.md §11), against a release served on 127.0.0.1 and a private HOME
// per case: the real asset built for this machine, the real `velesdb-hooks install` it runs,
// and the shells users actually pipe into (dash, busybox sh, bash in POSIX mode). The safety
// promises each have a negative next to the positive control that proves the same setup works:
// a tampered download is refused, a binary that cannot run never replaces one that can, a
// truncated script runs nothing, no checksum tool means no install.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { stampInstallScript } from "../scripts/build-all.ts";
import { packageVersion } from "../scripts/build.ts";
import { RELEASE_TARGETS } from "../targets/matrix.ts";
import {
  assetFileName,
  BASE_TOOLS,
  detectedPlatform,
  buildHostReleases,
  hostBinary,
  hostRelease,
  INSTALL_SH,
  makeShSandbox,
  mirrorOf,
  removeSandboxes,
  removeTemporaryDirs,
  releaseWithArchive,
  releaseWithBinary,
  REPO_ROOT,
  scriptWithoutMain,
  shellCommand,
  snapshotTree,
  tempDir,
  toolsDir,
  type ShellName,
  type ShSandbox,
} from "./support/release-fixtures.ts";
import { startReleaseServer, type ReleaseServer } from "./support/release-server.ts";

const NEW = packageVersion();
const OLD = NEW === "0.0.1" ? "0.0.2" : "0.0.1";
const REPO = "acme/velesdb-hooks";

let server: ReleaseServer;
let newRelease: string;
let oldRelease: string;

beforeAll(async () => {
  server = startReleaseServer();
  await buildHostReleases([NEW, OLD]);
  newRelease = hostRelease(NEW);
  oldRelease = hostRelease(OLD);
  server.mount("/latest", newRelease);
  server.mount(`/${REPO}/releases/latest/download`, newRelease);
  server.mount(`/${REPO}/releases/download/v${NEW}`, newRelease);
  server.mount(`/${REPO}/releases/download/v${OLD}`, oldRelease);
}, 600_000);
afterAll(() => {
  server?.stop();
  removeTemporaryDirs();
});
afterEach(() => removeSandboxes());

let mountCount = 0;
/** serve(dir) → the base URL of a fresh mount holding dir's files. */
function serve(dir: string): string {
  const prefix = `/m${++mountCount}`;
  server.mount(prefix, dir);
  return `${server.url}${prefix}`;
}

const flat = (url: string) => ({ VELESDB_HOOKS_DOWNLOAD_URL: url });
const github = { VELESDB_HOOKS_GITHUB: "", VELESDB_HOOKS_REPO: REPO };
const githubEnv = () => ({ ...github, VELESDB_HOOKS_GITHUB: server.url });

function versionOf(binary: string): string {
  return Bun.spawnSync([binary, "--version"]).stdout.toString().trim();
}

function ourCommands(box: ShSandbox, file = box.claudeSettings): string[] {
  if (!fs.existsSync(file)) return [];
  const settings = JSON.parse(fs.readFileSync(file, "utf8")) as {
    hooks?: Record<string, Array<{ hooks: Array<{ command?: string }> }>>;
  };
  return Object.values(settings.hooks ?? {})
    .flatMap((groups) => groups.flatMap((group) => group.hooks.map((hook) => String(hook.command))))
    .filter((command) => command.includes(box.stable));
}

/** installedOk(box, run, version): the binary, the entries and the link all in place, nothing left in TMPDIR. */
function expectInstalled(
  box: ShSandbox,
  run: { exitCode: number; stdout: string; stderr: string },
  version: string,
): void {
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  expect(versionOf(box.stable)).toBe(`velesdb-hooks ${version}`);
  expect(fs.readlinkSync(box.link)).toBe(box.stable);
  expect(ourCommands(box).length).toBeGreaterThanOrEqual(5);
  expect(fs.readdirSync(box.tmp)).toEqual([]);
}

async function installGood(box: ShSandbox): Promise<void> {
  expectInstalled(box, await box.run([], { env: flat(`${server.url}/latest`) }), NEW);
}

describe("a clean install, then a re-run that changes nothing", () => {
  test.each(["dash", "busybox", "bash --posix"] as const)("under %s", async (shell: ShellName) => {
    const box = makeShSandbox(`clean-${shell.replace(/\W+/g, "")}`);
    const first = await box.run([], { shell, env: flat(`${server.url}/latest`) });
    expectInstalled(box, first, NEW);
    expect(first.stdout).toContain(`checksum verified: ${assetFileName(NEW)}`);
    expect(first.stdout).toContain(`export PATH="${path.dirname(box.link)}:$PATH"`);
    // One copy on disk: the stable binary is the one in the verified archive, byte for byte.
    expect(Bun.hash(fs.readFileSync(box.stable))).toBe(Bun.hash(fs.readFileSync(hostBinary(NEW))));

    const before = snapshotTree(box.root);
    const again = await box.run([], { shell, env: flat(`${server.url}/latest`) });
    expect({ exitCode: again.exitCode, stderr: again.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(again.stdout).toContain("already");
    expect(snapshotTree(box.root)).toEqual(before);
  });

  test("piped into sh (`curl … | sh -s -- --client claude`), the script read from stdin", async () => {
    const box = makeShSandbox("piped");
    const run = await box.run(["--client", "claude"], {
      env: flat(`${server.url}/latest`),
      viaStdin: fs.readFileSync(INSTALL_SH, "utf8"),
    });
    expectInstalled(box, run, NEW);
  });

  test("the PATH hint is left out when the install dir is already on PATH", async () => {
    const box = makeShSandbox("onpath");
    const run = await box.run([], {
      env: { ...flat(`${server.url}/latest`), PATH: `${path.dirname(box.link)}:/usr/bin:/bin` },
    });
    expectInstalled(box, run, NEW);
    expect(run.stdout).not.toContain("export PATH");
  });
});

describe("which release: latest, or pinned with --version", () => {
  test("GitHub layout: --version installs that release, latest upgrades, a pin downgrades again", async () => {
    const box = makeShSandbox("pin");
    const seen = server.requests.length;
    expectInstalled(box, await box.run(["--version", `v${OLD}`], { env: githubEnv() }), OLD);
    expect(server.requests.slice(seen)).toEqual([
      `/${REPO}/releases/download/v${OLD}/SHA256SUMS`,
      `/${REPO}/releases/download/v${OLD}/${assetFileName(OLD)}`,
    ]);
    const linkInode = fs.lstatSync(box.link).ino;

    expectInstalled(box, await box.run([], { env: githubEnv() }), NEW);
    expect(server.requests.at(-1)).toBe(`/${REPO}/releases/latest/download/${assetFileName(NEW)}`);
    expect(fs.lstatSync(box.link).ino).toBe(linkInode); // the link names the stable path, so an upgrade never touches it

    expectInstalled(box, await box.run(["--version", OLD], { env: githubEnv() }), OLD);
  });

  test("a mirror holding two versions: --version picks one; without it the script refuses to guess", async () => {
    const url = serve(mirrorOf([oldRelease, newRelease]));
    const box = makeShSandbox("mirror2");
    const before = snapshotTree(box.root);
    const guess = await box.run([], { env: flat(url) });
    expect(guess.exitCode).toBe(1);
    expect(guess.stderr).toContain("pick one with --version");
    expect(snapshotTree(box.root)).toEqual(before);

    expectInstalled(box, await box.run(["--version", `v${OLD}`], { env: flat(url) }), OLD);
  });

  test.each([
    ["a mirror without that version", () => flat(`${server.url}/latest`), "has no velesdb-hooks 9.9.9"],
    ["a GitHub release that does not exist (404)", githubEnv, "could not download"],
  ])("--version 9.9.9 from %s is refused and nothing is installed", async (_label, env, message) => {
    const box = makeShSandbox("missing");
    const before = snapshotTree(box.root);
    const run = await box.run(["--version", "v9.9.9"], { env: env() });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain("nothing was installed");
    expect(snapshotTree(box.root)).toEqual(before);
  });

  test.each([["latest"], ["v1.2"], ["1.2.3;rm"], ["../../x"]])(
    "--version %s is a usage error before any download",
    async (value) => {
      const box = makeShSandbox("badver");
      const seen = server.requests.length;
      const run = await box.run(["--version", value], { env: flat(`${server.url}/latest`) });
      expect(run.exitCode).toBe(64);
      expect(run.stderr).toContain("--version takes a release such as v0.1.0");
      expect(server.requests.length).toBe(seen);
    },
  );
});

describe("a download that does not verify is refused, and what was installed stays", () => {
  test("a tampered archive (one byte changed, SHA256SUMS intact): nothing installed; control: the intact release installs", async () => {
    const tampered = tempDir("tampered");
    const bytes = fs.readFileSync(path.join(newRelease, assetFileName(NEW)));
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    fs.writeFileSync(path.join(tampered, assetFileName(NEW)), bytes);
    fs.copyFileSync(path.join(newRelease, "SHA256SUMS"), path.join(tampered, "SHA256SUMS"));
    const url = serve(tampered);

    const fresh = makeShSandbox("tampered-fresh");
    const before = snapshotTree(fresh.root);
    const refused = await fresh.run([], { env: flat(url) });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(`checksum mismatch for ${assetFileName(NEW)}`);
    expect(refused.stderr).toContain("nothing was installed");
    expect(snapshotTree(fresh.root)).toEqual(before);

    const upgraded = makeShSandbox("tampered-over");
    await installGood(upgraded); // positive control: the same HOME, the intact release
    const installed = snapshotTree(upgraded.root);
    expect((await upgraded.run([], { env: flat(url) })).exitCode).toBe(1);
    expect(snapshotTree(upgraded.root)).toEqual(installed);
  });

  test("a SHA256SUMS whose line for the asset is not a SHA-256 is refused", async () => {
    const dir = tempDir("badsums");
    fs.symlinkSync(path.join(newRelease, assetFileName(NEW)), path.join(dir, assetFileName(NEW)));
    fs.writeFileSync(path.join(dir, "SHA256SUMS"), `${"z".repeat(64)}  ${assetFileName(NEW)}\n`);
    const box = makeShSandbox("badsums");
    const run = await box.run([], { env: flat(serve(dir)) });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("malformed checksum");
    expect(fs.existsSync(box.stable)).toBe(false);
  });

  // Each archive matches its SHA256SUMS (a broken build, or a release an attacker controls
  // entirely): extraction and the --version smoke run are what stop it.
  const BROKEN: Array<[string, () => string, string]> = [
    [
      "a program that exits 1",
      () => releaseWithBinary(NEW, "#!/bin/sh\necho 'cannot start' >&2\nexit 1\n", "broken"),
      "--version exited 1",
    ],
    [
      "a program that claims another version",
      () => releaseWithBinary(NEW, "#!/bin/sh\necho 'velesdb-hooks 9.9.9'\n", "broken"),
      "velesdb-hooks 9.9.9",
    ],
    [
      "a binary cut to its first megabyte",
      () => releaseWithBinary(NEW, fs.readFileSync(hostBinary(NEW)).subarray(0, 1 << 20), "broken"),
      "does not run here",
    ],
    ["a file that is not a program", () => releaseWithBinary(NEW, "just text\n", "broken"), "does not run here"],
    [
      "an archive that is not gzip",
      () => releaseWithArchive(NEW, "just text\n", "broken"),
      "could not extract velesdb-hooks",
    ],
    [
      "an archive holding another name",
      () => releaseWithArchive(NEW, tarGz({ "velesdb-hooks-other": "x" }), "broken"),
      "could not extract velesdb-hooks",
    ],
    [
      "an archive whose velesdb-hooks is a link",
      () => releaseWithArchive(NEW, tarGz({}, { "velesdb-hooks": "/bin/true" }), "broken"),
      "does not hold the file velesdb-hooks",
    ],
  ];
  test.each(BROKEN)(
    "a release that fails extraction or --version (%s) is refused; the previous binary stays",
    async (_label, release, message) => {
      const url = serve(release());
      const box = makeShSandbox("broken");
      await installGood(box); // positive control
      const installed = snapshotTree(box.root);
      const run = await box.run([], { env: flat(url) });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain(message);
      expect(run.stderr).toContain("nothing was installed");
      expect(snapshotTree(box.root)).toEqual(installed);
      expect(versionOf(box.stable)).toBe(`velesdb-hooks ${NEW}`);
    },
  );
});

describe("tools: fail closed without a checksum tool; curl or wget, sha256sum or shasum; tar and gzip", () => {
  // Every row has all four cells: bun passes a `done` callback in place of a missing one.
  const CASES: Array<[string, string[], "installs" | string, string]> = [
    ["curl + sha256sum", ["curl", "sha256sum"], "installs", ""],
    ["wget + sha256sum (no curl)", ["wget", "sha256sum"], "installs", ""],
    ["curl + shasum (macOS)", ["curl", "shasum"], "installs", ""],
    ["curl, no checksum tool", ["curl"], "cannot be verified", ""],
    ["no downloader", ["sha256sum"], "neither curl nor wget", ""],
    ["no tar", ["curl", "sha256sum"], "tar is not installed", "tar"],
    ["no gzip", ["curl", "sha256sum"], "gzip is not installed", "gzip"],
  ];
  test.each(CASES)("%s", async (_label, tools, outcome, lacking) => {
    const present = tools.filter((tool) => Bun.which(tool));
    if (present.length !== tools.length) throw new Error(`this test needs ${tools.join(", ")} installed`);
    const box = makeShSandbox("tools");
    const env = {
      ...flat(`${server.url}/latest`),
      PATH: toolsDir([...BASE_TOOLS.filter((tool) => tool !== lacking), ...tools]),
    };
    const seen = server.requests.length;
    const before = snapshotTree(box.root);
    const run = await box.run([], { env });
    if (outcome === "installs") {
      expectInstalled(box, run, NEW);
    } else {
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain(outcome);
      expect(server.requests.length).toBe(seen); // refused before the first download
      expect(snapshotTree(box.root)).toEqual(before);
    }
  });
});

describe("where things go", () => {
  test.each([
    [
      "VELESDB_HOOKS_INSTALL_DIR",
      { VELESDB_HOOKS_INSTALL_DIR: "<root>/opt/bin", XDG_BIN_HOME: "<root>/xdg" },
      "opt/bin",
    ],
    ["XDG_BIN_HOME", { XDG_BIN_HOME: "<root>/xdg" }, "xdg"],
    ["~/.local/bin", {}, "home/.local/bin"],
  ])("the link goes to %s", async (_label, vars: Record<string, string>, where) => {
    const box = makeShSandbox("dirs");
    const env: Record<string, string> = { ...flat(`${server.url}/latest`) };
    for (const [key, value] of Object.entries(vars)) env[key] = value.replace("<root>", box.root);
    const run = await box.run([], { env });
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(fs.readlinkSync(path.join(box.root, where, "velesdb-hooks"))).toBe(box.stable);
  });

  test("VELESDB_HOOKS_HOME moves the binary, and the entries and the link follow it", async () => {
    const box = makeShSandbox("vhhome");
    const tree = path.join(box.root, "vh");
    const run = await box.run([], { env: { ...flat(`${server.url}/latest`), VELESDB_HOOKS_HOME: tree } });
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    const stable = path.join(tree, "bin", "velesdb-hooks");
    expect(fs.readlinkSync(box.link)).toBe(stable);
    expect(fs.readFileSync(box.claudeSettings, "utf8")).toContain(stable);
    expect(fs.existsSync(box.stable)).toBe(false);
  });

  test.each([["VELESDB_HOOKS_INSTALL_DIR"], ["XDG_BIN_HOME"], ["VELESDB_HOOKS_HOME"]])(
    "a relative %s is refused before any download",
    async (variable) => {
      const box = makeShSandbox("relative");
      const seen = server.requests.length;
      const run = await box.run([], { env: { ...flat(`${server.url}/latest`), [variable]: "relative/dir" } });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain(`${variable} must be an absolute path`);
      expect(server.requests.length).toBe(seen);
    },
  );

  test("a regular file at the link path (an older copy) is replaced by the link", async () => {
    const box = makeShSandbox("oldcopy");
    fs.mkdirSync(path.dirname(box.link), { recursive: true });
    fs.writeFileSync(box.link, "#!/bin/sh\necho old\n", { mode: 0o755 });
    expectInstalled(box, await box.run([], { env: flat(`${server.url}/latest`) }), NEW);
  });

  test("with no agent installed and no --client, the binary's install refuses and nothing is linked", async () => {
    const box = makeShSandbox("noagent", []);
    const run = await box.run([], { env: flat(`${server.url}/latest`) });
    expect(run.exitCode).toBe(1);
    expect(run.stdout + run.stderr).toContain("no supported agent found");
    expect(fs.existsSync(box.link)).toBe(false);
    expect(fs.existsSync(box.stable)).toBe(false);
    // Control: naming the client installs in the same HOME.
    expect((await box.run(["--client", "claude"], { env: flat(`${server.url}/latest`) })).exitCode).toBe(0);
    expect(fs.readlinkSync(box.link)).toBe(box.stable);
  });
});

describe("--uninstall", () => {
  test("removes the entries, the link and the binary; a second run finds nothing to do", async () => {
    const box = makeShSandbox("uninstall");
    await installGood(box);
    const run = await box.run(["--uninstall"], { shell: "busybox" });
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(ourCommands(box)).toEqual([]);
    expect(fs.existsSync(box.link) || fs.existsSync(path.dirname(box.stable))).toBe(false);
    expect(fs.existsSync(path.join(box.home, ".velesdb-hooks"))).toBe(false);
    expect(run.stdout).toContain(`link: removed ${box.link}`);

    const again = await box.run(["--uninstall"]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("no binary at");
  });

  test("--client claude keeps the binary and the link while Codex still uses them", async () => {
    const box = makeShSandbox("partial", ["claude", "codex"]);
    await installGood(box);
    const codexHooks = path.join(box.home, ".codex", "hooks.json");
    expect(ourCommands(box, codexHooks).length).toBeGreaterThan(0);

    const partial = await box.run(["--uninstall", "--client", "claude"]);
    expect(partial.exitCode).toBe(0);
    expect(ourCommands(box)).toEqual([]);
    expect(ourCommands(box, codexHooks).length).toBeGreaterThan(0);
    expect(fs.readlinkSync(box.link)).toBe(box.stable);
    expect(fs.existsSync(box.stable)).toBe(true);

    expect((await box.run(["--uninstall"])).exitCode).toBe(0);
    expect(ourCommands(box, codexHooks)).toEqual([]);
    expect(fs.existsSync(box.link) || fs.existsSync(box.stable)).toBe(false);
  });

  test("a link that points somewhere else is left alone", async () => {
    const box = makeShSandbox("foreignlink");
    fs.mkdirSync(path.dirname(box.link), { recursive: true });
    fs.symlinkSync("/usr/bin/true", box.link);
    const run = await box.run(["--uninstall"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("left");
    expect(fs.readlinkSync(box.link)).toBe("/usr/bin/true");
  });
});

describe("a truncated download runs nothing", () => {
  const script = fs.readFileSync(INSTALL_SH, "utf8");
  const lines = script.split("\n");

  test('install.sh ends with `main "$@"`, its only top-level command besides assignments and `set -eu`', () => {
    expect(script.endsWith('\nmain "$@"\n')).toBe(true);
    let depth = 0;
    const topLevel: string[] = [];
    for (const line of lines) {
      if (depth === 0 && line !== "" && !line.startsWith("#")) topLevel.push(line);
      if (/^[a-z0-9_]+\(\) \{$/.test(line)) depth++;
      else if (line === "}") depth--;
    }
    expect(depth).toBe(0);
    expect(topLevel.filter((line) => line === 'main "$@"')).toEqual(['main "$@"']);
    expect(topLevel.at(-1)).toBe('main "$@"');
    for (const line of topLevel) expect(line).toMatch(/^(set -eu|[A-Z_]+="?[^"$`]*"?|[a-z0-9_]+\(\) \{|main "\$@")$/);
  });

  // Every prefix at a line boundary, under each shell, fed on stdin as `curl … | sh` does, with
  // an agent present and a release one request away: no request, no file, no output.
  test.each(["dash", "busybox", "bash --posix"] as const)(
    "cut at every line boundary, under %s",
    async (shell: ShellName) => {
      const box = makeShSandbox(`cut-${shell.replace(/\W+/g, "")}`);
      const env = { ...box.env, VELESDB_HOOKS_DOWNLOAD_URL: `${server.url}/latest` };
      const before = snapshotTree(box.root);
      const seen = server.requests.length;
      const mainLine = lines.lastIndexOf('main "$@"');
      // n = 0 … mainLine: from nothing at all up to everything but `main "$@"`.
      const prefixes = Array.from({ length: mainLine + 1 }, (_, n) =>
        n === 0 ? "" : `${lines.slice(0, n).join("\n")}\n`,
      );
      const outputs = await inBatches(prefixes, 16, (prefix) => runPrefix(shell, prefix, env, box.root));
      expect(outputs.filter((output) => output !== "")).toEqual([]);
      expect(server.requests.length).toBe(seen);
      expect(snapshotTree(box.root)).toEqual(before);

      // Positive control: the whole script, same shell and setup, does install.
      expect(await runPrefix(shell, script, env, box.root)).toContain("installed velesdb-hooks");
      expect(server.requests.length).toBeGreaterThan(seen);
    },
  );

  test("cut inside a line (every 37th byte), under dash", async () => {
    const box = makeShSandbox("cut-bytes");
    const env = { ...box.env, VELESDB_HOOKS_DOWNLOAD_URL: `${server.url}/latest` };
    const before = snapshotTree(box.root);
    const seen = server.requests.length;
    const bytes = Buffer.from(script);
    const prefixes: string[] = [];
    for (let cut = 1; cut < bytes.length - 'main "$@"\n'.length; cut += 37)
      prefixes.push(bytes.subarray(0, cut).toString("latin1"));
    const outputs = await inBatches(prefixes, 16, (prefix) => runPrefix("dash", prefix, env, box.root));
    expect(outputs.filter((output) => output !== "")).toEqual([]);
    expect(server.requests.length).toBe(seen);
    expect(snapshotTree(box.root)).toEqual(before);
  });
});

/** runPrefix(shell, text, env, cwd) → what the shell printed on stdout with text as its script on stdin. */
async function runPrefix(shell: ShellName, text: string, env: Record<string, string>, cwd: string): Promise<string> {
  const child = Bun.spawn([...shellCommand(shell), "-s", "--", "--client", "claude"], {
    cwd,
    env,
    stdin: Buffer.from(text, "latin1"),
    stdout: "pipe",
    stderr: "ignore",
  });
  const [stdout] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  return stdout;
}

async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}

describe("platform detection (fake uname, sysctl, ldd and getconf on PATH)", () => {
  const uname = (s: string, m: string) =>
    `#!/bin/sh\ncase "$1" in -s) echo '${s}' ;; -m) echo '${m}' ;; *) exit 1 ;; esac\n`;
  const GLIBC = {
    ldd: "#!/bin/sh\necho 'ldd (Debian GLIBC 2.36-9+deb12u1) 2.36'\n",
    getconf: "#!/bin/sh\necho 'glibc 2.36'\n",
  };
  const MUSL = {
    ldd: "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.4' >&2\nexit 1\n",
    getconf: "#!/bin/sh\nexit 1\n",
  };
  const sysctl = (value: string | undefined) =>
    value === undefined
      ? "#!/bin/sh\necho 'sysctl: unknown oid' >&2\nexit 1\n"
      : `#!/bin/sh\n[ "$2" = sysctl.proc_translated ] && echo ${value}\n`;

  const ROWS: Array<[string, Record<string, string>, string]> = [
    ["Debian on x86_64", { uname: uname("Linux", "x86_64"), ...GLIBC }, "linux-x64"],
    ["Debian on aarch64", { uname: uname("Linux", "aarch64"), ...GLIBC }, "linux-arm64"],
    ["Alpine on x86_64 (ldd says musl)", { uname: uname("Linux", "x86_64"), ...MUSL }, "linux-x64-musl"],
    ["Alpine on aarch64", { uname: uname("Linux", "aarch64"), ...MUSL }, "linux-arm64-musl"],
    ["an Intel Mac", { uname: uname("Darwin", "x86_64"), sysctl: sysctl("0") }, "darwin-x64"],
    [
      "an Intel Mac whose sysctl lacks the Rosetta key",
      { uname: uname("Darwin", "x86_64"), sysctl: sysctl(undefined) },
      "darwin-x64",
    ],
    ["an Apple silicon Mac", { uname: uname("Darwin", "arm64"), sysctl: sysctl("0") }, "darwin-arm64"],
    [
      "an x86_64 shell under Rosetta on Apple silicon: the native build",
      { uname: uname("Darwin", "x86_64"), sysctl: sysctl("1") },
      "darwin-arm64",
    ],
    [
      "Git Bash on Windows",
      { uname: uname("MINGW64_NT-10.0-19045", "x86_64") },
      "error: on Windows, run in PowerShell: irm <release download URL>/install.ps1 | iex",
    ],
    [
      "32-bit ARM Linux",
      { uname: uname("Linux", "armv7l"), ...GLIBC },
      "error: no velesdb-hooks build for Linux on armv7l",
    ],
    ["FreeBSD", { uname: uname("FreeBSD", "amd64") }, "error: no velesdb-hooks build for FreeBSD"],
  ];
  const tools = BASE_TOOLS.filter((tool) => !["uname", "ldd", "getconf"].includes(tool));

  test.each(ROWS)("%s", (_label, fakes, expected) => {
    const result = detectedPlatform({ PATH: toolsDir(tools, fakes) });
    if (expected.startsWith("error: ")) {
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain(expected.slice("error: ".length));
    } else {
      expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 0, stdout: expected });
    }
  });

  test("every platform install.sh picks is in the release matrix, and every non-Windows target is picked by some machine", () => {
    const picked = ROWS.map(([, , expected]) => expected).filter((id) => !id.startsWith("error: "));
    const ids = RELEASE_TARGETS.map((target) => target.id);
    for (const id of picked) expect(ids).toContain(id);
    expect(new Set(picked)).toEqual(new Set(ids.filter((id) => !id.startsWith("windows-"))));
  });
});

describe("the script itself", () => {
  test("passes shellcheck (POSIX sh) and parses under dash and busybox sh", () => {
    const shellcheck = Bun.which("shellcheck");
    if (!shellcheck) throw new Error("shellcheck is not installed (apt-get install shellcheck)");
    const lint = Bun.spawnSync([shellcheck, "--shell=sh", "--severity=style", INSTALL_SH]);
    expect(lint.stdout.toString()).toBe("");
    expect(lint.exitCode).toBe(0);
    for (const shell of ["dash", "busybox"] as const)
      expect(Bun.spawnSync([...shellCommand(shell), "-n", INSTALL_SH]).exitCode).toBe(0);
  });

  test.each([
    [["--client", "Claude"], 64, "--client takes an agent name"],
    [["--client", "claude;rm"], 64, "--client takes an agent name"],
    [["--client"], 64, "--client needs a value"],
    [["--frobnicate"], 64, "unknown option --frobnicate"],
    [["--uninstall", "--version", "v1.0.0"], 64, "--uninstall does not take --version"],
    [["--help"], 0, ""],
  ])("arguments %p: exit %p before any download", async (args, exitCode, message) => {
    const box = makeShSandbox("args");
    const seen = server.requests.length;
    const run = await box.run(args, { env: flat(`${server.url}/latest`) });
    expect(run.exitCode).toBe(exitCode);
    expect(run.stderr).toContain(message);
    if (exitCode === 0) expect(run.stdout).toContain("Usage: install.sh");
    expect(server.requests.length).toBe(seen);
    expect(fs.existsSync(box.stable)).toBe(false);
  });

  test("plain http is refused unless it is this machine", async () => {
    const box = makeShSandbox("http");
    for (const url of ["http://example.invalid/rel", "http://127.0.0.1.example.invalid/rel", "ftp://127.0.0.1/rel"]) {
      const run = await box.run([], { env: flat(url) });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("use an https:// URL");
    }
    expect(fs.existsSync(box.stable)).toBe(false);
  });

  test("the source copy names no repository and says how to point it at one", async () => {
    const box = makeShSandbox("unstamped");
    const seen = server.requests.length;
    const run = await box.run([], { env: { VELESDB_HOOKS_GITHUB: server.url } });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("set VELESDB_HOOKS_REPO=owner/velesdb-hooks");
    expect(server.requests.length).toBe(seen);
  });

  test.each([["a/b/c"], ["a b/c"], ["x"], ["/x"], ["x/"], ["acme/velesdb-hooks?x=1"]])(
    "VELESDB_HOOKS_REPO=%p is refused before any download",
    async (repo) => {
      const box = makeShSandbox("badrepo");
      const seen = server.requests.length;
      const run = await box.run([], { env: { VELESDB_HOOKS_GITHUB: server.url, VELESDB_HOOKS_REPO: repo } });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("VELESDB_HOOKS_REPO must be owner/name");
      expect(server.requests.length).toBe(seen);
    },
  );

  test("the copy the release workflow stamps with its repository installs from that repository's releases", async () => {
    const workflow = fs.readFileSync(path.join(REPO_ROOT, ".github", "workflows", "release.yml"), "utf8");
    expect(workflow).toContain("--repo");
    const source = fs.readFileSync(INSTALL_SH, "utf8");
    const stamped = path.join(tempDir("stamped"), "install.sh");
    fs.writeFileSync(stamped, stampInstallScript(source, REPO));
    expect(fs.readFileSync(stamped, "utf8")).toBe(
      source.replace('DEFAULT_REPO="OWNER/velesdb-hooks"', `DEFAULT_REPO="${REPO}"`),
    );
    expect(() => stampInstallScript(source, "not a repo")).toThrow("is not owner/name");
    expect(() => stampInstallScript(source.replace("DEFAULT_REPO=", "REPO="), REPO)).toThrow("exactly once");

    const box = makeShSandbox("stamped");
    const child = Bun.spawn([...shellCommand("dash"), stamped], {
      cwd: box.root,
      env: { ...box.env, VELESDB_HOOKS_GITHUB: server.url },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    expectInstalled(box, { exitCode, stdout, stderr }, NEW);
    expect(server.requests.at(-1)).toBe(`/${REPO}/releases/latest/download/${assetFileName(NEW)}`);
  });
});

/** tarGz({ name: content }, { name: linkTarget }) → a gzipped tar holding those files and symbolic links. */
function tarGz(files: Record<string, string>, links: Record<string, string> = {}): Buffer {
  const dir = tempDir("tarball");
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content, { mode: 0o755 });
  for (const [name, target] of Object.entries(links)) fs.symlinkSync(target, path.join(dir, name));
  const tar = Bun.spawnSync(["tar", "-czf", "-", "-C", dir, ...Object.keys(files), ...Object.keys(links)]);
  if (tar.exitCode !== 0) throw new Error(`tar failed: ${tar.stderr.toString()}`);
  return Buffer.from(tar.stdout);
}

describe("musl: the C++ runtime the musl builds load is checked before any download", () => {
  const MUSL_LDD = "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.4' >&2\nexit 1\n";
  const MUSL_DIRS = ["/lib", "/usr/local/lib", "/usr/lib"];

  test("a musl system without libstdc++ stops before downloading and prints the command that fixes it", async () => {
    // This Debian machine keeps its C++ runtime under /usr/lib/<triplet>/, where musl's loader
    // does not look: with ldd saying musl, it is exactly an Alpine without `libstdc++`.
    const present = MUSL_DIRS.filter((dir) => fs.existsSync(path.join(dir, "libstdc++.so.6")));
    if (present.length > 0)
      throw new Error(
        `this test needs a machine without libstdc++.so.6 in ${MUSL_DIRS.join(", ")} (found in ${present.join(", ")})`,
      );
    const box = makeShSandbox("musl-missing");
    const seen = server.requests.length;
    const before = snapshotTree(box.root);
    const env = {
      ...flat(`${server.url}/latest`),
      PATH: toolsDir([...BASE_TOOLS.filter((tool) => tool !== "ldd"), "curl", "sha256sum"], { ldd: MUSL_LDD }),
    };
    const run = await box.run([], { env });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("velesdb-hooks needs libstdc++.so.6 libgcc_s.so.1 on this musl system");
    expect(run.stderr).toContain("install with: apk add libstdc++");
    expect(run.stderr).toContain("nothing was downloaded");
    expect(server.requests.length).toBe(seen);
    expect(snapshotTree(box.root)).toEqual(before);
    // Control: the same machine and tools with ldd saying glibc installs.
    const glibc = { ...env, PATH: toolsDir([...BASE_TOOLS, "curl", "sha256sum"]) };
    expectInstalled(box, await box.run([], { env: glibc }), NEW);
  });

  test.each([
    ["both libraries in one directory", [["libstdc++.so.6", "libgcc_s.so.1"]], ""],
    ["spread over two directories", [["libstdc++.so.6"], ["libgcc_s.so.1"]], ""],
    ["libgcc_s missing", [["libstdc++.so.6"]], "libgcc_s.so.1"],
    ["libstdc++ missing", [["libgcc_s.so.1"]], "libstdc++.so.6"],
    ["an empty directory", [[]], "libstdc++.so.6 libgcc_s.so.1"],
  ])("missing_musl_libraries: %s", (_label, layout: string[][], missing) => {
    const dirs = layout.map((names) => {
      const dir = tempDir("musl-lib");
      for (const name of names) fs.writeFileSync(path.join(dir, name), "");
      return dir;
    });
    const script = `${scriptWithoutMain()}missing_musl_libraries ${dirs.map((dir) => `'${dir}'`).join(" ")}\n`;
    const result = Bun.spawnSync(shellCommand("dash"), { stdin: Buffer.from(script), stdout: "pipe", stderr: "pipe" });
    expect({ exitCode: result.exitCode, stdout: result.stdout.toString() }).toEqual({
      exitCode: 0,
      stdout: `${missing}\n`,
    });
  });
});
