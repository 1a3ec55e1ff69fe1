// `velesdb-hooks doctor` through the compiled binary: one screen per situation a user pastes
// into an issue. Each degraded state is shown next to its healthy twin.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { HAS_OPENSSL, startDaemon, startRegistry } from "./support/install-servers.ts";
import { makeInstallSandbox, read, write, type InstallSandbox } from "./support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("doctor");
});
afterEach(() => box.cleanup());

const doctor = (env?: Record<string, string | undefined>, cwd?: string): string => {
  const run = box.run(["doctor"], { env, cwd });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run.stdout;
};
const lineOf = (screen: string, label: string): string =>
  screen
    .split("\n")
    .filter((l) => l.startsWith(`${label}:`))
    .join("\n");
const install = (...args: string[]) => expect(box.run(["install", ...args]).exitCode).toBe(0);

/** The hash Codex stores for a trusted handler, computed here independently of src/. */
function codexTrustHash(event: string, matcher: string | undefined, handler: Record<string, unknown>): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value && typeof value === "object"
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([, v]) => v !== undefined && v !== null)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, v]) => [k, sorted(v)]),
          )
        : value;
  const label = event.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  const identity = {
    event_name: label,
    matcher: event === "Stop" ? undefined : matcher,
    hooks: [
      {
        type: handler.type,
        command: handler.command,
        timeout: handler.timeout ?? 600,
        async: false,
        statusMessage: handler.statusMessage,
      },
    ],
  };
  return `sha256:${createHash("sha256")
    .update(JSON.stringify(sorted(identity)))
    .digest("hex")}`;
}

function trustEverything(b: InstallSandbox, tamper?: string): void {
  const hooks = JSON.parse(read(b.codexHooks)).hooks as Record<
    string,
    Array<{ matcher?: string; hooks: Record<string, unknown>[] }>
  >;
  const tables = Object.entries(hooks).map(([event, groups]) => {
    const label = event.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
    const hash =
      event === tamper ? `sha256:${"0".repeat(64)}` : codexTrustHash(event, groups[0]!.matcher, groups[0]!.hooks[0]!);
    return `[hooks.state.${JSON.stringify(`${b.codexHooks}:${label}:0:0`)}]\ntrusted_hash = ${JSON.stringify(hash)}\n`;
  });
  write(b.codexConfig, `model = "gpt-5.5"\n\n${tables.join("\n")}`);
}

describe("registry and binary", () => {
  test("nothing installed", () => {
    const screen = doctor();
    expect(screen).toStartWith("velesdb-hooks doctor\nversion:   ");
    expect(lineOf(screen, "binary")).toContain("absent (~/.velesdb-hooks/bin/velesdb-hooks)");
    expect(lineOf(screen, "claude")).toContain("entries absent (~/.claude/settings.json, no such file)");
    expect(lineOf(screen, "codex")).toContain("entries absent (~/.codex/hooks.json, no such file)");
    expect(lineOf(screen, "trust")).toContain("no velesdb-hooks entries for Codex to trust");
    for (const label of ["compiler", "daemon", "state", "config", "shell"]) expect(lineOf(screen, label)).not.toBe("");
  });

  test("installed and healthy", () => {
    install();
    const screen = doctor();
    expect(lineOf(screen, "binary")).toContain("in step");
    expect(lineOf(screen, "claude")).toContain("entries in step (~/.claude/settings.json)");
    expect(lineOf(screen, "codex")).toContain("entries in step (~/.codex/hooks.json)");
  });

  test("drifted: the entry that differs and the binary that is gone are named", () => {
    install();
    const settings = JSON.parse(read(box.claudeSettings));
    settings.hooks.Stop[0].hooks[0].timeout = 99;
    write(box.claudeSettings, JSON.stringify(settings));
    fs.rmSync(box.stableBinary);
    const screen = doctor();
    expect(lineOf(screen, "claude")).toContain("entries drifted (~/.claude/settings.json): Stop differs");
    expect(lineOf(screen, "binary")).toContain("absent");
  });

  test("--client limits the registries shown", () => {
    const run = box.run(["doctor", "--client", "claude"]);
    expect(lineOf(run.stdout, "claude")).not.toBe("");
    expect(lineOf(run.stdout, "codex")).toBe("");
  });
});

describe("Codex trust of each of our entries", () => {
  test("untrusted after install, with the way to trust them", () => {
    install("--client", "codex");
    const trust = lineOf(doctor(), "trust");
    for (const event of ["SessionStart", "Stop", "PreToolUse", "PostToolUse"])
      expect(trust).toContain(`${event} untrusted`);
    expect(doctor()).toContain("open /hooks in Codex and trust them");
  });

  test("trusted once config.toml holds the hash Codex computes", () => {
    install("--client", "codex");
    trustEverything(box);
    const screen = doctor();
    expect(lineOf(screen, "trust").split("\n")).toEqual([
      "trust:     SessionStart trusted (hooks.json session_start:0:0)",
      "trust:     Stop trusted (hooks.json stop:0:0)",
      "trust:     PreToolUse trusted (hooks.json pre_tool_use:0:0)",
      "trust:     PostToolUse trusted (hooks.json post_tool_use:0:0)",
    ]);
    expect(screen).not.toContain("open /hooks");
  });

  test("modified when a stored approval no longer matches the entry", () => {
    install("--client", "codex");
    trustEverything(box, "Stop");
    const trust = lineOf(doctor(), "trust");
    expect(trust).toContain("Stop modified");
    expect(trust).toContain("SessionStart trusted");
  });

  test("an approval goes stale when the entry changes (a moved binary), and install says so", () => {
    install("--client", "codex");
    trustEverything(box);
    const moved = box.run(["install", "--client", "codex"], {
      env: { VELESDB_HOOKS_HOME: path.join(box.root, "moved") },
    });
    expect(moved.stdout).toContain("Codex will skip");
    const trust = lineOf(doctor({ VELESDB_HOOKS_HOME: path.join(box.root, "moved") }), "trust");
    expect(trust).toContain("SessionStart untrusted");
  });
});

describe("compiler probe", () => {
  const fake = (name: string, body: string): string => {
    const file = path.join(box.root, "fakes", name);
    write(file, `#!/bin/sh\n${body}\n`, 0o755);
    return file;
  };

  test("missing", () => {
    expect(lineOf(doctor(), "compiler")).toContain("missing: velesdb-memory was not found on PATH");
  });

  test("capable", () => {
    // The probe's answer exactly as velesdb-memory 0.17.0 (crates.io; VelesDB a9eeabad,
    // src/daemon_commands.rs run_compile_stdin) printed it for PROBE_CORPUS, as 0.12.0 did.
    const bin = fake(
      "velesdb-memory",
      `cat >/dev/null\nprintf '%s\\n' '{"content":"velesdb-hooks capability probe: one line of ordinary text.\\n","tokens_in":19,"tokens_out":19,"tokens_saved":0,"risk":"low"}'`,
    );
    expect(lineOf(doctor({ VELESDB_MEMORY_BIN: bin }), "compiler")).toMatch(
      /capable: .*velesdb-memory answered compile-stdin in \d+ ms/,
    );
  });

  test("not capable: an old velesdb-memory that never answers is cut at the probe timeout", () => {
    const bin = fake("old-velesdb-memory", "sleep 30");
    const started = performance.now();
    expect(lineOf(doctor({ VELESDB_MEMORY_BIN: bin, VELESDB_HOOK_PROBE_TIMEOUT: "1" }), "compiler")).toContain(
      "not capable",
    );
    expect(performance.now() - started).toBeLessThan(8000);
  });
});

describe.skipIf(!HAS_OPENSSL)("daemon version", () => {
  test("an older daemon than published is reported with both versions; an equal one is up to date", async () => {
    for (const [running, expected] of [
      ["0.4.1", "velesdb-memory 0.4.1 at https://127.0.0.1:"],
      ["0.5.0", "latest published 0.5.0: up to date"],
    ] as const) {
      const daemon = startDaemon(running);
      const registry = startRegistry("0.5.0");
      try {
        const run = await box.runAsync(["doctor"], {
          env: {
            VELESDB_HOOK_FRESHNESS: undefined,
            VELESDB_MCP_URL: daemon.url,
            VELESDB_HOOKS_LATEST_VERSION_URL: registry.url,
          },
        });
        expect(lineOf(run.stdout, "daemon")).toContain(expected);
        if (running === "0.4.1")
          expect(lineOf(run.stdout, "daemon")).toContain("latest published 0.5.0: an upgrade is available");
      } finally {
        daemon.stop();
        registry.stop();
      }
    }
  });

  test("no daemon", async () => {
    const run = await box.runAsync(["doctor"], {
      env: { VELESDB_HOOK_FRESHNESS: undefined, VELESDB_MCP_URL: "https://127.0.0.1:9/mcp" },
    });
    expect(lineOf(run.stdout, "daemon")).toBe("daemon:    no velesdb-memory answered at https://127.0.0.1:9/mcp");
  });
});

describe("state, config and shell", () => {
  const stateDir = () => path.join(box.tmp, `velesdb-agent-hooks-${process.getuid?.() ?? 0}`);

  test("state directory: healthy with its size, unsafe with the reason", () => {
    fs.mkdirSync(path.join(stateDir(), "tool-output"), { recursive: true, mode: 0o700 });
    fs.chmodSync(stateDir(), 0o700);
    write(path.join(stateDir(), "tool-output", "velesdb-output.x"), "y".repeat(2048), 0o600);
    expect(lineOf(doctor(), "state")).toContain("healthy: ");
    expect(lineOf(doctor(), "state")).toContain("archived tool outputs: 2.0 KB");
    fs.chmodSync(stateDir(), 0o755);
    expect(lineOf(doctor(), "state")).toContain("has mode 755, not 700");
  });

  test("the .velesdb-hooks.json that applies to the cwd, parsed or not", () => {
    const repo = path.join(box.root, "repo");
    write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ project: "atlas", enforce_learning_loop: true }));
    fs.mkdirSync(path.join(repo, "src"));
    expect(lineOf(doctor(undefined, path.join(repo, "src")), "config")).toContain(
      'parsed (project "atlas", session "rolling", learning loop enforced)',
    );
    write(path.join(repo, ".velesdb-hooks.json"), "{ nope");
    expect(lineOf(doctor(undefined, path.join(repo, "src")), "config")).toContain(
      "is not valid JSON: ignored, defaults apply",
    );
  });

  test("a login shell that prints on start is called out; a quiet one is not", () => {
    const noisy = path.join(box.root, "noisy-shell");
    write(noisy, `#!/bin/sh\necho "welcome back"\nexec /bin/sh "$@"\n`, 0o755);
    expect(lineOf(doctor({ SHELL: noisy }), "shell")).toContain("prints 13 bytes on start");
    expect(lineOf(doctor({ SHELL: "/bin/sh" }), "shell")).toBe("shell:     /bin/sh -l prints nothing on start");
  });
});

describe("repository-controlled strings are printed quoted (docs/decisions.md#installer)", () => {
  // ESC [ 2 J clears the screen; U+009B is the one-byte CSI of C1 terminals; BEL rings.
  const HOSTILE = ["x\u001b[2Jy", "a\u009b31mb", "bell\u0007"];
  test.each(HOSTILE.map((value) => [JSON.stringify(value), value]))(
    "%s as the repository directory's name and as the config's session",
    (_label, value) => {
      const repo = path.join(box.root, value);
      write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ session: value }));
      const screen = doctor(undefined, repo);
      expect(screen).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      const escaped = JSON.stringify(value).replace(
        /[\u007f-\u009f]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
      expect(lineOf(screen, "config")).toContain(escaped.slice(1, -1));
    },
  );

  test("control: a plain name is printed as a JSON string", () => {
    const repo = path.join(box.root, "plain");
    write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ project: "atlas", session: "main" }));
    expect(lineOf(doctor(undefined, repo), "config")).toContain('(project "atlas", session "main"');
  });
});

describe("the login-shell probe never outlives its limit (docs/decisions.md#installer)", () => {
  const pidFile = () => path.join(box.root, "probe.pid");
  const gone = (pid: number): boolean => {
    try {
      const state = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
      return state === "Z" || state === "X";
    } catch {
      return true;
    }
  };
  test.each([
    ["a profile that waits for a child", `#!/bin/sh\nsleep 45 &\necho $! > "${"$"}PIDFILE"\nwait\n`],
    [
      "a profile that leaves a background child holding stdout",
      `#!/bin/sh\nsleep 45 &\necho $! > "${"$"}PIDFILE"\nexit 0\n`,
    ],
  ])("%s: doctor answers at the limit and the probe's processes are killed", async (_name, script) => {
    const shell = path.join(box.root, "slow-shell");
    write(shell, script, 0o755);
    const started = performance.now();
    const run = await box.runAsync(["doctor"], { env: { SHELL: shell, PIDFILE: pidFile() } });
    const seconds = (performance.now() - started) / 1000;
    expect(run.exitCode).toBe(0);
    expect(lineOf(run.stdout, "shell")).toContain("did not finish within 5 s");
    expect(seconds).toBeLessThan(12);
    const pid = Number(read(pidFile()).trim());
    await Bun.sleep(200);
    expect(gone(pid)).toBe(true);
  });

  test("control: a quick login shell is reported as it is, well within the limit", async () => {
    const started = performance.now();
    const run = await box.runAsync(["doctor"], { env: { SHELL: "/bin/sh" } });
    expect(lineOf(run.stdout, "shell")).toBe("shell:     /bin/sh -l prints nothing on start");
    expect((performance.now() - started) / 1000).toBeLessThan(5);
  });
});
