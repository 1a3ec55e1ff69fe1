// The Windows x64 release asset, run under Wine 8 the way Windows hosts run it. One private
// Wine prefix serves the whole suite: creating one costs seconds, and a persistent wineserver
// (`wineserver -p`) spares every process the server start (measured here: a hook 0.8 s → 0.25 s).
//
// What Wine needs that a Windows machine has (test/windows/native/):
// - bcryptprimitives.dll: Bun's Windows runtime imports ProcessPrng from it and Wine 8 has no
//   such DLL, so the .exe would not start. Our shim is built here and copied into the prefix's
//   system32 only.
// - launch.exe: Wine rebuilds USERPROFILE, TEMP and TMP from its registry (values exported on
//   Linux are ignored) while passing other Linux variables through. The launcher sets the
//   Windows environment from inside Windows and calls CreateProcessW with the exact command
//   line, as a host does. Stdin is a pipe: under Wine a regular file redirected to stdin fails
//   fstat(0), and hosts pipe the payload anyway.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildRelease } from "../../../scripts/build-all.ts";
import { packageVersion } from "../../../scripts/build.ts";
import { binaryName, RELEASE_TARGETS } from "../../../targets/matrix.ts";

const NATIVE_SOURCES = path.resolve(import.meta.dir, "..", "native");

export interface WineToolchain {
  readonly wine: string;
  readonly wineserver: string;
  readonly mingw: string;
}

/** findWineToolchain() → the three programs the suite needs, or the Debian packages that are missing. */
export function findWineToolchain(): { ok: true; tools: WineToolchain } | { ok: false; missing: string[] } {
  const firstOf = (names: string[]): string | undefined =>
    names
      .map((name) => (name.startsWith("/") ? (fs.existsSync(name) ? name : undefined) : (Bun.which(name) ?? undefined)))
      .find(Boolean);
  // Debian's wine64 puts its loader in /usr/lib/wine; the `wine` package adds the wrappers on PATH.
  const wine = firstOf(["wine", "wine64", "/usr/lib/wine/wine64"]);
  const wineserver = firstOf(["wineserver", "/usr/lib/wine/wineserver64", "/usr/lib/wine/wineserver"]);
  const mingw = firstOf(["x86_64-w64-mingw32-gcc"]);
  const missing = [...(wine && wineserver ? [] : ["wine64"]), ...(mingw ? [] : ["gcc-mingw-w64-x86-64"])];
  return wine && wineserver && mingw ? { ok: true, tools: { wine, wineserver, mingw } } : { ok: false, missing };
}

export interface WineRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Windows environment variables the host sets (on top of Wine's own). */
  readonly env?: Readonly<Record<string, string>>;
  /** The working directory, a Windows path. */
  readonly cwd?: string;
  readonly stdin?: string;
}

export interface WineWorld {
  /** The release asset under test, as a Windows path (C:\…). */
  readonly asset: string;
  /** Linux path of the prefix's C: drive. */
  readonly driveC: string;
  /** run(commandLine) → CreateProcessW(commandLine) inside Windows; exit code, stdout, stderr. */
  run(commandLine: string, options?: RunOptions): Promise<WineRun>;
  /** onLinux("C:\\users\\x") → where that path lives on this machine (case as given). */
  onLinux(windowsPath: string): string;
  close(): void;
}

/** startWineWorld(tools) → a prefix with the shim, the launcher and the freshly built Windows asset. */
export async function startWineWorld(tools: WineToolchain): Promise<WineWorld> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-wine-")));
  const prefix = path.join(root, "prefix");
  const native = path.join(root, "native");
  fs.mkdirSync(native);
  fs.mkdirSync(prefix);
  const wineEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    // Wine writes menu entries and its own caches under HOME: keep them in the temp tree.
    HOME: path.join(root, "home"),
    WINEPREFIX: prefix,
    WINEDEBUG: "-all",
    // No Mono or Gecko download prompt, no desktop menu entries.
    WINEDLLOVERRIDES: "mscoree,mshtml=;winemenubuilder.exe=d",
    LANG: "C.UTF-8",
    // The server's socket directory (wine-XXXXXX) goes under TMPDIR: in the temp tree, it goes
    // with it; under /tmp, every run left one behind. (Windows processes read TEMP, not this.)
    TMPDIR: path.join(root, "tmp"),
  };
  fs.mkdirSync(wineEnv.HOME!);
  fs.mkdirSync(wineEnv.TMPDIR!);
  const close = (): void => {
    // -k ends the server of this prefix only (and every Windows process in it).
    Bun.spawnSync([tools.wineserver, "-k"], { env: wineEnv, stdout: "ignore", stderr: "ignore" });
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    // -p60: the server outlives each process by a minute (no start-up cost per case) and,
    // should this run be killed before close(), ends by itself. It detaches and would hold
    // any pipe given to it open: no pipes.
    const started = Bun.spawnSync([tools.wineserver, "-p60"], {
      env: wineEnv,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    if (started.exitCode !== 0) throw new Error(`wineserver -p60 failed (exit ${started.exitCode})`);
    const compile = (args: string[]) => spawnChecked([tools.mingw, "-O2", "-s", ...args], {});
    // wineboot leaves Wine's services running (the persistent server keeps them): they would
    // inherit and hold open any pipe, so wineboot gets none.
    const boot = Bun.spawn([tools.wine, "wineboot", "--init"], {
      env: wineEnv,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    }).exited.then((code) => {
      if (code !== 0) throw new Error(`wineboot --init failed (exit ${code})`);
    });
    // The release asset is built while Wine boots (wineboot populates drive_c, so the archive
    // waits beside the prefix): neither waits for the other.
    const windowsTarget = RELEASE_TARGETS.find((t) => t.os === "windows")!;
    const release = buildRelease({
      outDir: path.join(root, "release"),
      version: packageVersion(),
      targets: [windowsTarget],
      npmPackages: false,
    });
    const [, , , [built]] = await Promise.all([
      compile([
        "-shared",
        "-o",
        path.join(native, "bcryptprimitives.dll"),
        path.join(NATIVE_SOURCES, "bcryptprimitives.c"),
        "-ladvapi32",
      ]),
      compile(["-municode", "-o", path.join(native, "launch.exe"), path.join(NATIVE_SOURCES, "launch.c")]),
      boot,
      release,
    ]);
    const driveC = path.join(prefix, "drive_c");
    fs.copyFileSync(
      path.join(native, "bcryptprimitives.dll"),
      path.join(driveC, "windows", "system32", "bcryptprimitives.dll"),
    );
    const downloads = path.join(driveC, "Downloads");
    // The release asset is a .zip holding the one .exe: unpack it as install.ps1 would.
    await spawnChecked(["unzip", "-q", "-o", built!.path, binaryName(windowsTarget), "-d", downloads], {});
    const asset = `C:\\Downloads\\${binaryName(windowsTarget)}`;
    const launcher = path.join(native, "launch.exe");

    return {
      asset,
      driveC,
      async run(commandLine, options = {}) {
        const args = [tools.wine, launcher];
        for (const [name, value] of Object.entries(options.env ?? {})) args.push("--env", `${name}=${value}`);
        // Wine passes Linux variables through; a Windows host has no HOME of this machine.
        args.push("--unset", "HOME");
        if (options.cwd) args.push("--cwd", options.cwd);
        args.push("--command-line", commandLine);
        const child = Bun.spawn(args, { env: wineEnv, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
        child.stdin.write(options.stdin ?? "");
        await child.stdin.end();
        const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
        const stdout = drain(child.stdout);
        const stderr = drain(child.stderr);
        const exitCode = await child.exited;
        clearTimeout(timer);
        return { exitCode, stdout: await stdout.settle(), stderr: await stderr.settle() };
      },
      onLinux(windowsPath) {
        const match = /^[Cc]:[\\/](.*)$/.exec(windowsPath);
        if (!match) throw new Error(`${windowsPath} is not on drive C:`);
        return path.join(driveC, ...match[1]!.split(/[\\/]+/).filter(Boolean));
      },
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}

/**
 * drain(stream) → reads it as it comes; settle() → the text once it ends, or after 2 s more. A
 * Windows process Wine starts in the background (a service) may inherit the pipe and keep it
 * open long after the launcher exited; the answer is complete by then.
 */
function drain(stream: ReadableStream<Uint8Array>): { settle(): Promise<string> } {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  const done = (async () => {
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) return;
      chunks.push(value);
    }
  })().catch(() => undefined);
  return {
    async settle() {
      await Promise.race([done, Bun.sleep(2000)]);
      reader.cancel().catch(() => undefined);
      return Buffer.concat(chunks).toString();
    },
  };
}

async function spawnChecked(argv: string[], env: Record<string, string>): Promise<void> {
  const child = Bun.spawn(argv, {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, exitCode] = await Promise.all([
    new Response(child.stderr).text(),
    child.exited,
    new Response(child.stdout).text(),
  ]);
  if (exitCode !== 0)
    throw new Error(
      `${path.basename(argv[0]!)} ${argv.slice(1, 3).join(" ")} failed (exit ${exitCode}): ${stderr.trim()}`,
    );
}

/**
 * windowsCommandLine(["C:\\a b\\x.exe", "claude", "stop"]) → `"C:\a b\x.exe" claude stop`:
 * how Node (libuv) turns an argv into one command line on Windows, i.e. how Claude Code runs an
 * exec-form hook. An argument is quoted when it is empty or holds a space, tab or quote; inside
 * quotes, backslashes are doubled only before a quote or the closing quote (the MSVCRT rules).
 */
export function windowsCommandLine(argv: readonly string[]): string {
  return argv
    .map((arg) => {
      if (arg !== "" && !/[ \t"]/.test(arg)) return arg;
      let quoted = '"';
      let backslashes = 0;
      for (const c of arg) {
        if (c === "\\") {
          backslashes++;
          continue;
        }
        quoted += "\\".repeat(c === '"' ? backslashes * 2 + 1 : backslashes) + c;
        backslashes = 0;
      }
      return `${quoted}${"\\".repeat(backslashes * 2)}"`;
    })
    .join(" ");
}

/**
 * powershellCallWords(`& "C:\x\velesdb-hooks.exe" codex stop`) → ["C:\x\velesdb-hooks.exe", "codex", "stop"].
 * Codex (`commandWindows`) and Gemini CLI run hook commands in PowerShell, which Wine does not
 * have. This reads the one form the installer writes — the call operator, one quoted path,
 * bare words — with PowerShell's rules for it: in a double-quoted (expandable) string a
 * backtick escapes the next character and an unescaped `$` would expand a variable, so it is
 * refused rather than guessed; in a single-quoted (verbatim) string `''` is one quote.
 */
export function powershellCallWords(line: string): string[] {
  const match = /^& (?:"((?:[^"`$]|`[`$"])*)"|'((?:[^']|'')*)')((?: [A-Za-z0-9-]+)*)$/.exec(line);
  if (!match) throw new Error(`not the call-operator form the installer writes: ${line}`);
  const program = match[1] !== undefined ? match[1].replace(/`(.)/g, "$1") : match[2]!.replaceAll("''", "'");
  return [program, ...match[3]!.split(" ").filter(Boolean)];
}

/**
 * bashWords(`'C:\a b\x.exe' dsh stop`) → ["C:\a b\x.exe", "dsh", "stop"]: the words `bash -c`
 * makes of a command (the DeepSeek bridge runs every hook that way, Git Bash on Windows),
 * parsed by this machine's bash itself.
 */
export function bashWords(command: string): string[] {
  const result = Bun.spawnSync(["bash", "-c", `set -- ${command}\nprintf '%s\\0' "$@"`], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (result.exitCode !== 0) throw new Error(`bash could not read ${command}: ${result.stderr.toString()}`);
  return result.stdout.toString().split("\0").slice(0, -1);
}
