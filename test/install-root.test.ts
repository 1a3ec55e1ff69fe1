// Root installing into another user's home (docs/decisions.md#installer): `sudo` keeping HOME,
// a provisioning script. The suite runs as root; "the user" is an unprivileged uid that owns
// the home and everything in it (their links included: lchown), and "root's files" sit in a
// root-only directory (0700) beside the home. Each refusal has its control: the same link,
// owned by the user and leading to the user's own copy, installs.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { makeDirectories, RACE_TEST_HOOKS } from "../src/install/files/atomic-write.ts";
import { makeInstallSandbox, read, treeDigest, write, type InstallSandbox } from "./support/install-sandbox.ts";
import { IS_ROOT, testIf } from "./support/requires.ts";

const USER = { uid: 23456, gid: 23457 };

let box: InstallSandbox;
/** A root-only directory (0700, uid 0) outside the home: what root's own files stand for. */
let rootOnly: string;
/** A directory of the user's outside the home (dotfiles kept elsewhere). */
let userDir: string;

/** giveToUser(p): p and everything below it, links included (not their targets), belong to the user. */
function giveToUser(p: string): void {
  const st = fs.lstatSync(p);
  fs.lchownSync(p, USER.uid, USER.gid);
  if (st.isDirectory()) for (const name of fs.readdirSync(p)) giveToUser(path.join(p, name));
}

/** userLink(target, at): a symbolic link made by the user (root makes it, then hands it over). */
function userLink(target: string, at: string): void {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at);
  fs.lchownSync(at, USER.uid, USER.gid);
}

beforeEach(() => {
  box = makeInstallSandbox("root", { clients: ["claude", "codex", "gemini", "copilot"] });
  rootOnly = path.join(box.root, "root-only");
  fs.mkdirSync(rootOnly, { mode: 0o700 });
  userDir = path.join(box.root, "user-dotfiles");
  fs.mkdirSync(userDir, { mode: 0o700 });
  if (IS_ROOT) {
    fs.mkdirSync(path.join(box.home, ".qwen"));
    giveToUser(box.home);
    giveToUser(userDir);
  }
});
afterEach(() => box.cleanup());

const ROOT_SETTINGS = `${JSON.stringify({ model: "root's own", env: { TOKEN: "root-secret" } }, null, 2)}\n`;
const ROOT_RULES = "- root's own rules\n";

interface LinkCase {
  readonly name: string;
  readonly args: readonly string[];
  /** Makes the user's link in the home, to a target inside `dir` (root's or the user's); returns what to watch. */
  setUp(dir: string): void;
  readonly reason: RegExp;
}

// One row per file the installer reads or writes, with the link the user controls on its way.
const CASES: readonly LinkCase[] = [
  {
    name: "~/.claude/settings.json links to a file of root's (the reported case)",
    args: ["--client", "claude"],
    setUp(dir) {
      write(path.join(dir, "settings.json"), ROOT_SETTINGS, 0o644);
      userLink(path.join(dir, "settings.json"), box.claudeSettings);
    },
    reason: /refused: claude: ~\/\.claude\/settings\.json .*link/,
  },
  {
    name: "~/.gemini links to a directory of root's",
    args: ["--client", "gemini"],
    setUp(dir) {
      fs.rmSync(path.join(box.home, ".gemini"), { recursive: true });
      fs.mkdirSync(path.join(dir, "gemini-home"), { mode: 0o700 });
      userLink(path.join(dir, "gemini-home"), path.join(box.home, ".gemini"));
    },
    reason: /refused: gemini: ~\/\.gemini\/settings\.json .*link/,
  },
  {
    name: "~/.qwen/settings.json links to a file of root's",
    args: ["--client", "qwen"],
    setUp(dir) {
      write(path.join(dir, "settings.json"), ROOT_SETTINGS, 0o600);
      userLink(path.join(dir, "settings.json"), path.join(box.home, ".qwen", "settings.json"));
    },
    reason: /refused: qwen: ~\/\.qwen\/settings\.json .*link/,
  },
  {
    name: "~/.copilot/hooks links to a directory of root's",
    args: ["--client", "copilot"],
    setUp(dir) {
      fs.mkdirSync(path.join(dir, "hooks"), { mode: 0o700 });
      userLink(path.join(dir, "hooks"), path.join(box.home, ".copilot", "hooks"));
    },
    reason: /refused: copilot: ~\/\.copilot\/hooks\/velesdb-hooks\.json .*link/,
  },
  {
    name: "~/.codex/config.toml links to a file of root's",
    args: ["--client", "codex"],
    setUp(dir) {
      write(path.join(dir, "config.toml"), 'model = "root"\n', 0o600);
      fs.rmSync(box.codexConfig, { force: true }); // the sandbox's user-configured MCP server
      userLink(path.join(dir, "config.toml"), box.codexConfig);
    },
    reason: /refused: codex: ~\/\.codex\/config\.toml .*link/,
  },
  {
    name: "Windsurf's rules file links to a file of root's",
    args: ["--client", "windsurf"],
    setUp(dir) {
      write(path.join(dir, "rules.md"), ROOT_RULES, 0o600);
      fs.mkdirSync(path.dirname(box.windsurfRules), { recursive: true });
      giveToUser(path.join(box.home, ".codeium"));
      userLink(path.join(dir, "rules.md"), box.windsurfRules);
    },
    reason: /refused: windsurf: ~\/\.codeium\/windsurf\/memories\/global_rules\.md .*link/,
  },
  {
    name: "~/.velesdb-hooks (the record and the binary) links to a directory of root's",
    args: ["--client", "claude"],
    setUp(dir) {
      fs.mkdirSync(path.join(dir, "tree"), { mode: 0o700 });
      userLink(path.join(dir, "tree"), path.join(box.home, ".velesdb-hooks"));
    },
    reason: /refused: ~\/\.velesdb-hooks\/.* .*link/,
  },
  {
    name: "~/.velesdb-hooks/bin links to a directory of root's",
    args: ["--client", "claude"],
    setUp(dir) {
      fs.mkdirSync(path.join(box.home, ".velesdb-hooks"), { mode: 0o700 });
      giveToUser(path.join(box.home, ".velesdb-hooks"));
      fs.mkdirSync(path.join(dir, "bin"), { mode: 0o700 });
      userLink(path.join(dir, "bin"), path.join(box.home, ".velesdb-hooks", "bin"));
    },
    reason: /refused: ~\/\.velesdb-hooks\/bin\/velesdb-hooks .*link/,
  },
];

describe("1. root follows the user's links only to the user's own files", () => {
  testIf(IS_ROOT, "root").each(CASES.map((c) => [c.name, c] as const))(
    "%s: refused before anything changes",
    (_name, c) => {
      c.setUp(rootOnly);
      const before = { home: treeDigest(box.home), root: treeDigest(rootOnly) };
      for (const command of ["install", "uninstall"]) {
        const run = box.run([command, ...c.args]);
        expect({ command, exitCode: run.exitCode }).toEqual({ command, exitCode: 1 });
        expect(run.stderr).toMatch(c.reason);
        expect(run.stderr).toContain("nothing was changed");
        // One line per refusal: the reason is never spread over several lines.
        expect(run.stderr.split("\n").filter((line) => line.includes("refused:")).length).toBe(1);
      }
      expect(treeDigest(rootOnly)).toBe(before.root);
      expect(treeDigest(box.home)).toBe(before.home);
    },
  );

  testIf(IS_ROOT, "root").each(CASES.map((c) => [c.name, c] as const))(
    "control: %s, but to the user's own copy: installs",
    (_name, c) => {
      c.setUp(userDir);
      giveToUser(userDir);
      const run = box.run(["install", ...c.args]);
      expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    },
  );

  testIf(IS_ROOT, "root")(
    "a link of root's in the user's directory is refused too: the user could have moved it there",
    () => {
      const own = path.join(userDir, "settings.json");
      write(own, ROOT_SETTINGS, 0o600);
      giveToUser(userDir);
      fs.symlinkSync(own, box.claudeSettings); // made by root, left root's
      const before = treeDigest(box.root);
      const run = box.run(["install", "--client", "claude"]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(
        /refused: claude: ~\/\.claude\/settings\.json leads through ~\/\.claude\/settings\.json, a link owned by uid 0, not by the home's owner \(uid 23456\)/,
      );
      expect(treeDigest(box.root)).toBe(before);
      fs.lchownSync(box.claudeSettings, USER.uid, USER.gid); // control: the same link, the user's
      expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
    },
  );

  testIf(IS_ROOT, "root")("check and doctor read nothing through such a link either", () => {
    // Root's file holds entries of ours in step: read through the link, check would pass.
    expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
    const inStep = read(box.claudeSettings);
    const target = path.join(rootOnly, "settings.json");
    write(target, inStep, 0o600);
    fs.rmSync(box.claudeSettings);
    userLink(target, box.claudeSettings);
    const check = box.run(["check", "--client", "claude"]);
    expect(check.exitCode).toBe(1);
    expect(check.stdout).toMatch(
      /claude: entries cannot be checked: ~\/\.claude\/settings\.json leads through the link/,
    );
    expect(box.run(["doctor", "--client", "claude"]).stdout).toMatch(
      /entries cannot be checked: ~\/\.claude\/settings\.json leads through the link/,
    );
    // Control: the same entries in the user's own copy are in step.
    fs.rmSync(box.claudeSettings);
    const own = path.join(userDir, "settings.json");
    write(own, inStep, 0o600);
    giveToUser(userDir);
    userLink(own, box.claudeSettings);
    const control = box.run(["check", "--client", "claude"]);
    expect({ exitCode: control.exitCode, stdout: control.stdout }).toEqual({
      exitCode: 0,
      stdout: expect.stringContaining("claude: entries in step"),
    });
  });

  testIf(IS_ROOT, "root")(
    "a user's link to the user's own registry: written at the target, backup beside the target, owned by the user, no more readable",
    () => {
      const target = path.join(userDir, "claude-settings.json");
      write(target, ROOT_SETTINGS, 0o750);
      fs.chownSync(target, USER.uid, USER.gid);
      userLink(target, box.claudeSettings);
      const run = box.run(["install", "--client", "claude"]);
      expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
      expect(fs.lstatSync(box.claudeSettings).isSymbolicLink()).toBe(true);
      expect(Object.keys((parseJsonc(read(target)) as { hooks: object }).hooks)).toContain("SessionStart");
      const backup = `${target}.velesdb-backup`;
      expect(read(backup)).toBe(ROOT_SETTINGS);
      const st = fs.statSync(backup);
      expect({ uid: st.uid, gid: st.gid }).toEqual(USER);
      expect((st.mode & 0o7777 & ~0o750).toString(8)).toBe("0"); // no bit the original lacks
      expect(st.mode & 0o111).toBe(0); // a copy of settings is no program
      expect(fs.existsSync(`${box.claudeSettings}.velesdb-backup`)).toBe(false);
      expect(run.stdout).toContain(`backup in ${backup}`);
    },
  );

  testIf(IS_ROOT, "root")(
    "a link root cannot be blamed on the user (a system link above the home, in a directory the user cannot write) is followed",
    () => {
      // /home -> /var/home (Fedora Silverblue and others): root's link in root's directory.
      const alias = path.join(box.root, "homes");
      fs.symlinkSync(box.root, alias);
      const home = path.join(alias, path.basename(box.home));
      const run = box.run(["install", "--client", "claude"], { env: { HOME: home } });
      expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
      expect(fs.statSync(box.claudeSettings).uid).toBe(USER.uid);
    },
  );
});

describe("1. backups live beside the bytes they copy", () => {
  test("root in its own home: a linked registry's backup goes beside the target, inside the directory that guards it", () => {
    if (IS_ROOT) for (const p of [box.home, path.join(box.home, ".claude")]) fs.chownSync(p, 0, 0);
    const target = path.join(rootOnly, "settings.json");
    write(target, ROOT_SETTINGS, 0o644);
    fs.symlinkSync(target, box.claudeSettings);
    const run = box.run(["install", "--client", "claude"]);
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(read(`${target}.velesdb-backup`)).toBe(ROOT_SETTINGS);
    expect(fs.existsSync(`${box.claudeSettings}.velesdb-backup`)).toBe(false);
    // Uninstall restores the bytes at the target and the link stays.
    expect(box.run(["uninstall", "--client", "claude"]).exitCode).toBe(0);
    expect(read(target)).toBe(ROOT_SETTINGS);
    expect(fs.lstatSync(box.claudeSettings).isSymbolicLink()).toBe(true);
  });
});

/** A settings file holding only a bash-reference hook (ours by its marker), nothing else. */
const LEGACY_ONLY = `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "bash /x/.claude/hooks/velesdb-memory/stop.sh" }] }] } }, null, 2)}\n`;

function addRecord(record: { client: string; path: string; created: boolean }): void {
  const file = path.join(box.home, ".velesdb-hooks", "installed.json");
  const manifest = JSON.parse(read(file)) as { files: unknown[] };
  manifest.files.push({ ...record, added: [["hooks"], ["hooks", "Stop"]] });
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2)); // the user's own file: same owner, same mode
}

describe("2. root obeys the user's record only for the user's own files", () => {
  // Each row: a file holding only a bash-reference hook (so an obeyed `"created": true` record
  // deletes it), who owns it, the path the user's record names, and the refusal expected.
  const ROWS: ReadonlyArray<readonly [string, () => { file: string; recorded: string }, RegExp]> = [
    [
      "a record naming a file of root's",
      () => ({ file: path.join(rootOnly, "settings.json"), recorded: path.join(rootOnly, "settings.json") }),
      /refused: claude: .*installed\.json names .*root-only\/settings\.json, which belongs to uid 0/,
    ],
    [
      "a record naming a file the client never writes (not its registry's name)",
      () => ({ file: path.join(userDir, "notes.json"), recorded: path.join(userDir, "notes.json") }),
      /refused: claude: .*names .*notes\.json, which is not a file claude/,
    ],
    [
      "a record whose path leads through the user's link to root's file",
      () => {
        userLink(rootOnly, path.join(userDir, "elsewhere"));
        return {
          file: path.join(rootOnly, "settings.json"),
          recorded: path.join(userDir, "elsewhere", "settings.json"),
        };
      },
      /refused: claude: .*names .*elsewhere\/settings\.json, which leads through the link/,
    ],
  ];

  /** uninstallAfterRecord(file, recorded): root installs, the user adds the record, root uninstalls. */
  function uninstallAfterRecord(file: string, recorded: string) {
    write(file, LEGACY_ONLY, 0o600);
    if (file.startsWith(userDir)) fs.chownSync(file, USER.uid, USER.gid);
    expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
    addRecord({ client: "claude", path: recorded, created: true });
    return box.run(["uninstall"]);
  }

  testIf(IS_ROOT, "root").each(ROWS)(
    "%s: uninstall refuses, naming the record; the file stays",
    (_name, setUp, reason) => {
      const { file, recorded } = setUp();
      const run = uninstallAfterRecord(file, recorded);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(reason);
      expect(read(file)).toBe(LEGACY_ONLY);
    },
  );

  testIf(IS_ROOT, "root")("control: the same record naming the user's own settings.json is obeyed", () => {
    const own = path.join(userDir, "settings.json");
    const run = uninstallAfterRecord(own, own);
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(fs.existsSync(own)).toBe(false); // created, and it held nothing else
  });
});

describe("9. a directory root creates for the user is handed over without following a link", () => {
  afterEach(() => {
    RACE_TEST_HOOKS.afterMkdir = undefined;
  });

  testIf(IS_ROOT, "root")(
    "swapped for a link between mkdir and chown: root's file keeps its owner, and the creation fails",
    () => {
      const victim = path.join(rootOnly, "victim");
      write(victim, "root's\n", 0o600);
      const dir = path.join(userDir, "made");
      // The user's move, in the window the slowed race opens: the new directory becomes a link.
      RACE_TEST_HOOKS.afterMkdir = (made) => {
        fs.rmdirSync(made);
        fs.symlinkSync(victim, made);
      };
      expect(() => makeDirectories(dir, USER)).toThrow();
      const st = fs.statSync(victim);
      expect({ uid: st.uid, gid: st.gid }).toEqual({ uid: 0, gid: 0 });
      expect(fs.lstatSync(dir).isSymbolicLink()).toBe(true); // the user's link is theirs: left alone
    },
  );

  testIf(IS_ROOT, "root")("swapped for another directory of the user's: refused, nothing chowned", () => {
    const theirs = path.join(userDir, "theirs");
    fs.mkdirSync(theirs);
    const dir = path.join(userDir, "made");
    RACE_TEST_HOOKS.afterMkdir = (made) => {
      fs.rmdirSync(made);
      fs.renameSync(theirs, made);
      fs.chownSync(made, 4242, 4242);
    };
    expect(() => makeDirectories(dir, USER)).toThrow();
    expect(fs.statSync(dir).uid).toBe(4242);
  });

  testIf(IS_ROOT, "root")("control: without the swap every directory is made and belongs to the user", () => {
    const dir = path.join(userDir, "a", "b");
    expect(makeDirectories(dir, USER)).toEqual([path.join(userDir, "a"), dir]);
    for (const p of [path.join(userDir, "a"), dir]) {
      const st = fs.lstatSync(p);
      expect({ dir: st.isDirectory(), uid: st.uid, gid: st.gid, mode: st.mode & 0o777 }).toEqual({
        dir: true,
        ...USER,
        mode: 0o700,
      });
    }
  });
});
