// The release on the npm registry (docs/development/releasing.md), proven against a real registry on 127.0.0.1:
// Verdaccio 6.8.0 (test/registry, installed by scripts/install-e2e-hosts.ts like the e2e hosts),
// storage and users in a temporary directory. The packages are the ones `bun run build:all`
// writes (test/support/release-build.ts, the build test/release.test.ts checks) and
// scripts/publish-npm.ts publishes them, as the release workflow does. Then, with the machine's
// own npm and a private HOME, cache and prefix per run:
// - `npx velesdb-hooks install`, `npm install -g velesdb-hooks`, `npm install -D velesdb-hooks`
//   in a project: each installs exactly the linux-x64 platform package, runs install, check
//   (in step), a hook from the stable path (no Node in the entry) and uninstall;
// - npm's --os/--cpu/--libc select exactly one platform package per target, and the launcher
//   finds that one; linux-arm64's binary, so installed, runs under qemu-aarch64-static;
// - --omit=optional leaves no binary and the launcher says so in one line, also when another
//   user planted a platform package up the tree (docs/hardening.md §1);
// - a platform tarball that is not the one the lockfile's integrity names is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { packageVersion } from "../scripts/build.ts";
import { MAIN_PACKAGE, npmPlatform, platformPackageName } from "../scripts/npm-packages.ts";
import { binaryName, RELEASE_TARGETS, type ReleaseTarget } from "../targets/matrix.ts";
import { RELEASE_REPO, sharedReleaseBuild } from "./support/release-build.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const VERSION = packageVersion();
const VERDACCIO = path.join(ROOT, "test", "registry", "node_modules", "verdaccio", "bin", "verdaccio");
const NODE = Bun.which("node");
const NPM = Bun.which("npm");
// Each install unpacks ~110 MB; on a busy 2-core machine one npm run took over a minute.
const SLOW = 600_000;
const HOST = RELEASE_TARGETS.find((t) => t.id === `${process.platform}-${process.arch}` && t.libc !== "musl");

let work: string;
/** url: what npm is given (the identity pass-through); direct: Verdaccio itself. */
let registry: { url: string; direct: string; process: ReturnType<typeof Bun.spawn>; storage: string; npmrc: string };
let proxy: { process: ReturnType<typeof Bun.spawn>; url: string } | undefined;
let npmDir: string;
let published: { exitCode: number; stdout: string; stderr: string };
/** The project of the `npm install -D` test, reused by the signal and integrity tests. */
let devProject: { home: string; project: string; native: string } | undefined;

/** A directory under this file's work directory, removed in afterAll. */
function dir(label: string): string {
  return fs.mkdtempSync(path.join(work, `${label}-`));
}

/** identityProxy(upstream) → test/support/identity-proxy.ts running in front of upstream (why: its header), and its URL. */
async function identityProxy(upstream: string): Promise<{ process: ReturnType<typeof Bun.spawn>; url: string }> {
  const child = Bun.spawn([process.execPath, path.join(import.meta.dir, "support", "identity-proxy.ts"), upstream], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  let printed = "";
  while (!printed.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the identity proxy did not start");
    printed += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { process: child, url: `http://127.0.0.1:${Number(printed.trim())}` };
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

beforeAll(async () => {
  if (!fs.existsSync(VERDACCIO))
    throw new Error("Verdaccio is not installed: run bun scripts/install-e2e-hosts.ts (npm test does it first)");
  if (!NODE || !NPM) throw new Error("node and npm must be on PATH");
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-npm-registry-")));
  const build = await sharedReleaseBuild();
  if (build.exitCode !== 0) throw new Error(`build:all failed: ${build.stderr}`);
  npmDir = path.join(build.out, "npm");

  // Verdaccio's own defaults, except: nothing proxied to the public registry (every package
  // comes from here), one user, and a body limit above a platform package (10 MB refuses
  // ~55 MB of tarball, which travels base64-encoded in a JSON body).
  const home = dir("verdaccio");
  const storage = path.join(home, "storage");
  const port = await freePort();
  const config = [
    `storage: ${JSON.stringify(storage)}`,
    "auth:",
    "  htpasswd:",
    `    file: ${JSON.stringify(path.join(home, "htpasswd"))}`,
    "    max_users: 1",
    "uplinks: {}",
    "packages:",
    "  '**':",
    "    access: $all",
    "    publish: $authenticated",
    "max_body_size: 300mb",
    `listen: 127.0.0.1:${port}`,
    "log: { type: stdout, format: json, level: warn }",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(home, "config.yaml"), config);
  const log = Bun.file(path.join(home, "verdaccio.log"));
  const verdaccio = `http://127.0.0.1:${port}`;
  proxy = await identityProxy(verdaccio);
  const url = proxy.url;
  // Tarball URLs in the packuments name the proxy, so downloads go through it too.
  const child = Bun.spawn([NODE, VERDACCIO, "--config", path.join(home, "config.yaml")], {
    cwd: home,
    stdout: log,
    stderr: log,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, VERDACCIO_PUBLIC_URL: `${url}/` },
  });
  for (let i = 0; ; i++) {
    const up = await fetch(`${verdaccio}/-/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 300 || child.exitCode !== null)
      throw new Error(
        `Verdaccio did not start: ${fs.readFileSync(path.join(home, "verdaccio.log"), "utf8").slice(-2000)}`,
      );
    await Bun.sleep(200);
  }
  // One PUT creates the user and answers with its token (what `npm adduser` does).
  const user = await fetch(`${url}/-/user/org.couchdb.user:publisher`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      _id: "org.couchdb.user:publisher",
      name: "publisher",
      password: "not-a-secret-test-only",
      type: "user",
      roles: [],
      date: new Date().toISOString(),
    }),
  });
  const { token } = (await user.json()) as { token?: string };
  if (user.status !== 201 || !token) throw new Error(`Verdaccio refused the user (${user.status})`);
  const npmrc = path.join(home, "npmrc");
  fs.writeFileSync(npmrc, `registry=${url}/\n//${url.slice("http://".length)}/:_authToken=${token}\n`);
  registry = { url, direct: verdaccio, process: child, storage, npmrc };

  const publisher = Bun.spawn([process.execPath, path.join(ROOT, "scripts", "publish-npm.ts"), npmDir], {
    env: npmEnv(dir("publisher-home")),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(publisher.stdout).text(),
    new Response(publisher.stderr).text(),
    publisher.exited,
  ]);
  published = { exitCode, stdout, stderr };
}, 1_200_000);

afterAll(async () => {
  if (registry) {
    registry.process.kill();
    await registry.process.exited;
  }
  if (proxy) {
    proxy.process.kill();
    await proxy.process.exited;
  }
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** npmEnv(home) → an environment where npm, npx and Node see only this registry, a private cache and a private global prefix. */
function npmEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const prefix = path.join(home, ".npm-global");
  return {
    PATH: [path.join(prefix, "bin"), path.dirname(NODE!), path.dirname(NPM!), "/usr/bin", "/bin"].join(":"),
    HOME: home,
    npm_config_userconfig: registry.npmrc,
    npm_config_cache: path.join(home, ".npm"),
    npm_config_prefix: prefix,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    ...extra,
  };
}

interface Run {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

function run(argv: string[], options: { cwd: string; env: Record<string, string>; stdin?: string }): Run {
  const result = Bun.spawnSync(argv, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin === undefined ? "ignore" : Buffer.from(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  return {
    exitCode: result.exitCode,
    signal: result.signalCode ? String(result.signalCode) : null,
    stdout: result.stdout.toString(),
    stderr: result.stderr.toString(),
  };
}

/** platformPackagesUnder(root) → every velesdb-hooks-<target> directory npm put anywhere under root's node_modules trees. */
function platformPackagesUnder(root: string): string[] {
  const names = new Set(RELEASE_TARGETS.map(platformPackageName));
  const found: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(d, entry.name);
      if (path.basename(d) === "node_modules" && names.has(entry.name)) found.push(full);
      walk(full);
    }
  };
  walk(root);
  return found;
}

/** The velesdb-memory test double (an executable node script): what `install --mcp` registers. */
const VELESDB_MEMORY_DOUBLE = path.join(ROOT, "test", "e2e", "fake-velesdb-memory.mjs");

const sessionStart = (cwd: string) =>
  JSON.stringify({ session_id: "npm", cwd, hook_event_name: "SessionStart", source: "startup" });

/** installCheckHookUninstall(velesdbHooks, home, installedBinary) → the four steps every npm path ends with, asserted. */
function installCheckHookUninstall(
  velesdbHooks: string[],
  cwd: string,
  env: Record<string, string>,
  installedBinary: string,
): void {
  const home = env.HOME!;
  fs.mkdirSync(path.join(home, ".claude"), { recursive: true });
  // --mcp with the project's velesdb-memory double: check fails on hooks without their server (docs/mcp-server.md).
  const install = run([...velesdbHooks, "install", "--mcp"], {
    cwd,
    env: { ...env, VELESDB_MEMORY_BIN: VELESDB_MEMORY_DOUBLE },
  });
  expect({ exitCode: install.exitCode, stderr: install.stderr }).toEqual({ exitCode: 0, stderr: "" });
  const stable = path.join(home, ".velesdb-hooks", "bin", "velesdb-hooks");
  // The stable path holds the platform package's native binary, and the entries name it: no hook starts Node.
  expect(Buffer.compare(fs.readFileSync(stable), fs.readFileSync(installedBinary))).toBe(0);
  const settings = fs.readFileSync(path.join(home, ".claude", "settings.json"), "utf8");
  expect(settings).toContain(JSON.stringify(stable));
  expect(settings).not.toContain("node_modules");
  expect(settings).not.toContain("velesdb-hooks.js");
  const check = run([...velesdbHooks, "check"], { cwd, env });
  // With its output: a fresh .ci/run's failure here showed only "Received: 1" (the broker idle race, fixed in src/mcp/broker.ts).
  expect({ exitCode: check.exitCode, stdout: check.stdout, stderr: check.stderr }).toMatchObject({ exitCode: 0 });
  expect(check.stdout).toContain("claude: entries in step");
  const hook = run([stable, "claude", "session-start"], {
    cwd,
    env: { PATH: "/usr/bin:/bin", HOME: home },
    stdin: sessionStart(cwd),
  });
  expect(hook.exitCode).toBe(0);
  expect(JSON.parse(hook.stdout).hookSpecificOutput.hookEventName).toBe("SessionStart");
  const uninstall = run([...velesdbHooks, "uninstall"], { cwd, env });
  expect(uninstall.exitCode).toBe(0);
  expect(fs.existsSync(stable)).toBe(false);
  // install created settings.json, so uninstall removes it; had it been there before, only our entries would go.
  const settingsAfter = path.join(home, ".claude", "settings.json");
  expect(fs.existsSync(settingsAfter) ? fs.readFileSync(settingsAfter, "utf8") : "").not.toContain(stable);
  // Control: uninstalled, check no longer finds the hooks in step.
  expect(run([...velesdbHooks, "check"], { cwd, env }).stdout).not.toContain("claude: entries in step");
}

describe("publishing to a registry on 127.0.0.1", () => {
  test(
    "publish-npm publishes every platform package, then the launcher package, all at package.json's version",
    async () => {
      expect({
        exitCode: published.exitCode,
        stderr: published.stderr.replace(/^npm (notice|warn).*\n/gm, ""),
      }).toEqual({ exitCode: 0, stderr: "" });
      const order = published.stdout.split("\n").filter((l) => l.endsWith(": published"));
      expect(order.at(-1)).toBe(`${MAIN_PACKAGE}@${VERSION}: published`);
      expect(order.slice(0, -1).sort()).toEqual(
        RELEASE_TARGETS.map((t) => `${platformPackageName(t)}@${VERSION}: published`).sort(),
      );
      const main = (await (await fetch(`${registry.url}/${MAIN_PACKAGE}`)).json()) as {
        versions: Record<string, { optionalDependencies: Record<string, string>; scripts?: object; bin: object }>;
      };
      const manifest = main.versions[VERSION]!;
      expect(manifest.optionalDependencies).toEqual(
        Object.fromEntries(RELEASE_TARGETS.map((t) => [platformPackageName(t), VERSION])),
      );
      expect(manifest.scripts ?? {}).toEqual({}); // no install script for npm 11 to ask about
      for (const target of RELEASE_TARGETS) {
        const doc = (await (await fetch(`${registry.url}/${platformPackageName(target)}`)).json()) as {
          versions: Record<string, Record<string, unknown>>;
        };
        expect(doc.versions[VERSION]).toMatchObject(npmPlatform(target));
      }
    },
    SLOW,
  );

  test("through the pass-through npm is given, a tarball arrives as stored; control: Verdaccio itself gzips it again for a client that accepts gzip", async () => {
    const file = `${MAIN_PACKAGE}-${VERSION}.tgz`;
    const stored = fs.readFileSync(path.join(registry.storage, MAIN_PACKAGE, file));
    const tarballPath = `/${MAIN_PACKAGE}/-/${file}`;
    const asNpmAsks = { "accept-encoding": "gzip,deflate" };
    const passed = await fetch(`${registry.url}${tarballPath}`, { headers: asNpmAsks, decompress: false });
    expect(passed.headers.get("content-encoding")).toBeNull();
    expect(Buffer.compare(Buffer.from(await passed.arrayBuffer()), stored)).toBe(0);
    const direct = await fetch(`${registry.direct}${tarballPath}`, { headers: asNpmAsks, decompress: false });
    expect(direct.headers.get("content-encoding")).toBe("gzip");
    expect(Buffer.compare(Bun.gunzipSync(new Uint8Array(await direct.arrayBuffer())), stored)).toBe(0);
  });

  test(
    "a second run publishes nothing: what the registry holds with the same bytes is skipped",
    () => {
      const again = run([process.execPath, path.join(ROOT, "scripts", "publish-npm.ts"), npmDir], {
        cwd: work,
        env: npmEnv(dir("publisher-again")),
      });
      expect(again.exitCode).toBe(0);
      expect(again.stdout.split("\n").filter((l) => l.endsWith("already published with these bytes"))).toHaveLength(
        RELEASE_TARGETS.length + 1,
      );
    },
    SLOW,
  );
});

describe("installed from the registry on this machine (linux-x64, glibc)", () => {
  const hostPackage = () => platformPackageName(HOST!);

  test(
    "npx velesdb-hooks install, check, a hook, uninstall; npx fetched exactly the linux-x64 package",
    () => {
      const home = dir("npx-home");
      const env = npmEnv(home);
      const npx = [path.join(path.dirname(NPM!), "npx"), "--yes", `${MAIN_PACKAGE}@${VERSION}`];
      const version = run([...npx, "--version"], { cwd: home, env });
      expect({ exitCode: version.exitCode, stdout: version.stdout }).toEqual({
        exitCode: 0,
        stdout: `velesdb-hooks ${VERSION}\n`,
      });
      const found = platformPackagesUnder(path.join(home, ".npm", "_npx"));
      expect(found.map((p) => path.basename(p))).toEqual([hostPackage()]);
      installCheckHookUninstall(npx, home, env, path.join(found[0]!, "bin", binaryName(HOST!)));
    },
    SLOW,
  );

  test(
    "npm install -g velesdb-hooks, then velesdb-hooks install, check, a hook, uninstall",
    () => {
      const home = dir("global-home");
      const env = npmEnv(home);
      const add = run([NPM!, "install", "-g", `${MAIN_PACKAGE}@${VERSION}`], { cwd: home, env });
      expect(add.exitCode).toBe(0);
      const prefix = env.npm_config_prefix!;
      const found = platformPackagesUnder(prefix);
      expect(found.map((p) => path.basename(p))).toEqual([hostPackage()]);
      expect(Bun.which("velesdb-hooks", { PATH: env.PATH })).toBe(path.join(prefix, "bin", "velesdb-hooks"));
      installCheckHookUninstall(["velesdb-hooks"], home, env, path.join(found[0]!, "bin", binaryName(HOST!)));
    },
    SLOW,
  );

  test(
    "npm install -D velesdb-hooks in a project: the launcher passes arguments, stdin, stdout, stderr and the exit code through",
    () => {
      const home = dir("project-home");
      const project = path.join(home, "project");
      fs.mkdirSync(project);
      fs.writeFileSync(
        path.join(project, "package.json"),
        '{ "name": "a-project", "version": "1.0.0", "private": true }\n',
      );
      const env = npmEnv(home);
      const add = run([NPM!, "install", "-D", `${MAIN_PACKAGE}@${VERSION}`], { cwd: project, env });
      expect(add.exitCode).toBe(0);
      const found = platformPackagesUnder(project);
      expect(found.map((p) => path.relative(project, p))).toEqual([path.join("node_modules", hostPackage())]);
      const launcher = path.join(project, "node_modules", ".bin", "velesdb-hooks");
      const native = path.join(found[0]!, "bin", binaryName(HOST!));
      for (const args of [["--version"], ["no-such-command"], ["claude", "session-start"]]) {
        const viaNpm = run([launcher, ...args], { cwd: project, env, stdin: sessionStart(project) });
        const direct = run([native, ...args], { cwd: project, env, stdin: sessionStart(project) });
        expect(viaNpm).toEqual(direct);
      }
      expect(run([launcher, "no-such-command"], { cwd: project, env }).exitCode).not.toBe(0); // the exit code compared is not always 0
      installCheckHookUninstall([launcher], project, env, native);
      devProject = { home, project, native };
    },
    SLOW,
  );

  test(
    "a signal sent to the launcher reaches the binary, and the launcher dies of it too; control: the binary alone dies the same way",
    async () => {
      if (!devProject) throw new Error("needs the project of the npm install -D test");
      const { home, project, native } = devProject;
      const env = npmEnv(home);
      // A hook reads stdin to its end: with the pipe left open it waits until it is killed.
      const waiting = async (argv: string[]) => {
        const child = Bun.spawn(argv, { cwd: home, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
        return child;
      };
      const launcher = await waiting([
        path.join(project, "node_modules", ".bin", "velesdb-hooks"),
        "claude",
        "session-start",
      ]);
      let binaryPid: number | undefined;
      for (let i = 0; i < 200 && binaryPid === undefined; i++) {
        await Bun.sleep(50);
        const children = fs.readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, "utf8").trim();
        const pid = children ? Number(children.split(" ")[0]) : undefined;
        const exe = pid ? fs.readlinkSync(`/proc/${pid}/exe`, { encoding: "utf8" }) : "";
        if (pid && exe === native) binaryPid = pid;
      }
      expect(binaryPid).toBeDefined();
      launcher.kill("SIGTERM");
      await launcher.exited;
      expect(launcher.signalCode).toBe("SIGTERM");
      for (let i = 0; i < 100 && fs.existsSync(`/proc/${binaryPid}`); i++) await Bun.sleep(20);
      expect(fs.existsSync(`/proc/${binaryPid}`)).toBe(false);
      const alone = await waiting([native, "claude", "session-start"]);
      await Bun.sleep(200);
      alone.kill("SIGTERM");
      await alone.exited;
      expect(alone.signalCode).toBe("SIGTERM");
    },
    SLOW,
  );

  // Measured: npm 11.19 ignores --omit=optional with -g (it installed linux-x64 there); in a project it obeys.
  test(
    "--omit=optional: no binary; the launcher says so in one line naming the curl and PowerShell installers",
    () => {
      const home = dir("omit-home");
      fs.writeFileSync(path.join(home, "package.json"), '{ "name": "p", "version": "1.0.0", "private": true }\n');
      const env = npmEnv(home);
      const add = run([NPM!, "install", "--omit=optional", `${MAIN_PACKAGE}@${VERSION}`], { cwd: home, env });
      expect(add.exitCode).toBe(0);
      expect(platformPackagesUnder(home)).toEqual([]);
      const said = run([path.join(home, "node_modules", ".bin", "velesdb-hooks"), "install"], { cwd: home, env });
      expect(said.exitCode).toBe(1);
      expect(said.stdout).toBe("");
      expect(said.stderr.split("\n")).toHaveLength(2); // one line and its newline
      const download = `https://github.com/${RELEASE_REPO}/releases/latest/download`;
      expect(said.stderr).toContain(`no binary for ${process.platform}-${process.arch} is installed`);
      expect(said.stderr).toContain(`curl -fsSL ${download}/install.sh | sh`);
      expect(said.stderr).toContain(`irm ${download}/install.ps1 | iex`);
      expect(fs.existsSync(path.join(home, ".velesdb-hooks"))).toBe(false);
    },
    SLOW,
  );
});

describe("a platform package npm did not install for this launcher (docs/hardening.md §1)", () => {
  test(
    "--omit=optional under a directory another user can write, a 0.0.1 package planted in its node_modules: one-line refusal, the planted binary never runs, nothing installed",
    () => {
      const home = dir("planted-home");
      const shared = path.join(home, "shared");
      const project = path.join(shared, "project");
      fs.mkdirSync(project, { recursive: true });
      fs.chmodSync(shared, 0o777); // "a directory another user can write"
      fs.writeFileSync(path.join(project, "package.json"), '{ "name": "p", "version": "1.0.0", "private": true }\n');
      const env = npmEnv(home);
      const add = run([NPM!, "install", "--omit=optional", `${MAIN_PACKAGE}@${VERSION}`], { cwd: project, env });
      expect(add.exitCode).toBe(0);
      expect(platformPackagesUnder(project)).toEqual([]);
      // The other user's package: this machine's real one as the registry serves it, renumbered
      // 0.0.1, its binary a script that leaves a marker (what the trial's planted binary did as root).
      const planted = path.join(shared, "node_modules", platformPackageName(HOST!));
      fs.mkdirSync(planted, { recursive: true });
      const tarball = path.join(
        registry.storage,
        platformPackageName(HOST!),
        `${platformPackageName(HOST!)}-${VERSION}.tgz`,
      );
      expect(
        Bun.spawnSync(["tar", "-xzf", tarball, "-C", planted, "--strip-components=1", "package/package.json"]).exitCode,
      ).toBe(0);
      const manifest = JSON.parse(fs.readFileSync(path.join(planted, "package.json"), "utf8")) as Record<
        string,
        unknown
      >;
      fs.writeFileSync(path.join(planted, "package.json"), JSON.stringify({ ...manifest, version: "0.0.1" }));
      const marker = path.join(home, "planted-ran");
      fs.mkdirSync(path.join(planted, "bin"));
      fs.writeFileSync(path.join(planted, "bin", binaryName(HOST!)), `#!/bin/sh\ntouch "${marker}"\n`, { mode: 0o755 });
      const said = run([path.join(project, "node_modules", ".bin", "velesdb-hooks"), "install"], { cwd: project, env });
      expect({ exitCode: said.exitCode, stdout: said.stdout }).toEqual({ exitCode: 1, stdout: "" });
      expect(said.stderr.split("\n")).toHaveLength(2);
      expect(said.stderr).toContain(`no binary for ${process.platform}-${process.arch} is installed`);
      expect(fs.existsSync(marker)).toBe(false);
      expect(fs.existsSync(path.join(home, ".velesdb-hooks"))).toBe(false);
      // Control: the same planted package put where npm puts this launcher's own: still refused, now for its version.
      fs.renameSync(planted, path.join(project, "node_modules", platformPackageName(HOST!)));
      const again = run([path.join(project, "node_modules", ".bin", "velesdb-hooks"), "install"], {
        cwd: project,
        env,
      });
      expect(again.exitCode).toBe(1);
      expect(again.stderr).toContain(
        `is version "0.0.1" of "${platformPackageName(HOST!)}", not ${platformPackageName(HOST!)} ${VERSION}`,
      );
      expect(fs.existsSync(marker)).toBe(false);
    },
    SLOW,
  );
});

describe("npm's platform selection: --os/--cpu/--libc", () => {
  /** npmFlags(target) → the flags that make npm install as if on that target. */
  const npmFlags = (target: ReleaseTarget) => {
    const {
      os: [osName],
      cpu: [cpu],
      libc,
    } = npmPlatform(target);
    return [`--os=${osName}`, `--cpu=${cpu}`, ...(libc ? [`--libc=${libc[0]}`] : [])];
  };
  // One cache for the seven installs: each tarball is fetched once.
  let cacheHome: string;
  beforeAll(() => {
    cacheHome = dir("selection-cache");
  });

  /** installAs(flags) → a project with velesdb-hooks installed under those flags. */
  const installAs = (flags: string[]) => {
    const project = dir("selection");
    fs.writeFileSync(path.join(project, "package.json"), '{ "name": "p", "version": "1.0.0", "private": true }\n');
    const env = npmEnv(project, { npm_config_cache: path.join(cacheHome, ".npm") });
    const add = run([NPM!, "install", ...flags, `${MAIN_PACKAGE}@${VERSION}`], { cwd: project, env });
    expect({ exitCode: add.exitCode, stderr: add.stderr.replace(/^npm warn.*\n/gm, "") }).toEqual({
      exitCode: 0,
      stderr: "",
    });
    return project;
  };
  /** launcherFinds(project, platform, arch, libc) → what the installed launcher's findBinary answers there. */
  const launcherFinds = (project: string, platform: string, arch: string, libc: string) => {
    const script = `const { findBinary } = require(${JSON.stringify(path.join(project, "node_modules", MAIN_PACKAGE, "bin", "velesdb-hooks.js"))}); process.stdout.write(JSON.stringify(findBinary(${JSON.stringify(platform)}, ${JSON.stringify(arch)}, () => ${JSON.stringify(libc)})));`;
    const result = run([NODE!, "-e", script], { cwd: project, env: { PATH: "/usr/bin:/bin" } });
    return JSON.parse(result.stdout) as { binary?: string; problem?: string };
  };

  test.each(RELEASE_TARGETS.map((t) => [t.id, t] as const))(
    "%s: exactly its package is installed, and the launcher finds its binary there",
    (_id, target) => {
      const project = installAs(npmFlags(target));
      const found = platformPackagesUnder(project);
      expect(found.map((p) => path.basename(p))).toEqual([platformPackageName(target)]);
      const binary = path.join(found[0]!, "bin", binaryName(target));
      expect(fs.statSync(binary).mode & 0o111).not.toBe(0); // executable as unpacked, with no install script
      const {
        os: [osName],
        cpu: [cpu],
      } = npmPlatform(target);
      expect(launcherFinds(project, osName!, cpu!, target.libc ?? "glibc")).toEqual({ binary });
      // Control: on any other platform, the same tree has no binary to offer.
      const elsewhere = launcherFinds(project, osName === "linux" ? "darwin" : "linux", cpu!, "glibc");
      expect(elsewhere.problem).toContain("no binary for");
      if (target.id === "linux-arm64") runArm64(project, binary);
    },
    SLOW,
  );

  test(
    "--libc=musl alone, on this glibc x64 machine: the musl package, and the launcher takes it (it is what was asked for)",
    () => {
      const project = installAs(["--libc=musl"]);
      expect(platformPackagesUnder(project).map((p) => path.basename(p))).toEqual([
        `${MAIN_PACKAGE}-${process.platform}-${process.arch}-musl`,
      ]);
      expect(launcherFinds(project, process.platform, process.arch, "glibc").binary).toContain(
        `${MAIN_PACKAGE}-${process.platform}-${process.arch}-musl`,
      );
    },
    SLOW,
  );
});

/** runArm64(project, binary): the linux-arm64 package's binary, as npm unpacked it, installs and answers under qemu-user, as test/release.test.ts runs it. */
function runArm64(project: string, binary: string): void {
  const qemu = Bun.which("qemu-aarch64-static");
  const sysroot = "/usr/aarch64-linux-gnu";
  if (!qemu || !fs.existsSync(path.join(sysroot, "lib", "ld-linux-aarch64.so.1"))) {
    throw new Error(
      "qemu-aarch64-static and the arm64 libraries are not installed (apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross)",
    );
  }
  const home = path.join(project, "home");
  fs.mkdirSync(path.join(home, ".claude"), { recursive: true });
  const env = { PATH: "/usr/bin:/bin", HOME: home };
  const arm64 = (argv: string[], stdin?: string) => run([qemu, "-L", sysroot, ...argv], { cwd: home, env, stdin });
  expect(arm64([binary, "--version"]).stdout).toBe(`velesdb-hooks ${VERSION}\n`);
  expect(arm64([binary, "install", "--client", "claude"]).exitCode).toBe(0);
  const stable = path.join(home, ".velesdb-hooks", "bin", "velesdb-hooks");
  expect(Buffer.compare(fs.readFileSync(stable), fs.readFileSync(binary))).toBe(0);
  expect(arm64([stable, "check", "--client", "claude"]).stdout).toContain("claude: entries in step");
  const hook = arm64([stable, "claude", "session-start"], sessionStart(home));
  expect(JSON.parse(hook.stdout).hookSpecificOutput.hookEventName).toBe("SessionStart");
  expect(arm64([stable, "uninstall", "--client", "claude"]).exitCode).toBe(0);
  expect(fs.existsSync(stable)).toBe(false);
}

describe("integrity", () => {
  test(
    "npm ci refuses a platform tarball whose bytes are not the ones the lockfile names; control: the real tarball installs",
    () => {
      if (!devProject) throw new Error("needs the project of the npm install -D test");
      const home = dir("tamper-home");
      const project = path.join(home, "project");
      fs.mkdirSync(project);
      for (const file of ["package.json", "package-lock.json"])
        fs.copyFileSync(path.join(devProject.project, file), path.join(project, file));
      const fresh = (label: string) => npmEnv(home, { npm_config_cache: path.join(home, `.npm-${label}`) });
      const lock = JSON.parse(fs.readFileSync(path.join(project, "package-lock.json"), "utf8")) as {
        packages: Record<string, { integrity?: string }>;
      };
      const key = `node_modules/${platformPackageName(HOST!)}`;
      expect(lock.packages[key]?.integrity).toMatch(/^sha512-/);

      const stored = path.join(
        registry.storage,
        platformPackageName(HOST!),
        `${platformPackageName(HOST!)}-${VERSION}.tgz`,
      );
      const original = fs.readFileSync(stored);
      const installed = path.join(project, "node_modules", platformPackageName(HOST!), "bin", binaryName(HOST!));
      try {
        // Another valid tarball of the same name: this machine's package with one byte of the binary changed.
        const tampered = path.join(home, "tampered");
        fs.mkdirSync(tampered);
        expect(Bun.spawnSync(["tar", "-xzf", stored, "-C", tampered]).exitCode).toBe(0);
        const binary = path.join(tampered, "package", "bin", binaryName(HOST!));
        const bytes = fs.readFileSync(binary);
        bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
        fs.writeFileSync(binary, bytes);
        // gzip -1: any valid tarball will do, and the default level costs ~7 s of CPU on 110 MB.
        expect(
          Bun.spawnSync(["tar", "--use-compress-program=gzip -1", "-cf", stored, "-C", tampered, "package"]).exitCode,
        ).toBe(0);
        const refused = run([NPM!, "ci", "--loglevel=warn"], { cwd: project, env: fresh("tampered") });
        // Measured (npm 11.19): "npm warn tarball tarball data for <name>@<url> (<the lockfile's
        // sha512>) seems to be corrupted. Trying again.", twice, then the optional package is left out.
        expect(refused.stderr).toContain(`(${lock.packages[key]!.integrity}) seems to be corrupted`);
        // An optional dependency that fails is left out, not installed: no tampered binary runs.
        expect(fs.existsSync(installed)).toBe(false);
        const said = run([path.join(project, "node_modules", ".bin", "velesdb-hooks"), "--version"], {
          cwd: project,
          env: fresh("tampered"),
        });
        expect({ exitCode: said.exitCode, stdout: said.stdout }).toEqual({ exitCode: 1, stdout: "" });
        expect(said.stderr).toContain("no binary for");
      } finally {
        fs.writeFileSync(stored, original);
      }
      fs.rmSync(path.join(project, "node_modules"), { recursive: true, force: true });
      const accepted = run([NPM!, "ci"], { cwd: project, env: fresh("restored") });
      expect(accepted.exitCode).toBe(0);
      expect(run([installed, "--version"], { cwd: project, env: fresh("restored") }).stdout).toBe(
        `velesdb-hooks ${VERSION}\n`,
      );
    },
    SLOW,
  );
});
