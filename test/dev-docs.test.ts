// The development pages (docs/development/) state lists and counts the tree decides, and those
// went stale by hand: architecture.md's list of the installer's modules missed seven of them,
// testing.md's table of e2e pins stopped at six of the hosts, and lint.md still said "two lines"
// keep a biome-ignore when six did. This file fails when such a list or count is not the tree's:
// - architecture.md, "The installer's modules": one entry per src/install/ module, none of a module
//   that is gone;
// - testing.md, "The newest hosts": every package of test/e2e/package.json, at its pin;
// - lint.md: the folders tsconfig.json includes, the one JavaScript file in them, and every file
//   that holds a biome-ignore comment, with their number.
// Figures that only a run can give (times, sizes) are written with their date instead.
// Each check has a control below that plants the drift it catches.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(import.meta.dir, "..");
const read = (rel: string): string => fs.readFileSync(path.join(ROOT, rel), "utf8");

/** section(markdown, "## The installer's modules") → the text from that heading to the next of its level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) return "";
  const level = heading.slice(0, heading.indexOf(" "));
  const end = markdown.indexOf(`\n${level} `, start + heading.length + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** filesUnder(["src"], [".js"]) → the repository paths of those folders' files with those endings, node_modules left out. */
function filesUnder(dirs: readonly string[], endings: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(child);
      } else if (entry.isFile() && endings.some((e) => entry.name.endsWith(e))) out.push(child);
    }
  };
  for (const dir of dirs) walk(dir);
  return out.sort();
}

/**
 * moduleListProblems(architecture page, entries of src/install/) → one line per module the list
 * leaves out and per name in it that matches nothing ("server-probe*.ts" stands for several).
 */
function moduleListProblems(page: string, entries: readonly string[]): string[] {
  const block = /```\n([\s\S]*?)```/.exec(section(page, "## The installer's modules"))?.[1] ?? "";
  const names = block
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => line.split(/\s{2,}/)[0]!.split(", "))
    .filter((name) => name !== ""); // a description's continuation line
  const matches = (name: string, entry: string) =>
    new RegExp(`^${name.replace(/[.]/g, "\\.").replace(/\*/g, "[\\w-]*")}$`).test(entry);
  return [
    ...entries.filter((e) => !names.some((n) => matches(n, e))).map((e) => `src/install/${e} is not in the list`),
    ...names.filter((n) => !entries.some((e) => matches(n, e))).map((n) => `${n} is listed but is no module`),
  ];
}

/**
 * installEntries() → src/install/'s modules as the list names them: a top-level module by its name,
 * one in a folder as `<folder>/<name>`, and the clients/ folder as itself (one module per client).
 */
function installEntries(): string[] {
  const entries = (rel: string) => fs.readdirSync(path.join(ROOT, "src", "install", rel), { withFileTypes: true });
  return entries("")
    .flatMap((e) => {
      if (e.isFile()) return e.name.endsWith(".ts") ? [e.name] : [];
      if (!e.isDirectory()) return [];
      if (e.name === "clients") return ["clients/"];
      return entries(e.name)
        .filter((m) => m.isFile() && m.name.endsWith(".ts"))
        .map((m) => `${e.name}/${m.name}`);
    })
    .sort();
}

/** pinProblems(testing page, the e2e package's dependencies) → one line per package the table lacks or pins otherwise. */
function pinProblems(page: string, pins: Readonly<Record<string, string>>): string[] {
  const rows = section(page, "## The newest hosts (`npm run e2e:latest`)")
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| ---"));
  return Object.entries(pins).flatMap(([name, version]) => {
    const row = rows.find((r) => r.includes(`\`${name}\``) || r.includes(`\`${name.split("/").at(-1)}\``));
    if (row === undefined) return [`${name} has no row`];
    return row.includes(version) ? [] : [`${name}'s row does not say ${version}`];
  });
}

const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

/** lintPageProblems(lint page, tsconfig's include, the JS files there, the files holding a biome-ignore, their lines) → what it misstates. */
function lintPageProblems(
  page: string,
  include: readonly string[],
  javascript: readonly string[],
  ignoring: ReadonlyMap<string, number>,
): string[] {
  const problems: string[] = [];
  const stated = /everything `tsconfig\.json` includes: ((?:`\w+`(?:,\s*)?)+)/.exec(page)?.[1]?.match(/\w+/g) ?? [];
  if ([...stated].sort().join(",") !== [...include].sort().join(","))
    problems.push(`tsconfig.json includes ${include.join(", ")}`);
  const oneFile = /the one\s+JavaScript file, `([^`]+)`/.exec(page)?.[1];
  if (javascript.length !== 1 || javascript[0] !== oneFile)
    problems.push(`the JavaScript files there are ${javascript.join(", ") || "none"}`);
  const lines = [...ignoring.values()].reduce((a, b) => a + b, 0);
  const count = /(\w+) lines? keeps? a flagged form with a `biome-ignore`/i.exec(page)?.[1]?.toLowerCase();
  if (count !== NUMBER_WORDS[lines]) problems.push(`${lines} lines hold a biome-ignore, the page says "${count}"`);
  for (const file of ignoring.keys())
    if (!page.includes(`\`${file}\``)) problems.push(`${file} holds a biome-ignore the page does not name`);
  return problems;
}

/** biomeIgnores(files) → each file holding a biome-ignore comment line, with how many it holds. */
function biomeIgnores(files: readonly string[]): Map<string, number> {
  const found = new Map<string, number>();
  for (const file of files) {
    const count = read(file).match(/^\s*\/\/\s*biome-ignore\b/gm)?.length ?? 0;
    if (count > 0) found.set(file, count);
  }
  return found;
}

describe("the development pages state what the tree holds", () => {
  const architecture = read("docs/development/architecture.md");
  const testing = read("docs/development/testing.md");
  const lint = read("docs/development/lint.md");
  const pins = (JSON.parse(read("test/e2e/package.json")) as { dependencies: Record<string, string> }).dependencies;
  const include = (JSON.parse(read("tsconfig.json")) as { include: string[] }).include;
  const sources = filesUnder(["src", "scripts", "test"], [".ts", ".js", ".mjs"]);
  const ignoring = biomeIgnores(sources);

  test("architecture.md lists every module of src/install/, and no other", () => {
    expect(installEntries()).toContain("pipeline.ts");
    expect(moduleListProblems(architecture, installEntries())).toEqual([]);
  });

  test("testing.md's table of the newest hosts has every e2e package at its pin", () => {
    expect(Object.keys(pins)).toContain("@anthropic-ai/claude-code");
    expect(pinProblems(testing, pins)).toEqual([]);
  });

  test("lint.md names the type-checked folders, their one JavaScript file and every biome-ignore", () => {
    expect(ignoring.size).toBeGreaterThan(0);
    const javascript = filesUnder(include, [".js", ".mjs", ".cjs"]);
    expect(lintPageProblems(lint, include, javascript, ignoring)).toEqual([]);
  });

  describe("controls: each kind of drift is caught", () => {
    test("a module missing from the list, and one listed that is gone", () => {
      expect(moduleListProblems(architecture, [...installEntries(), "new-step.ts"])).toEqual([
        "src/install/new-step.ts is not in the list",
      ]);
      expect(
        moduleListProblems(
          architecture,
          installEntries().filter((e) => e !== "files/lock.ts"),
        ),
      ).toEqual(["files/lock.ts is listed but is no module"]);
      // A glob stands for its modules; with none of them left it is stale too.
      const withoutProbes = installEntries().filter((e) => !e.startsWith("server/server-probe"));
      expect(moduleListProblems(architecture, withoutProbes)).toEqual([
        "server/server-probe*.ts is listed but is no module",
      ]);
    });

    test("a package without a row, and a pin the table does not state", () => {
      expect(pinProblems(testing, { ...pins, "@acme/new-agent": "1.0.0" })).toEqual(["@acme/new-agent has no row"]);
      expect(pinProblems(testing, { ...pins, "opencode-ai": "1.19.0" })).toEqual([
        "opencode-ai's row does not say 1.19.0",
      ]);
    });

    test("another include, a second JavaScript file, a biome-ignore in a file the page does not name", () => {
      const javascript = filesUnder(include, [".js", ".mjs", ".cjs"]);
      expect(lintPageProblems(lint, [...include, "npm"], javascript, ignoring)).toEqual([
        `tsconfig.json includes ${[...include, "npm"].join(", ")}`,
      ]);
      expect(lintPageProblems(lint, include, [...javascript, "scripts/x.mjs"], ignoring)).toHaveLength(1);
      const planted = new Map([...ignoring, ["src/core/guard.ts", 1]]);
      const problems = lintPageProblems(lint, include, javascript, planted);
      expect(problems).toHaveLength(2);
      expect(problems[0]).toMatch(/^\d+ lines hold a biome-ignore, the page says "\w+"$/);
      expect(problems[1]).toBe("src/core/guard.ts holds a biome-ignore the page does not name");
      expect(biomeIgnores(["test/dev-docs.test.ts"]).size).toBe(0);
    });
  });
});
