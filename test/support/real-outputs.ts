// The compression corpus: outputs of real tools, made at test time by running them on small
// projects generated here (never a hand-written log). Each item names the tool that made it and
// the lines a reader needs from it, parsed from the tool's own report (the failing tests the
// runner lists, the compiler's error lines with their locations, the summary line), not picked
// by hand and not by our signal detector (src/core/compress-shape.ts), which the tests judge.
// Made once per run into a temporary directory (VELESDB_REAL_OUTPUTS_DIR to share it between
// processes) and reused from there. A tool that is missing makes its item unavailable, with why.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT } from "../../scripts/build.ts";

export interface RealOutput {
  readonly name: string;
  /** The tool (and version) that made it, as it reported itself. */
  readonly tool: string;
  /** The command line, as a host would pass it in its payload. */
  readonly command: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
  /** The lines a reader needs, parsed from the tool's own structure; each must survive verbatim. */
  readonly mustKeep: readonly string[];
}

export type CorpusItem =
  | { readonly ok: true; readonly output: RealOutput }
  | { readonly ok: false; readonly name: string; readonly problem: string };

interface Recipe {
  readonly name: string;
  /** The programs it needs on PATH. */
  readonly needs: readonly string[];
  readonly version: readonly string[];
  /** Writes the project into dir and returns the command to run there (argv, and as shown). */
  readonly setup: (dir: string) => { argv: string[]; shown: string; env?: Record<string, string> };
  readonly mustKeep: (stdout: string, stderr: string) => string[];
}

const lines = (text: string): string[] => text.split("\n").map((line) => line.replace(/\r$/, ""));
const matching = (text: string, pattern: RegExp): string[] => lines(text).filter((line) => pattern.test(line));
const nonBlank = (text: string): string[] => lines(text).filter((line) => line.trim() !== "");
const firstAndLast = (text: string): string[] => {
  const all = nonBlank(text);
  return all.length === 0 ? [] : [all[0]!, all.at(-1)!];
};
const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];

function run(
  argv: string[],
  cwd: string,
  env: Record<string, string> = {},
): { stdout: string; stderr: string; exitCode: number } {
  const result = Bun.spawnSync(argv, {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: "1", PY_COLORS: "0", FORCE_COLOR: "0", TERM: "dumb" },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 240_000,
  });
  return { stdout: result.stdout.toString(), stderr: result.stderr.toString(), exitCode: result.exitCode ?? -1 };
}

/** nodeTestRecipe(300, name) → node's test runner on `passes` passing tests and two failing ones, reporting TAP. */
function nodeTestRecipe(passes: number, name: string): Recipe {
  return {
    name,
    needs: ["node"],
    version: ["node", "--version"],
    setup(dir) {
      const tests = range(passes).map(
        (i) => `test("slug ${i}", () => assert.equal("Item ${i}".toLowerCase().replace(" ", "-"), "item-${i}"));`,
      );
      tests.splice(
        Math.floor(passes / 4),
        0,
        `test("trims the title", () => assert.equal("  Title ".trim(), "Title "));`,
      );
      tests.splice(
        Math.floor((passes * 3) / 4),
        0,
        `test("counts words", () => assert.strictEqual("a b  c".split(" ").length, 3));`,
      );
      write(
        path.join(dir, "slug.test.mjs"),
        `import test from "node:test";\nimport assert from "node:assert";\n${tests.join("\n")}\n`,
      );
      return {
        argv: ["node", "--test", "--test-reporter=tap", "slug.test.mjs"],
        shown: "node --test --test-reporter=tap slug.test.mjs",
      };
    },
    // TAP: the `not ok` lines and the `# fail N` tally.
    mustKeep: (out) => [...matching(out, /^not ok \d+ /), ...matching(out, /^# fail \d+$/)],
  };
}

const RECIPES: readonly Recipe[] = [
  {
    name: "pytest: 2 failures among 600 passes (-v)",
    needs: ["python3"],
    version: ["python3", "-m", "pytest", "--version"],
    setup(dir) {
      const body = [
        "import pytest",
        "",
        "@pytest.mark.parametrize('n', range(600))",
        "def test_square_is_positive(n):",
        "    assert n * n >= 0",
        "",
        "def test_total_of_invoice():",
        "    items = [19.99, 5.01, 3.5]",
        "    assert round(sum(items), 2) == 29.0, 'invoice total is off'",
        "",
        "def test_parse_header():",
        "    header = 'Content-Length: 12'.split(':')",
        "    assert header[0] == 'content-length'",
        "",
      ].join("\n");
      write(path.join(dir, "tests", "test_billing.py"), body);
      return {
        argv: ["python3", "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"],
        shown: "python3 -m pytest -v tests",
      };
    },
    // The short summary's FAILED lines, the assertion explanations (E …) and the final tally.
    mustKeep: (out) => [
      ...matching(out, /^FAILED /),
      ...matching(out, /^E {3}/),
      ...matching(out, /^=+ .*\b(failed|passed)\b.* =+$/),
    ],
  },
  {
    name: "python: a traceback after 3000 progress lines",
    needs: ["python3"],
    version: ["python3", "--version"],
    setup(dir) {
      const script = [
        "import sys",
        "def load(record):",
        "    if record == 2999:",
        "        return parse(record, 'amount=12,5')",
        "    return record",
        "def parse(record, text):",
        "    key, value = text.split('=')",
        "    return float(value)",
        "for record in range(3000):",
        "    load(record)",
        "    print(f'processed record {record + 1}/3000: ok ({(record * 7) % 13 + 1} ms)')",
        "",
      ].join("\n");
      write(path.join(dir, "etl.py"), script);
      return { argv: ["python3", "etl.py"], shown: "python3 etl.py" };
    },
    // Python's traceback: its header, every frame, and the exception line that ends it.
    mustKeep: (_out, err) => {
      const all = lines(err);
      const start = all.indexOf("Traceback (most recent call last):");
      if (start < 0) return [];
      const frames = all.slice(start).filter((line) => /^ {2}File "/.test(line));
      return [all[start]!, ...frames, nonBlank(err).at(-1)!];
    },
  },
  {
    name: "bun test: 2 failures among 700 passes",
    needs: ["bun"],
    version: ["bun", "--version"],
    setup(dir) {
      const tests = range(700).map(
        (i) => `test("formats amount ${i}", () => { expect((${i}).toFixed(2)).toBe("${i}.00"); });`,
      );
      tests.splice(120, 0, `test("rounds half up", () => { expect(Math.round(2.5 * 100) / 100).toBe(2.6); });`);
      tests.splice(250, 0, `test("parses the currency", () => { expect("EUR 12".split(" ")[0]).toBe("USD"); });`);
      write(path.join(dir, "money.test.ts"), `import { expect, test } from "bun:test";\n${tests.join("\n")}\n`);
      return { argv: ["bun", "test", "./money.test.ts"], shown: "bun test ./money.test.ts" };
    },
    // bun's (fail) lines and its " N fail" tally (it reports on stderr).
    mustKeep: (_out, err) => [...matching(err, /^\(fail\) /), ...matching(err, /^ *\d+ fail$/)],
  },
  nodeTestRecipe(300, "node --test: 2 failures among 300 passes (TAP)"),
  nodeTestRecipe(190, "node --test: 2 failures among 190 passes (TAP, under Copilot's ~20 KB inline limit)"),
  {
    name: "cargo test: 2 failures among 300 passes",
    needs: ["cargo"],
    version: ["cargo", "--version"],
    setup(dir) {
      write(
        path.join(dir, "Cargo.toml"),
        '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
      );
      const tests = range(300).map(
        (i) => `    #[test]\n    fn balance_${i}() { assert_eq!(super::balance(${i}, ${i}), 0); }`,
      );
      tests.push("    #[test]\n    fn interest_is_rounded() { assert_eq!(super::balance(105, 3), 101); }");
      tests.push('    #[test]\n    fn currency_code() { assert_eq!("eur".to_uppercase(), "USD"); }');
      write(
        path.join(dir, "src", "lib.rs"),
        `pub fn balance(credit: i64, debit: i64) -> i64 { credit - debit }\n\n#[cfg(test)]\nmod tests {\n${tests.join("\n")}\n}\n`,
      );
      return {
        argv: ["cargo", "test", "--offline", "-q", "--", "--test-threads=1", "--format=pretty"],
        shown: "cargo test",
        env: { CARGO_TARGET_DIR: path.join(dir, "target"), CARGO_TERM_COLOR: "never" },
      };
    },
    // libtest: the FAILED verdicts, where each test panicked, and the result line.
    mustKeep: (out, err) => [
      ...matching(out, /^test \S+ \.\.\. FAILED$/),
      ...matching(out + err, /^thread '.*' panicked at /),
      ...matching(out, /^test result: /),
    ],
  },
  {
    name: "cargo build: 2 errors among 60 warnings",
    needs: ["cargo"],
    version: ["rustc", "--version"],
    setup(dir) {
      write(
        path.join(dir, "Cargo.toml"),
        '[package]\nname = "inventory"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
      );
      const fns = range(60).map(
        (i) => `pub fn stock_${i}(count: u32) -> u32 {\n    let unused_${i} = count * 2;\n    count\n}`,
      );
      fns.splice(20, 0, 'pub fn price() -> u32 {\n    let label: u32 = "twelve";\n    label\n}');
      fns.splice(45, 0, "pub fn total(items: &[u32]) -> u32 {\n    items.iter().sum::<u32>() + missing_fee()\n}");
      write(path.join(dir, "src", "lib.rs"), `${fns.join("\n\n")}\n`);
      return {
        argv: ["cargo", "build", "--offline"],
        shown: "cargo build",
        env: { CARGO_TARGET_DIR: path.join(dir, "target"), CARGO_TERM_COLOR: "never" },
      };
    },
    // rustc: each error's headline and its location arrow; cargo's verdict.
    mustKeep: (_out, err) => {
      const all = lines(err);
      const keep: string[] = [];
      all.forEach((line, i) => {
        if (!/^error(\[E\d+\])?: /.test(line)) return;
        keep.push(line);
        const arrow = all.slice(i + 1, i + 4).find((next) => /^\s+--> /.test(next));
        if (arrow) keep.push(arrow);
      });
      return keep;
    },
  },
  {
    name: "go test -v: 2 failures among 300 passes",
    needs: ["go"],
    version: ["go", "version"],
    setup(dir) {
      write(path.join(dir, "go.mod"), "module example.com/shipping\n\ngo 1.19\n"); // Debian 12's golang-go is 1.19
      write(path.join(dir, "rate.go"), "package shipping\n\nfunc Rate(kg int) int { return kg * 3 }\n");
      const tests = range(300).map(
        (i) => `func TestRate${i}(t *testing.T) {\n\tif Rate(${i}) != ${i * 3} {\n\t\tt.Fatal("bad")\n\t}\n}`,
      );
      tests.push(
        'func TestRateHeavy(t *testing.T) {\n\tif got := Rate(40); got != 100 {\n\t\tt.Errorf("Rate(40) = %d, want 100", got)\n\t}\n}',
      );
      tests.push(
        'func TestRateZone(t *testing.T) {\n\tif got := Rate(2) + 1; got != 6 {\n\t\tt.Errorf("zone surcharge: got %d, want 6", got)\n\t}\n}',
      );
      write(path.join(dir, "rate_test.go"), `package shipping\n\nimport "testing"\n\n${tests.join("\n\n")}\n`);
      return {
        argv: ["go", "test", "-v", "-count=1", "./..."],
        shown: "go test -v ./...",
        env: { GOFLAGS: "-mod=mod", GOPROXY: "off", GOTOOLCHAIN: "local" },
      };
    },
    // go test: the --- FAIL lines, the messages the tests logged, the package verdicts.
    mustKeep: (out) => [
      ...matching(out, /^--- FAIL: /),
      ...matching(out, /^ {4}\S+_test\.go:\d+: /),
      ...matching(out, /^FAIL\b/),
    ],
  },
  {
    name: "tsc --listFiles: 3 type errors",
    needs: [],
    version: [path.join(ROOT, "node_modules", ".bin", "tsc"), "--version"],
    setup(dir) {
      const modules = range(400).map((i) => `export const rate${i}: number = ${i};\n`);
      for (const [i, text] of modules.entries()) write(path.join(dir, "src", `rate${i}.ts`), text);
      write(
        path.join(dir, "src", "cart.ts"),
        'import { rate3 } from "./rate3";\nexport const total: number = "12" + rate3;\nexport function add(a: number, b: number): number { return a + b; }\nadd(1, "2");\nexport const missing = rate4;\n',
      );
      write(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: "es2022",
            module: "es2022",
            moduleResolution: "bundler",
            types: [],
          },
          include: ["src"],
        }),
      );
      return {
        argv: [path.join(ROOT, "node_modules", ".bin", "tsc"), "-p", ".", "--listFiles", "--pretty", "false"],
        shown: "tsc -p . --listFiles --pretty false",
      };
    },
    // tsc: file(line,col): error TSnnnn.
    mustKeep: (out) => matching(out, /^\S+\(\d+,\d+\): error TS\d+: /),
  },
  {
    name: "make + gcc: 2 errors among 150 compiles with warnings",
    needs: ["make", "gcc"],
    version: ["gcc", "--version"],
    setup(dir) {
      const sources = range(150).map((i) => `unit${i}.c`);
      sources.forEach((file, i) => {
        let body = `int unit${i}(int x) {\n  int scratch${i};\n  return x + ${i};\n}\n`;
        if (i === 41) body = `int unit${i}(int x) {\n  return x + undeclared_total;\n}\n`;
        if (i === 118) body = `int unit${i}(int x) {\n  return x +;\n}\n`;
        write(path.join(dir, file), body);
      });
      write(
        path.join(dir, "Makefile"),
        `OBJS = ${sources.map((f) => f.replace(".c", ".o")).join(" ")}\nall: $(OBJS)\n%.o: %.c\n\tgcc -Wall -Wextra -O2 -c $< -o $@\n`,
      );
      return { argv: ["make", "-k", "-j1"], shown: "make -k" };
    },
    // gcc's error lines with their locations, and make's *** lines.
    mustKeep: (out, err) => [...matching(err, /^\S+:\d+:\d+: error: /), ...matching(out + err, /^make: \*\*\* /)],
  },
  {
    name: "git log --stat: 150 commits",
    needs: ["git"],
    version: ["git", "--version"],
    setup(dir) {
      const env = {
        GIT_AUTHOR_NAME: "Ada Lovelace",
        GIT_AUTHOR_EMAIL: "ada@example.com",
        GIT_COMMITTER_NAME: "Ada Lovelace",
        GIT_COMMITTER_EMAIL: "ada@example.com",
      };
      run(["git", "init", "-q", "-b", "main"], dir);
      for (const i of range(150)) {
        for (const j of range(1 + (i % 4)))
          write(
            path.join(dir, "src", words[(i + j) % words.length]!, `module${(i * 7 + j) % 40}.txt`),
            `${i} ${j}\n`.repeat(1 + ((i + j) % 9)),
          );
        run(["git", "add", "-A"], dir);
        run(
          [
            "git",
            "commit",
            "-q",
            "-m",
            `${words[i % words.length]}: update modules for release ${i}`,
            "--date",
            `2026-01-01T00:${String(i % 60).padStart(2, "0")}:00Z`,
          ],
          dir,
          { ...env, GIT_COMMITTER_DATE: `2026-01-01T01:${String(i % 60).padStart(2, "0")}:00Z` },
        );
      }
      return { argv: ["git", "log", "--stat"], shown: "git log --stat" };
    },
    // A listing has no verdict: its bounds (the newest commit's line, the last line) must survive.
    mustKeep: (out) => firstAndLast(out),
  },
  {
    name: "git diff: 30 files changed",
    needs: ["git"],
    version: ["git", "--version"],
    setup(dir) {
      const env = {
        GIT_AUTHOR_NAME: "Ada Lovelace",
        GIT_AUTHOR_EMAIL: "ada@example.com",
        GIT_COMMITTER_NAME: "Ada Lovelace",
        GIT_COMMITTER_EMAIL: "ada@example.com",
      };
      run(["git", "init", "-q", "-b", "main"], dir);
      for (const i of range(30))
        write(
          path.join(dir, `config${i}.ini`),
          `${range(40)
            .map((k) => `key_${k} = ${words[(i + k) % words.length]}`)
            .join("\n")}\n`,
        );
      run(["git", "add", "-A"], dir);
      run(["git", "commit", "-q", "-m", "base"], dir, env);
      for (const i of range(30))
        write(
          path.join(dir, `config${i}.ini`),
          `${range(40)
            .map((k) => `key_${k} = ${k % 3 === 0 ? "changed" : words[(i + k) % words.length]}`)
            .join("\n")}\n`,
        );
      return { argv: ["git", "diff"], shown: "git diff" };
    },
    // git's own structure: one header per file changed.
    mustKeep: (out) => matching(out, /^diff --git /),
  },
  {
    name: "find: a generated tree of 2400 files",
    needs: ["find"],
    version: ["find", "--version"],
    setup(dir) {
      for (const i of range(2400))
        write(
          path.join(dir, "assets", words[i % 10]!, `set${i % 24}`, `image_${i}.${["png", "svg", "json"][i % 3]}`),
          "",
        );
      return { argv: ["find", "assets", "-type", "f"], shown: "find assets -type f" };
    },
    mustKeep: (out) => firstAndLast(out),
  },
  {
    name: "ls -lR: a copy of node_modules/typescript",
    needs: ["ls"],
    version: ["ls", "--version"],
    setup(dir) {
      fs.cpSync(path.join(ROOT, "node_modules", "typescript"), path.join(dir, "typescript"), { recursive: true });
      return { argv: ["ls", "-lR", "--time-style=long-iso", "typescript"], shown: "ls -lR typescript" };
    },
    mustKeep: (out) => firstAndLast(out),
  },
  {
    name: "npm pack --dry-run",
    needs: ["npm"],
    version: ["npm", "--version"],
    setup(dir) {
      write(path.join(dir, "package.json"), JSON.stringify({ name: "report-kit", version: "1.4.0", files: ["lib"] }));
      for (const i of range(500))
        write(path.join(dir, "lib", words[i % 10]!, `part${i}.js`), `module.exports = ${i};\n`);
      return { argv: ["npm", "pack", "--dry-run", "--offline"], shown: "npm pack --dry-run" };
    },
    // npm's notices end with the tarball's details; its last line closes them.
    mustKeep: (_out, err) => [...matching(err, /^npm notice total files: /), nonBlank(err).at(-1)!],
  },
  {
    name: "pip install of a package the index does not have",
    needs: ["python3"],
    version: ["python3", "-m", "pip", "--version"],
    setup() {
      return {
        argv: ["python3", "-m", "pip", "install", "--no-index", "--dry-run", "velesdb-not-a-package==9.9"],
        shown: "pip install velesdb-not-a-package==9.9",
      };
    },
    mustKeep: (_out, err) => matching(err, /^ERROR: /),
  },
  {
    name: "apt-get -s install libboost-all-dev",
    needs: ["apt-get"],
    version: ["apt-get", "--version"],
    setup() {
      return { argv: ["apt-get", "-s", "install", "libboost-all-dev"], shown: "apt-get -s install libboost-all-dev" };
    },
    // apt's plan ends with its tally line.
    mustKeep: (out) => matching(out, /^\d+ upgraded, \d+ newly installed, /),
  },
];

/**
 * realCommand("pytest", dir) → a corpus recipe's project written into dir (a host's workspace),
 * the shell command that runs it there, and its parser of what must survive: for the end-to-end
 * cases, where the real host runs the tool itself. Its extra environment is written into the
 * command. Throws when the tool is missing. `exitZero` appends `; exit 0`: Claude Code sends a
 * command that exits non-zero to PostToolUseFailure, not PostToolUse (measured on 2.1.328:
 * research/payloads/claude/PostToolUseFailure.Bash.json carries the output as one `error`
 * string), so a failing run's output never reaches a PostToolUse hook there.
 */
export function realCommand(
  prefix: string,
  dir: string,
  options: { exitZero?: boolean; bareProgram?: boolean } = {},
): { command: string; mustKeep: (stdout: string, stderr: string) => string[] } {
  const recipe = RECIPES.find((r) => r.name.startsWith(prefix));
  if (!recipe) throw new Error(`no corpus recipe is named ${prefix}…`);
  const missing = recipe.needs.find((tool) => Bun.which(tool) === null);
  if (missing) throw new Error(`${recipe.name}: ${missing} is not installed`);
  const { argv, env } = recipe.setup(dir);
  // The program by its absolute path: a host's shell may start with another PATH (Codex's found
  // the system python3, without pytest). `bareProgram` keeps the name: Copilot denies a command
  // naming a path outside the workspace when no one is there to approve it (measured, 1.0.102).
  if (!options.bareProgram) argv[0] = Bun.which(argv[0]!) ?? argv[0]!;
  const quote = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);
  const assignments = Object.entries(env ?? {}).map(([key, value]) => `${key}=${quote(value)}`);
  // As run() below: no colour, whatever terminal the host's shell has.
  const plain = ["NO_COLOR=1", "PY_COLORS=0", "FORCE_COLOR=0", "TERM=dumb"];
  const command = ["env", ...plain, ...assignments, ...argv.map(quote)].join(" ");
  return {
    command: options.exitZero ? `${command}; exit 0` : command,
    mustKeep: (out, err) => recipe.mustKeep(out, err).filter((line) => line.trim() !== ""),
  };
}

/** mustKeepOf("pytest") → that recipe's parser of the lines a reader needs from its tool's output. */
export function mustKeepOf(prefix: string): (stdout: string, stderr: string) => string[] {
  const recipe = RECIPES.find((r) => r.name.startsWith(prefix));
  if (!recipe) throw new Error(`no corpus recipe is named ${prefix}…`);
  return (out, err) => recipe.mustKeep(out, err).filter((line) => line !== undefined && line.trim() !== "");
}

let cached: Promise<CorpusItem[]> | undefined;

/** realOutputs() → the corpus, made on first use in this process (or read back from VELESDB_REAL_OUTPUTS_DIR). */
export function realOutputs(): Promise<CorpusItem[]> {
  cached ??= Promise.resolve().then(makeCorpus);
  return cached;
}

/**
 * realOutput("pytest") → the one item whose name starts so, made alone (tests that need one real
 * output do not wait for the whole corpus); it throws when its tool is missing, so a test that
 * cannot run fails rather than passing without running.
 */
export function realOutput(prefix: string): RealOutput {
  const recipe = RECIPES.find((r) => r.name.startsWith(prefix));
  if (!recipe) throw new Error(`no corpus recipe is named ${prefix}…`);
  const dir = singleDir();
  const file = path.join(dir, `${RECIPES.indexOf(recipe)}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, "utf8")) as RealOutput;
  const item = makeItem(recipe, path.join(dir, `item${RECIPES.indexOf(recipe)}`));
  if (!item.ok) throw new Error(`${item.name}: ${item.problem}`);
  fs.writeFileSync(file, JSON.stringify(item.output));
  return item.output;
}

let single: string | undefined;
function singleDir(): string {
  if (single) return single;
  single = path.join(
    process.env.VELESDB_REAL_OUTPUTS_DIR || fs.mkdtempSync(path.join(os.tmpdir(), "velesdb-real-outputs-")),
    "single",
  );
  fs.mkdirSync(single, { recursive: true });
  if (!process.env.VELESDB_REAL_OUTPUTS_DIR) {
    const made = path.dirname(single);
    process.once("exit", () => fs.rmSync(made, { recursive: true, force: true }));
  }
  return single;
}

function makeCorpus(): CorpusItem[] {
  const shared = process.env.VELESDB_REAL_OUTPUTS_DIR;
  const dir = shared || fs.mkdtempSync(path.join(os.tmpdir(), "velesdb-real-outputs-"));
  fs.mkdirSync(dir, { recursive: true });
  const index = path.join(dir, "corpus.json");
  if (fs.existsSync(index)) return JSON.parse(fs.readFileSync(index, "utf8")) as CorpusItem[];
  const items = RECIPES.map((recipe, i) => makeItem(recipe, path.join(dir, `item${i}`)));
  fs.writeFileSync(index, JSON.stringify(items));
  if (!shared) process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  return items;
}

function makeItem(recipe: Recipe, dir: string): CorpusItem {
  const missing = recipe.needs.find((tool) => Bun.which(tool) === null);
  if (missing) return { ok: false, name: recipe.name, problem: `${missing} is not installed` };
  fs.mkdirSync(dir, { recursive: true });
  const version = run([...recipe.version], dir);
  if (version.exitCode !== 0)
    return {
      ok: false,
      name: recipe.name,
      problem: `${recipe.version.join(" ")} failed: ${(version.stderr || version.stdout).trim().split("\n")[0]}`,
    };
  const { argv, shown, env } = recipe.setup(dir);
  const result = run(argv, dir, env);
  const mustKeep = recipe
    .mustKeep(result.stdout, result.stderr)
    .filter((line) => line !== undefined && line.trim() !== "");
  const tool = (version.stdout || version.stderr).trim().split("\n")[0]!;
  if (mustKeep.length === 0)
    return {
      ok: false,
      name: recipe.name,
      problem: `${tool} produced nothing its structure marks (exit ${result.exitCode}): ${(result.stderr || result.stdout).slice(0, 300)}`,
    };
  return {
    ok: true,
    output: {
      name: recipe.name,
      tool,
      command: shown,
      stdout: result.stdout,
      stderr: result.stderr,
      exitCode: result.exitCode,
      mustKeep,
    },
  };
}
