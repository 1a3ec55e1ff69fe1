// check and doctor never start a program that the directory being checked names (docs/doctor.md,
// "Whose servers are started"; docs/hardening.md §4.1). Run inside a cloned repository, they
// used to start the velesdb-memory entry of its .mcp.json, .factory/mcp.json, .pi/mcp.json,
// opencode.json, kilo.json … as the user, with the user's whole environment, and without the
// approval the agent asks for. Each planted program leaves a marker when it runs and then
// execs the REAL velesdb-memory 0.17.0 (VELESDB_MEMORY_BIN_REAL: skipped without it, failed
// under CI=true), so a program that is started is really probed. The positive control names
// the same program in the user's own ~/.claude.json: it is started, and answers.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLIENTS } from "../src/install/clients/index.ts";
import type { InstallerContext } from "../src/install/paths.ts";
import { makeInstallSandbox, write, type InstallSandbox } from "./support/install-sandbox.ts";
import { REAL_VELESDB_MEMORY, requireRealServerUnderCi } from "./support/real-velesdb-memory.ts";

const REAL = REAL_VELESDB_MEMORY;
requireRealServerUnderCi(test, "the probe's trust rule");

/** The probe on (the sandbox turns it off), and a bound that only a hang would reach. */
const PROBE_ENV = { VELESDB_HOOKS_SERVER_PROBE: undefined, VELESDB_HOOKS_PROBE_TIMEOUT_MS: "8000" };
/** A bidi override in a planted program's name: it must reach the screen escaped. */
const RLO = "\u202e";

let box: InstallSandbox;
let repo: string;
let markers: string;
let store: string;
beforeEach(() => {
  box = makeInstallSandbox("probe-trust", {
    clients: ["claude", "droid", "pi", "opencode", "kilo", "codebuddy"],
    mcp: false,
  });
  // Under the home directory, as a clone usually is: its ancestors include ~ itself.
  repo = path.join(box.home, "src", "cloned-repo");
  markers = path.join(box.root, "markers");
  store = path.join(box.root, "store");
  fs.mkdirSync(markers, { recursive: true });
  fs.mkdirSync(repo, { recursive: true });
});
afterEach(() => box.cleanup());

/** plant(file, name) → an executable at `file` that leaves markers/<name> when run, then execs the real server. */
function plant(file: string, name: string): string {
  write(
    file,
    `#!/bin/sh\n: > ${JSON.stringify(path.join(markers, name))}\nexec ${JSON.stringify(REAL ?? "/bin/false")} "$@"\n`,
    0o755,
  );
  return file;
}
const ran = (): string[] => fs.readdirSync(markers).sort();
const serverEnv = () => ({ VELESDB_MEMORY_PATH: store, VELESDB_MEMORY_QUIET: "1" });
/** The entry as Claude, Pi, CodeBuddy and Droid spell it (mcpServers), or as OpenCode and Kilo do (mcp, an argv array). */
const mcpServers = (command: string) =>
  `${JSON.stringify({ mcpServers: { "velesdb-memory": { type: "stdio", command, args: [], env: serverEnv() } } })}\n`;
const mcpTable = (command: string) =>
  `${JSON.stringify({ mcp: { "velesdb-memory": { type: "local", command: [command], enabled: true, environment: serverEnv() } } })}\n`;

/** The repository's files, one planted program each: [file, client names that read it, program]. */
function plantRepository(): Array<{ file: string; clients: string[]; program: string }> {
  const planted = [
    { rel: ".mcp.json", clients: ["claude", "codebuddy", "pi"], body: mcpServers, name: "dot-mcp" },
    { rel: ".factory/mcp.json", clients: ["droid"], body: mcpServers, name: "factory" },
    { rel: ".pi/mcp.json", clients: ["pi"], body: mcpServers, name: `pi${RLO}gnp` },
    { rel: "opencode.json", clients: ["opencode", "kilo"], body: mcpTable, name: "opencode" },
    { rel: "kilo.json", clients: ["kilo"], body: mcpTable, name: "kilo" },
    { rel: ".kilo/kilo.json", clients: ["kilo"], body: mcpTable, name: "dot-kilo" },
  ];
  return planted.map(({ rel, clients, body, name }) => {
    const program = plant(path.join(repo, "tools", `${name}.sh`), name);
    write(path.join(repo, rel), body(program));
    return { file: rel, clients, program };
  });
}

/** The line a client gets for one project file's server, as check prints it (doctor pads the name). */
const notStartedTail = (rel: string, program: string): string => {
  const shownProgram = `~${program.slice(box.home.length)}`;
  const printed = shownProgram.includes(RLO) ? JSON.stringify(shownProgram).replace(RLO, "\\u202e") : shownProgram;
  return ` MCP server in ~/src/cloned-repo/${rel} (the project's ${rel}) not started: ${printed} is named by a file of the directory being checked; check and doctor start only the servers of your own configuration`;
};

describe.skipIf(!REAL)("servers named by the directory being checked are named, never started", () => {
  test("check and doctor inside a cloned repository: no planted program runs; one escaped line per client and file", async () => {
    const planted = plantRepository();
    // Positive control of the fixture: each planted program does leave its marker when run.
    const probe = Bun.spawnSync([planted[0]!.program, "--version"], { env: { PATH: "/usr/bin:/bin" } });
    expect(probe.stdout.toString()).toBe("velesdb-memory 0.17.0\n");
    expect(ran()).toEqual(["dot-mcp"]);
    fs.rmSync(path.join(markers, "dot-mcp"));

    const check = await box.runAsync(["check"], { env: PROBE_ENV, cwd: repo });
    const doctor = await box.runAsync(["doctor"], { env: PROBE_ENV, cwd: repo });
    expect(ran()).toEqual([]);
    for (const { file, clients, program } of planted) {
      for (const client of clients) {
        expect(check.stdout).toContain(`\n${client}:${notStartedTail(file, program)}\n`);
        expect(doctor.stdout).toContain(`\n${`${client}:`.padEnd(11)}${notStartedTail(file, program).slice(1)}\n`);
      }
    }
    // Escaped: the bidi override reaches neither screen raw.
    expect(check.stdout + doctor.stdout).not.toContain(RLO);
    expect(check.stdout).toContain("pi\\u202egnp.sh");
    // Nothing was started, so nothing "does not answer" either.
    expect(check.stdout + doctor.stdout).not.toContain("does not answer");
    expect(check.stdout + doctor.stdout).not.toContain("answers:");
  });

  test("an HTTP entry of the repository is not contacted", async () => {
    let requests = 0;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        requests++;
        return new Response("{}", { headers: { "content-type": "application/json" } });
      },
    });
    try {
      const url = `http://127.0.0.1:${server.port}/mcp`;
      write(
        path.join(repo, ".mcp.json"),
        `${JSON.stringify({ mcpServers: { "velesdb-memory": { type: "http", url } } })}\n`,
      );
      const check = await box.runAsync(["check", "--client", "claude"], { env: PROBE_ENV, cwd: repo });
      expect(requests).toBe(0);
      expect(check.stdout).toContain(
        `claude: MCP server in ~/src/cloned-repo/.mcp.json (the project's .mcp.json) not contacted: ${JSON.stringify(url)} is named by a file of the directory being checked`,
      );
      // Control: the same URL in the user's own file is contacted.
      write(
        path.join(box.home, ".claude.json"),
        `${JSON.stringify({ mcpServers: { "velesdb-memory": { type: "http", url } } })}\n`,
      );
      await box.runAsync(["check", "--client", "claude"], { env: PROBE_ENV, cwd: repo });
      expect(requests).toBeGreaterThan(0);
    } finally {
      server.stop(true);
    }
  });

  test("positive control: the same program named in the user's ~/.claude.json is started, and answers", async () => {
    const [dotMcp] = plantRepository();
    write(path.join(box.home, ".claude.json"), mcpServers(dotMcp!.program));
    const check = await box.runAsync(["check", "--client", "claude"], { env: PROBE_ENV, cwd: repo });
    expect(ran()).toEqual(["dot-mcp"]);
    expect(check.stdout).toContain(
      "claude: MCP server in ~/.claude.json (user scope) answers: velesdb-memory 0.17.0, 27 tools\n",
    );
    // The repository's file naming the same program is still not started on its own account.
    expect(check.stdout).toContain(`\nclaude:${notStartedTail(".mcp.json", dotMcp!.program)}\n`);
    fs.rmSync(path.join(markers, "dot-mcp"));
    const doctor = await box.runAsync(["doctor", "--client", "claude"], { env: PROBE_ENV, cwd: repo });
    expect(ran()).toEqual(["dot-mcp"]);
    expect(doctor.stdout).toContain("answers: velesdb-memory 0.17.0, 27 tools, embedder hash\n");
  });
});

describe.skipIf(!REAL)("a user's own entry never reaches a program of the directory being checked", () => {
  test("a bare command with \".\" first on PATH: the program from PATH's absolute directory runs, not the repository's", async () => {
    const bin = path.join(box.root, "bin");
    plant(path.join(bin, "velesdb-memory"), "from-path");
    plant(path.join(repo, "velesdb-memory"), "planted");
    write(path.join(box.home, ".claude.json"), mcpServers("velesdb-memory"));
    const env = { ...PROBE_ENV, PATH: `.:${bin}:/usr/bin:/bin` };
    const check = await box.runAsync(["check", "--client", "claude"], { env, cwd: repo });
    expect(ran()).toEqual(["from-path"]);
    expect(check.stdout).toContain("claude: MCP server in ~/.claude.json (user scope) answers: velesdb-memory 0.17.0");
  });

  test("a relative command: not started, and said so; control: the same program by its absolute path runs", async () => {
    plant(path.join(repo, "tools", "server.sh"), "relative");
    write(path.join(box.home, ".claude.json"), mcpServers("./tools/server.sh"));
    const check = await box.runAsync(["check", "--client", "claude"], { env: PROBE_ENV, cwd: repo });
    expect(ran()).toEqual([]);
    expect(check.stdout).toContain(
      "claude: MCP server in ~/.claude.json (user scope) not started: its command ./tools/server.sh is relative, so it would run a file of ~/src/cloned-repo\n",
    );
    write(path.join(box.home, ".claude.json"), mcpServers(path.join(repo, "tools", "server.sh")));
    await box.runAsync(["check", "--client", "claude"], { env: PROBE_ENV, cwd: repo });
    expect(ran()).toEqual(["relative"]);
  });
});

describe("which files are the project's", () => {
  test("every MCP file whose place follows the working directory is declared the project's, and no other", () => {
    const ctx = (cwd: string): InstallerContext => ({ env: {}, home: "/home/u", platform: "linux", cwd });
    const rows = CLIENTS.flatMap((client) =>
      (client.mcp?.files ?? []).map((file) => {
        const a = file.path(ctx("/work/one"));
        const b = file.path(ctx("/work/two"));
        const followsCwd = a.ok && b.ok && a.path !== b.path;
        return `${client.name} ${file.label}: ${file.scope}${followsCwd === (file.scope === "project") ? "" : " (WRONG)"}`;
      }),
    );
    expect(rows.filter((row) => row.endsWith("(WRONG)"))).toEqual([]);
    // Positive control: the rule does tell the two apart.
    expect(rows.filter((row) => row.endsWith(": project")).length).toBeGreaterThanOrEqual(9);
    expect(rows).toContain("claude local scope: user");
  });
});
