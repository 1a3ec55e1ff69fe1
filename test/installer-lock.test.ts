// Concurrent installer commands (docs/decisions.md#installer-second-trial-from-outside): install and uninstall read the
// record of files at their start and write it at their end, and uninstall decides the binary
// is unused before it deletes it; run at once, they lost each other's records and left entries
// naming a deleted binary. One lock on the installer's tree serialises them. Everything runs
// the compiled binary in private HOMEs; the mix is seeded, so a failure can be replayed.
import { afterEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, type InstallSandbox, type Run } from "./support/install-sandbox.ts";
import { seeded } from "./support/seeded.ts";

const boxes: InstallSandbox[] = [];
afterEach(() => {
  for (const box of boxes.splice(0)) box.cleanup();
});

const newBox = (): InstallSandbox => {
  const box = makeInstallSandbox("lock", { clients: ["claude", "gemini", "dsh", "copilot"] });
  fs.mkdirSync(path.join(box.home, ".qwen"));
  boxes.push(box);
  return box;
};

/** The registries a command line writes, keyed by the arguments that select it. */
function targets(box: InstallSandbox, customDsh: number): Array<{ args: string[]; file: string }> {
  const list = [
    { args: ["--client", "claude"], file: box.claudeSettings },
    { args: ["--client", "gemini"], file: path.join(box.home, ".gemini", "settings.json") },
    { args: ["--client", "qwen"], file: path.join(box.home, ".qwen", "settings.json") },
    { args: ["--client", "copilot"], file: path.join(box.home, ".copilot", "hooks", "velesdb-hooks.json") },
    { args: ["--client", "dsh"], file: box.dshHooks },
  ];
  for (let i = 0; i < customDsh; i++) {
    const file = path.join(box.root, `dsh-${i}`, "hooks.json");
    list.push({ args: ["--client", "dsh", "--config", file], file });
  }
  return list;
}

const recordedPaths = (box: InstallSandbox): string[] => {
  const manifest = path.join(box.home, ".velesdb-hooks", "installed.json");
  if (!fs.existsSync(manifest)) return [];
  return (JSON.parse(fs.readFileSync(manifest, "utf8")) as { files: Array<{ path: string }> }).files
    .map((f) => f.path)
    .sort();
};
const namesBinary = (box: InstallSandbox, file: string): boolean =>
  fs.existsSync(file) && fs.readFileSync(file, "utf8").includes(box.stableBinary);

const allOk = (runs: readonly Run[]): void => {
  const failed = runs.filter((run) => run.exitCode !== 0);
  expect(failed.map((run) => run.stderr)).toEqual([]);
};

describe("3. concurrent installs keep every record", () => {
  test("ten installs of different registries at once: every registry is recorded, and uninstall removes them all and then the binary", async () => {
    const box = newBox();
    const list = targets(box, 5);
    allOk(await Promise.all(list.map((t) => box.runAsync(["install", ...t.args]))));
    expect(recordedPaths(box)).toEqual(list.map((t) => t.file).sort());
    for (const t of list) expect(namesBinary(box, t.file)).toBe(true);
    const uninstall = box.run(["uninstall"]);
    expect(uninstall.exitCode).toBe(0);
    for (const t of list) expect(namesBinary(box, t.file)).toBe(false);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  }, 120_000);
});

describe("4. a 50-way mix of install and uninstall never leaves an entry naming a missing binary", () => {
  test("two homes, 25 commands each at once; after the round the record and the binary agree with the registries", async () => {
    const random = seeded(19);
    for (let round = 0; round < 1; round++) {
      const homes = [newBox(), newBox()];
      const runs: Array<Promise<Run>> = [];
      for (const box of homes) {
        const list = targets(box, 3);
        for (let i = 0; i < 25; i++) {
          const target = list[Math.floor(random() * list.length)]!;
          runs.push(box.runAsync([random() < 0.6 ? "install" : "uninstall", ...target.args]));
        }
      }
      allOk(await Promise.all(runs));
      for (const box of homes) {
        const list = targets(box, 3);
        const ours = list
          .filter((t) => namesBinary(box, t.file))
          .map((t) => t.file)
          .sort();
        // Every registry holding our entries is remembered, and only those.
        expect(recordedPaths(box)).toEqual(ours);
        // The binary is there exactly when something still runs it.
        expect(fs.existsSync(box.stableBinary)).toBe(ours.length > 0);
        // No lock is left behind.
        expect(fs.readdirSync(path.join(box.home)).filter((name) => name.includes("lock"))).toEqual([]);
        if (fs.existsSync(path.join(box.home, ".velesdb-hooks"))) {
          expect(fs.readdirSync(path.join(box.home, ".velesdb-hooks")).filter((name) => name.includes("lock"))).toEqual(
            [],
          );
        }
      }
      for (const box of boxes.splice(0)) box.cleanup();
    }
  }, 300_000);
});

describe("the lock: bounded wait, stale locks, clear words", () => {
  const lockPath = (box: InstallSandbox) => path.join(box.home, ".velesdb-hooks", "install.lock");
  /** Field 22 of /proc/<pid>/stat: the process's start time, as the lock records it. */
  const startTime = (pid: number): string => {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19]!;
  };
  const plantLock = (box: InstallSandbox, owner: { pid: number; started: string }) => {
    fs.mkdirSync(path.dirname(lockPath(box)), { recursive: true });
    fs.writeFileSync(lockPath(box), `${JSON.stringify(owner)}\n`);
  };

  test("a live holder: install waits the bound (VELESDB_HOOKS_LOCK_WAIT) and stops with one line, exit 1, nothing changed", () => {
    const box = newBox();
    plantLock(box, { pid: process.pid, started: startTime(process.pid) });
    const started = performance.now();
    const run = box.run(["install", "--client", "claude"], { env: { VELESDB_HOOKS_LOCK_WAIT: "1" } });
    const seconds = (performance.now() - started) / 1000;
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      `velesdb-hooks (pid ${process.pid}) is installing or uninstalling (it holds ~/.velesdb-hooks/install.lock); waited 1 s`,
    );
    expect(seconds).toBeGreaterThanOrEqual(0.9);
    expect(fs.existsSync(box.claudeSettings)).toBe(false);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
    expect(fs.existsSync(lockPath(box))).toBe(true);
  });
  test("a lock left by a process that is gone does not block: install goes ahead and leaves no lock", () => {
    const box = newBox();
    const dead = Bun.spawnSync(["true"]).pid;
    plantLock(box, { pid: dead, started: "1" });
    const run = box.run(["install", "--client", "claude"], { env: { VELESDB_HOOKS_LOCK_WAIT: "5" } });
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(namesBinary(box, box.claudeSettings)).toBe(true);
    expect(fs.existsSync(lockPath(box))).toBe(false);
  });
  test("a lock naming a live pid with another start time (the pid was reused) is stale", () => {
    const box = newBox();
    plantLock(box, { pid: process.pid, started: String(Number(startTime(process.pid)) + 1) });
    const run = box.run(["install", "--client", "claude"], { env: { VELESDB_HOOKS_LOCK_WAIT: "5" } });
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  });
  test("uninstall of the last registry leaves no tree behind (the lock was the last thing in it)", () => {
    const box = newBox();
    expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
    expect(box.run(["uninstall", "--client", "claude"]).exitCode).toBe(0);
    expect(fs.existsSync(path.join(box.home, ".velesdb-hooks"))).toBe(false);
  });
  // docs/hardening.md §7: a directory there made install wait the whole 60 s, then blame another velesdb-hooks.
  const NOT_A_LOCK: ReadonlyArray<readonly [string, (at: string) => void, string, string]> = [
    [
      "a directory",
      (at) => fs.mkdirSync(path.join(at, "inside"), { recursive: true }),
      "is a directory, not a lock velesdb-hooks made",
      "remove it (rm -r ~/.velesdb-hooks/install.lock)",
    ],
    [
      "a symlink",
      (at) => fs.symlinkSync("/dev/null", at),
      "is a symlink, not a lock velesdb-hooks made",
      "remove it (rm ~/.velesdb-hooks/install.lock)",
    ],
    [
      "a FIFO",
      (at) => expect(Bun.spawnSync(["mkfifo", at]).exitCode).toBe(0),
      "is not a regular file, not a lock velesdb-hooks made",
      "remove it (rm ~/.velesdb-hooks/install.lock)",
    ],
  ];
  test.each(NOT_A_LOCK)(
    "%s at install.lock: install and uninstall stop at once (no wait), saying what it is and what to remove; nothing changed",
    (_label, plant, what, remedy) => {
      const box = newBox();
      const refusedAtOnce = (command: string[]) => {
        fs.mkdirSync(path.dirname(lockPath(box)), { recursive: true });
        plant(lockPath(box));
        const started = performance.now();
        const run = box.run(command, { env: { VELESDB_HOOKS_LOCK_WAIT: "30" } });
        const seconds = (performance.now() - started) / 1000;
        expect(run.exitCode).toBe(1);
        // The refusal's one line, then the installer's usual closing line.
        expect(run.stderr.trim().split("\n")).toEqual([
          expect.stringContaining(`refused: ~/.velesdb-hooks/install.lock ${what}`),
          "velesdb-hooks: nothing was changed",
        ]);
        expect(run.stderr).toContain(remedy);
        expect(seconds).toBeLessThan(10);
        expect(fs.lstatSync(lockPath(box)).isFile()).toBe(false); // not ours: left where it is
        fs.rmSync(lockPath(box), { recursive: true });
      };
      refusedAtOnce(["install", "--client", "claude"]);
      expect(fs.existsSync(box.claudeSettings)).toBe(false);
      // Control: removed as told, install goes ahead.
      expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
      expect(namesBinary(box, box.claudeSettings)).toBe(true);
      refusedAtOnce(["uninstall", "--client", "claude"]);
      expect(namesBinary(box, box.claudeSettings)).toBe(true);
      expect(box.run(["uninstall", "--client", "claude"]).exitCode).toBe(0);
      expect(namesBinary(box, box.claudeSettings)).toBe(false);
    },
  );
  test("--dry-run takes no lock (it writes nothing): it runs while a live holder waits", () => {
    const box = newBox();
    plantLock(box, { pid: process.pid, started: startTime(process.pid) });
    const run = box.run(["install", "--client", "claude", "--dry-run"], { env: { VELESDB_HOOKS_LOCK_WAIT: "0" } });
    expect(run.exitCode).toBe(0);
  });
});
