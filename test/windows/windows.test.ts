// The Windows x64 release asset, executed (under Wine 8; see test/windows/support/wine.ts):
// only what Windows changes — paths (drive letters, backslashes, forward slashes, letter case),
// the profile and %TEMP%, how each host runs a registered command, and the installer's file and
// binary handling. Rules that do not depend on the OS are proven by the Linux suite.
//
// In CI (CI=true) a missing Wine or MinGW is a failure; elsewhere the suite is skipped with a
// line saying why, so a developer without Wine can still run `bun test`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { packageVersion } from "../../scripts/build.ts";
import { sessionSlot } from "../../src/core/identity.ts";
import { HOSTS } from "../../src/hosts/index.ts";
import { loadPayload, parseOneJsonAnswer } from "../support/hook-runner.ts";
import {
  checkpointTargets,
  continuation,
  editPayload,
  isDeny,
  recallPayload,
  stopPayload,
} from "../support/learning.ts";
import {
  bashWords,
  findWineToolchain,
  powershellCallWords,
  startWineWorld,
  windowsCommandLine,
  type WineRun,
  type WineWorld,
} from "./support/wine.ts";

const toolchain = findWineToolchain();
const IN_CI = process.env.CI === "true";
if (!toolchain.ok && !IN_CI) {
  console.warn(
    `Windows suite skipped: install ${toolchain.missing.join(" and ")} to run it (with CI=true a missing toolchain fails)`,
  );
}

type Host = "claude" | "codex" | "windsurf" | "dsh" | "gemini";
type Client = Host;

let world: WineWorld;
let profiles = 0;

interface Profile {
  /** %USERPROFILE%, e.g. C:\users\Ana O'Neil 3 */
  readonly dir: string;
  readonly temp: string;
  readonly env: Record<string, string>;
  /** Where the hooks keep state: %TEMP%\velesdb-agent-hooks-%USERNAME% (docs/contract.md §3.3). */
  readonly stateDir: string;
}

/** profile() → a fresh Windows user profile (a space and an apostrophe in its name) and the environment a host started from it has. */
function profile(): Profile {
  const n = ++profiles;
  const dir = `C:\\users\\Ana O'Neil ${n}`;
  const temp = `${dir}\\AppData\\Local\\Temp`;
  fs.mkdirSync(world.onLinux(temp), { recursive: true });
  const user = `ana${n}`;
  return {
    dir,
    temp,
    env: { USERPROFILE: dir, TEMP: temp, TMP: temp, USERNAME: user, VELESDB_HOOK_FRESHNESS: "off" },
    stateDir: `${temp}\\velesdb-agent-hooks-${user}`,
  };
}

let repos = 0;
/** repo("Loop", {…}) → C:\work<n>\Loop holding that .velesdb-hooks.json and a src\ directory. */
function repo(name: string, config?: Record<string, unknown>): string {
  const dir = `C:\\work${++repos}\\${name}`;
  fs.mkdirSync(world.onLinux(`${dir}\\src`), { recursive: true });
  if (config) fs.writeFileSync(world.onLinux(`${dir}\\.velesdb-hooks.json`), JSON.stringify(config));
  return dir;
}

/** The asset run the way Claude Code runs an exec-form hook: argv → one command line, no shell. */
function hook(
  who: Profile,
  host: Host,
  event: string,
  payload: Record<string, unknown>,
  cwd?: string,
): Promise<WineRun> {
  return world.run(windowsCommandLine([world.asset, host, event]), {
    env: who.env,
    cwd: cwd ?? who.dir,
    stdin: JSON.stringify(payload),
  });
}

async function jsonHook(
  who: Profile,
  host: Host,
  event: string,
  payload: Record<string, unknown>,
  cwd?: string,
): Promise<Record<string, unknown>> {
  const run = await hook(who, host, event, payload, cwd);
  if (run.exitCode !== 0) throw new Error(`${host} ${event} exited ${run.exitCode}: ${run.stderr}`);
  return parseOneJsonAnswer(run.stdout);
}

/** loadCall("claude", "app") → the start of the load call as that host's model sees the tool (HostProfile.mcpTool); then the session's own slot, "/<id>" (src/core/identity.ts sessionSlot). */
const loadCall = (host: Host, project: string) =>
  `${HOSTS[host].profile.mcpTool("load_working_context")}(project="${project}", session="rolling`;
const contextOf = (answer: Record<string, unknown>) =>
  String((answer.hookSpecificOutput as Record<string, unknown> | undefined)?.additionalContext ?? "");

/** snapshot(dir) → every file below it with its bytes and mtime: equal snapshots mean nothing was written. */
function snapshot(linuxDir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else
        files[path.relative(linuxDir, p)] =
          `${fs.statSync(p).mtimeMs} ${new Bun.CryptoHasher("sha256").update(fs.readFileSync(p)).digest("hex")}`;
    }
  };
  walk(linuxDir);
  return files;
}

// The user's own files before install: Windows line endings, entries of their own. uninstall
// must give each back byte for byte.
const USER_FILES: Readonly<Record<string, string>> = {
  ".claude\\settings.json":
    '{\r\n  "theme": "dark",\r\n  "hooks": {\r\n    "Stop": [{ "hooks": [{ "type": "command", "command": "C:\\\\tools\\\\notify.exe" }] }]\r\n  }\r\n}\r\n',
  ".codex\\hooks.json":
    '{\r\n  "hooks": {\r\n    "Stop": [{ "hooks": [{ "type": "command", "command": "notify" }] }]\r\n  }\r\n}\r\n',
  ".codeium\\windsurf\\hooks.json":
    '{\r\n  "hooks": {\r\n    "pre_user_prompt": [{ "command": "echo mine", "show_output": true }]\r\n  }\r\n}\r\n',
  ".codeium\\windsurf\\memories\\global_rules.md": "Prefer small commits.\r\nAnswer in English.\r\n",
  // The user's velesdb-memory server (a daemon URL) where each agent reads it: check fails on
  // hooks without one (docs/mcp-server.md).
  ".claude.json":
    '{\r\n  "mcpServers": { "velesdb-memory": { "type": "http", "url": "https://127.0.0.1:18090/mcp" } }\r\n}\r\n',
  ".codex\\config.toml": '[mcp_servers.velesdb-memory]\r\nurl = "https://127.0.0.1:18090/mcp"\r\n',
  ".codeium\\windsurf\\mcp_config.json":
    '{\r\n  "mcpServers": { "velesdb-memory": { "serverUrl": "https://127.0.0.1:18090/mcp" } }\r\n}\r\n',
  ".gemini\\settings.json":
    '{\r\n  "theme": "GitHub",\r\n  "mcpServers": { "velesdb-memory": { "httpUrl": "https://127.0.0.1:18090/mcp" } },\r\n  "hooks": {\r\n    "AfterAgent": [{ "hooks": [{ "type": "command", "command": "notify" }] }]\r\n  }\r\n}\r\n',
};
const CLIENTS = ["claude", "codex", "windsurf", "dsh", "gemini"] as const;

describe.skipIf(!toolchain.ok && !IN_CI)("Windows x64 asset under Wine", () => {
  beforeAll(async () => {
    if (toolchain.ok) world = await startWineWorld(toolchain.tools);
  }, 600_000);
  afterAll(() => world?.close());

  test("wine64 and gcc-mingw-w64-x86-64 are installed (.ci/run installs them)", () => {
    expect(toolchain.ok ? [] : toolchain.missing).toEqual([]);
  });

  test("the asset starts and prints package.json's version", async () => {
    const run = await world.run(windowsCommandLine([world.asset, "--version"]));
    expect(run).toEqual({ exitCode: 0, stdout: `velesdb-hooks ${packageVersion()}\n`, stderr: "" });
  });

  describe("project identity from Windows-shaped working directories", () => {
    // One repository, reached through every spelling Windows accepts for it.
    let who: Profile;
    let root: string;
    beforeAll(() => {
      who = profile();
      root = repo("Repo", { project: "win-repo" });
    });
    const lower = (p: string) => p.toLowerCase();
    const slashes = (p: string) => p.replaceAll("\\", "/");
    test.each([
      ["claude", "session-start", "backslashes", (r: string) => `${r}\\src`],
      ["codex", "session-start", "forward slashes", (r: string) => slashes(`${r}\\src`)],
      ["dsh", "session-start", "another letter case", (r: string) => lower(`${r}\\SRC`)],
      ["claude", "session-start", "mixed separators, lower-case drive", (r: string) => `c:${slashes(r.slice(2))}\\src`],
      [
        "gemini",
        "session-start",
        "forward slashes and another letter case",
        (r: string) => slashes(lower(`${r}\\src`)),
      ],
    ] as const)("%s %s: cwd with %s names the repository's project", async (host, event, _form, spell) => {
      const answer = await jsonHook(who, host, event, loadPayload(host, "session-start.startup", { cwd: spell(root) }));
      expect(contextOf(answer)).toContain(loadCall(host, "win-repo"));
    });

    test("windsurf pre-user-prompt (no cwd in the payload): the process's working directory, in another case, names the project", async () => {
      const run = await hook(
        who,
        "windsurf",
        "pre-user-prompt",
        loadPayload("windsurf", "pre-user-prompt"),
        lower(`${root}\\src`),
      );
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain(loadCall("windsurf", "win-repo"));
    });

    test("codex apply_patch with a relative backslash target is judged by the repository under the cwd; control: a plain repository passes", async () => {
      const guarded = repo("Guarded", { project: "guarded", enforce_learning_loop: true });
      const plain = repo("Plain");
      const patch = (cwd: string) => editPayload("codex", "win-relative", cwd, ["src\\b.ts"]);
      expect(
        isDeny({ json: await jsonHook(who, "codex", "pre-tool-use", patch(guarded)), stderr: "", exitCode: 0 }),
      ).toBe(true);
      expect(await jsonHook(who, "codex", "pre-tool-use", patch(plain))).toEqual({});
    });

    test("control: a directory outside the repository gets its own name as project", async () => {
      const outside = repo("Elsewhere");
      const answer = await jsonHook(
        who,
        "claude",
        "session-start",
        loadPayload("claude", "session-start.startup", { cwd: outside }),
      );
      expect(contextOf(answer)).toContain(loadCall("claude", "Elsewhere"));
    });
  });

  test("state lives under %TEMP% of the host's environment: first Stop steers, the second passes; a fresh %TEMP% steers again", async () => {
    const who = profile();
    const cwd = repo("Plain");
    const stop = (p: Profile) =>
      jsonHook(p, "claude", "stop", loadPayload("claude", "stop.first", { session_id: "win-s1", cwd }));
    expect(continuation("claude", { json: await stop(who), stderr: "", exitCode: 0 })).toContain(
      "save_working_context",
    );
    const markers = fs.readdirSync(world.onLinux(who.stateDir));
    expect(markers.some((name) => /^stop-\d+-\d+\.marker$/.test(name))).toBe(true);
    expect(await stop(who)).toEqual({});
    // Control: the same session with another %TEMP% has no marker, so the marker was what passed.
    expect(continuation("claude", { json: await stop(profile()), stderr: "", exitCode: 0 })).toContain(
      "save_working_context",
    );
    // Nothing went to Wine's own profile temp directory.
    const wineTemp = path.join(world.driveC, "users", os.userInfo().username, "Temp");
    expect(fs.existsSync(wineTemp) ? fs.readdirSync(wineTemp).filter((n) => n.startsWith("velesdb")) : []).toEqual([]);
  });

  describe.each(["claude", "codex", "windsurf", "dsh", "gemini"] as const)(
    "learning loop, %s: deny → recall → allow under another spelling → Stop checkpoint",
    (host) => {
      test("end to end", async () => {
        const who = profile();
        const loop = repo("Loop", { project: "loop", enforce_learning_loop: true });
        // Same project name, another repository: the recall must not unlock it (docs/contract.md §6.3).
        const other = repo("Loop", { project: "loop", enforce_learning_loop: true });
        const target = `${loop}\\src\\a.ts`;
        // C:\work5\Loop\src\a.ts, respelled c:/work5/loop/SRC/A.ts: the same file to Windows.
        const respelled = `c:${loop.slice(2).toLowerCase().replaceAll("\\", "/")}/SRC/A.ts`;
        const session = `win-${host}`;

        const guard = async (file: string, cwd: string): Promise<boolean> => {
          if (host === "windsurf") {
            const payload = loadPayload("windsurf", "pre-write-code", { trajectory_id: session });
            (payload.tool_info as Record<string, unknown>).file_path = file;
            const run = await hook(who, host, "pre-write-code", payload, cwd);
            expect([0, 2]).toContain(run.exitCode);
            if (run.exitCode === 2) expect(run.stderr).toContain("recall_fused");
            return run.exitCode === 2;
          }
          if (host === "gemini") {
            const payload = loadPayload("gemini", "before-tool.write-file", {
              session_id: session,
              cwd,
              tool_input: { file_path: file, content: "x\n" },
            });
            return (await jsonHook(who, host, "before-tool", payload)).decision === "deny";
          }
          const payload =
            host === "dsh"
              ? loadPayload("dsh", "pre-tool-use.edit", { session_id: session, cwd })
              : editPayload(host, session, cwd, [file]);
          return isDeny({ json: await jsonHook(who, host, "pre-tool-use", payload), stderr: "", exitCode: 0 });
        };
        expect(await guard(target, loop)).toBe(true);

        if (host === "windsurf") {
          const payload = loadPayload("windsurf", "post-mcp-tool-use", { trajectory_id: session });
          const run = await hook(who, host, "post-mcp-tool-use", payload, loop);
          expect(run.exitCode).toBe(0);
        } else if (host === "gemini") {
          const payload = loadPayload("gemini", "after-tool.recall-fused", {
            session_id: session,
            cwd: loop,
            tool_input: { query: "x", filter: { project: "loop" } },
          });
          expect(await jsonHook(who, host, "after-tool", payload)).toEqual({});
        } else {
          const payload =
            host === "dsh"
              ? loadPayload("dsh", "post-tool-use.recall-fused", { session_id: session, cwd: loop })
              : recallPayload(host, session, loop, { input: { query: "prior patterns", filter: { project: "loop" } } });
          expect(await jsonHook(who, host, "post-tool-use", payload)).toEqual({});
        }

        // dsh judges the session cwd (its bridge hides paths), so there the cwd is respelled too.
        const respelledCwd =
          host === "dsh" ? `c:${loop.slice(2).toLowerCase().replaceAll("\\", "/")}` : loop.toLowerCase();
        expect(await guard(respelled, respelledCwd)).toBe(false);
        expect(await guard(`${other}\\src\\a.ts`, other)).toBe(true);
        if (host === "windsurf") return; // No Stop event: no checkpoints (docs/contract.md §4.3).

        const stop = async () => {
          if (host === "gemini")
            return jsonHook(
              who,
              host,
              "after-agent",
              loadPayload("gemini", "after-agent.first", { session_id: session, cwd: loop }),
            );
          return jsonHook(
            who,
            host,
            "stop",
            host === "dsh"
              ? loadPayload("dsh", "stop", { session_id: session, cwd: loop })
              : stopPayload(host, session, loop),
          );
        };
        const answer = await stop();
        // Gemini's AfterAgent continues with decision "deny"; dsh speaks Codex's dialect.
        const checkpoint =
          host === "gemini"
            ? answer.decision === "deny"
              ? String(answer.reason)
              : undefined
            : continuation(host === "dsh" ? "codex" : host, { json: answer, stderr: "", exitCode: 0 });
        expect(checkpoint).toContain("Recall");
        // The repository is named once, by its canonical spelling, whatever spelling the edit used.
        // The slot is this host session's own, as on Linux (test/learning.test.ts; docs/working-context.md).
        expect(checkpointTargets(checkpoint)).toEqual([
          { project: "loop", session: sessionSlot("rolling", session), root: loop },
        ]);
        expect(await stop()).toEqual({});
      });
    },
  );

  describe("installer on Windows: every client, USERPROFILE at a private profile", () => {
    let who: Profile;
    let project: string;
    const stable = () => `${who.dir}\\.velesdb-hooks\\bin\\velesdb-hooks.exe`;
    const registry = (relative: string) =>
      JSON.parse(fs.readFileSync(world.onLinux(`${who.dir}\\${relative}`), "utf8"));
    const installer = (exe: string, args: string[], env: Record<string, string> = {}) =>
      world.run(windowsCommandLine([exe, ...args]), { env: { ...who.env, ...env }, cwd: who.dir });

    beforeAll(() => {
      if (!toolchain.ok) return;
      who = profile();
      for (const [relative, text] of Object.entries(USER_FILES)) {
        fs.mkdirSync(path.dirname(world.onLinux(`${who.dir}\\${relative}`)), { recursive: true });
        fs.writeFileSync(world.onLinux(`${who.dir}\\${relative}`), text);
      }
      fs.mkdirSync(world.onLinux(`${who.dir}\\.dsh`));
      project = repo("Installed", { project: "installed" });
    });

    test("install from the downloaded asset places the binary under the profile and registers every client", async () => {
      const run = await installer(world.asset, ["install"]);
      expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
      for (const client of CLIENTS) expect(run.stdout).toMatch(new RegExp(`^${client}: .*added`, "m"));
      expect(fs.statSync(world.onLinux(stable())).size).toBe(fs.statSync(world.onLinux(world.asset)).size);
    });

    // Each client's registered start-of-session command, executed the way that host executes it.
    const HOST_FORMS: ReadonlyArray<
      readonly [Client, string, () => { commandLine: string; stdin: Record<string, unknown> }]
    > = [
      [
        "claude",
        "exec form: command + args, no shell (argv quoted by Node)",
        () => {
          const entry = registry(".claude\\settings.json")
            .hooks.SessionStart.flatMap((g: { hooks: unknown[] }) => g.hooks)
            .find((h: { args?: string[] }) => h.args?.[0] === "claude");
          return {
            commandLine: windowsCommandLine([entry.command, ...entry.args]),
            stdin: loadPayload("claude", "session-start.startup", { cwd: project }),
          };
        },
      ],
      [
        "codex",
        "commandWindows: PowerShell's call operator",
        () => {
          const entry = registry(".codex\\hooks.json")
            .hooks.SessionStart.flatMap((g: { hooks: unknown[] }) => g.hooks)
            .find((h: { commandWindows?: string }) => h.commandWindows);
          return {
            commandLine: windowsCommandLine(powershellCallWords(entry.commandWindows)),
            stdin: loadPayload("codex", "session-start.startup", { cwd: project }),
          };
        },
      ],
      [
        "windsurf",
        "command through cmd.exe /d /s /c: Node's shell form; Windsurf's own shell on Windows is unmeasured",
        () => {
          const entry = registry(".codeium\\windsurf\\hooks.json").hooks.pre_user_prompt.find(
            (h: { command: string }) => h.command.includes("windsurf pre-user-prompt"),
          );
          return {
            commandLine: `C:\\windows\\system32\\cmd.exe /d /s /c "${entry.command}"`,
            stdin: loadPayload("windsurf", "pre-user-prompt"),
          };
        },
      ],
      [
        "dsh",
        "command as words of bash -c (the bridge's runner)",
        () => {
          const entry = registry(".dsh\\velesdb-hooks.json").hooks.SessionStart.flatMap(
            (g: { hooks: unknown[] }) => g.hooks,
          )[0];
          return {
            commandLine: windowsCommandLine(bashWords(entry.command)),
            stdin: loadPayload("dsh", "session-start.startup", { cwd: project }),
          };
        },
      ],
      [
        "gemini",
        "command in PowerShell: the call operator on a single-quoted path",
        () => {
          const entry = registry(".gemini\\settings.json")
            .hooks.SessionStart.flatMap((g: { hooks: unknown[] }) => g.hooks)
            .find((h: { command: string }) => h.command.includes("gemini session-start"));
          return {
            commandLine: windowsCommandLine(powershellCallWords(entry.command)),
            stdin: loadPayload("gemini", "session-start.startup", { cwd: project }),
          };
        },
      ],
    ];
    test.each(HOST_FORMS)("%s's registered command runs the installed binary (%s)", async (client, _form, form) => {
      const { commandLine, stdin } = form();
      expect(commandLine).toContain(stable());
      const run = await world.run(commandLine, { env: who.env, cwd: project, stdin: JSON.stringify(stdin) });
      expect(run.exitCode).toBe(0);
      // Windsurf's reminder is plain text; the others answer one JSON object.
      const said = client === "windsurf" ? run.stdout : contextOf(parseOneJsonAnswer(run.stdout));
      expect(said).toContain(loadCall(client, "installed"));
    });

    test("check by the installed binary: every client in step", async () => {
      // USER_FILES name a daemon at 127.0.0.1:18090 that nobody runs here, and check starts each
      // configured server (docs/doctor.md). This case is about the entries and the binary on
      // Windows, so the probe is off; test/server-probe.test.ts proves the probe itself.
      const run = await installer(stable(), ["check"], { VELESDB_HOOKS_SERVER_PROBE: "off" });
      expect({ exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr }).toMatchObject({ exitCode: 0 });
      for (const client of CLIENTS) expect(run.stdout).toMatch(new RegExp(`^${client}: entries in step`, "m"));
      // The servers were read, not started (dsh's live in the harness's own config).
      for (const client of CLIENTS.filter((c) => c !== "dsh"))
        expect(run.stdout).toContain(`${client}: MCP server not started (VELESDB_HOOKS_SERVER_PROBE=off)`);
      // Control: with the probe on, the same check fails on the daemon nobody runs.
      const probed = await installer(stable(), ["check"]);
      expect({ exitCode: probed.exitCode, stdout: probed.stdout }).toMatchObject({
        exitCode: 1,
        stdout: expect.stringContaining("claude: MCP server in ~\\.claude.json (user scope) does not answer"),
      });
    });

    test("a second install changes no byte under the profile", async () => {
      const before = snapshot(world.onLinux(who.dir));
      const run = await installer(world.asset, ["install"]);
      expect(run.exitCode).toBe(0);
      expect(snapshot(world.onLinux(who.dir))).toEqual(before);
    });

    let uninstallSaid = "";
    test("uninstall by the installed binary itself restores every user file byte for byte and removes the binary", async () => {
      const run = await installer(stable(), ["uninstall"]);
      expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
      uninstallSaid = run.stdout;
      for (const [relative, text] of Object.entries(USER_FILES))
        expect(fs.readFileSync(world.onLinux(`${who.dir}\\${relative}`), "utf8")).toBe(text);
      expect(fs.existsSync(world.onLinux(`${who.dir}\\.velesdb-hooks`))).toBe(false);
      // Control: check now finds nothing of ours.
      const check = await installer(world.asset, ["check"]);
      expect(check.stdout).not.toMatch(/entries in step/);
    });

    // Windows refuses to delete a running image, so uninstall renamed it into %TEMP%.
    const movedAside = () =>
      fs.readdirSync(world.onLinux(who.temp)).filter((name) => /^velesdb-hooks-removed-.*\.exe$/.test(name));
    test("the running copy uninstall moved into %TEMP% is deleted by the next install; an uninstall by another binary deletes directly", async () => {
      expect(movedAside()).toHaveLength(1);
      expect(uninstallSaid).toContain(
        `moved to ~\\AppData\\Local\\Temp\\${movedAside()[0]}, deleted by the next install or uninstall`,
      );
      // Each step compared whole, with what the command printed: a failure in CI (seen once, not
      // reproduced here) shows which step it was and what the installer said.
      const install = await installer(world.asset, ["install"]);
      const binaryLines = (stdout: string) => stdout.split(/\r?\n/).filter((line) => line.startsWith("binary:"));
      expect({
        exitCode: install.exitCode,
        stderr: install.stderr,
        binaryLines: binaryLines(install.stdout),
        movedAside: movedAside(),
        binary: fs.existsSync(world.onLinux(stable())),
      }).toEqual({
        exitCode: 0,
        stderr: "",
        binaryLines: [expect.stringMatching(/^binary: copied this executable to /)],
        movedAside: [],
        binary: true,
      });
      const run = await installer(world.asset, ["uninstall"]);
      expect({
        exitCode: run.exitCode,
        stderr: run.stderr,
        binaryLines: binaryLines(run.stdout),
        movedAside: movedAside(),
        tree: fs.existsSync(world.onLinux(`${who.dir}\\.velesdb-hooks`)),
      }).toEqual({
        exitCode: 0,
        stderr: "",
        binaryLines: [expect.stringMatching(/^binary: removed [^(]*velesdb-hooks\.exe$/)],
        movedAside: [],
        tree: false,
      });
    });
  });
});
