// Every pointer into the documentation resolves to something in this repository. Source,
// scripts and tests once cited "SPEC §N" and "issue N" — a contract and a tracker that were
// never in the repository — so a reader could follow none of them. Now they cite
// docs/contract.md §N or a docs/ page (with its #anchor), and this file fails when:
// - a file under src/, scripts/ or test/ (or fixtures/, targets/, npm/, the installers, CI, a
//   page under docs/, README.md) cites `SPEC`,
//   `issue N`, `STYLE §`/`STYLE point` or a `../shared/` path;
// - a `docs/….md` reference names a page that does not exist, an `#anchor` that is no heading
//   of that page, or a `§N` that is no numbered heading of it; a `§` that is not part of such a
//   reference (it would point nowhere);
// - a relative Markdown link in README.md or docs/ names a missing file or heading.
// Pages other branches are writing (PENDING) may be missing; once one exists it is checked
// like any other. Each rule has its control below: the checker is run on text that breaks it.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(import.meta.dir, "..");
/** docs/ pages other branches are writing; links to them are allowed before they land. */
const PENDING = new Set<string>();
const SOURCE_EXTENSIONS = new Set([".ts", ".js", ".mjs", ".sh", ".ps1", ".c", ".md"]);

/** filesUnder("src") → every source file below it, repository-relative, node_modules skipped. */
function filesUnder(dir: string, extensions: ReadonlySet<string> = SOURCE_EXTENSIONS): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(child);
      } else if (entry.isFile() && extensions.has(path.extname(entry.name))) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

/** slug("### 6.1 The guard") → "61-the-guard": GitHub's heading anchor (lower case, punctuation dropped, spaces to hyphens). */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

interface PageIndex {
  readonly anchors: ReadonlySet<string>;
  readonly sections: ReadonlySet<string>;
}

/** indexPage(markdown) → its heading anchors (GitHub's, duplicates numbered) and numbered sections ("6", "6.1"). */
export function indexPage(markdown: string): PageIndex {
  const anchors = new Set<string>();
  const sections = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
    const numbered = /^(\d+(?:\.\d+)*)\.?\s/.exec(heading[1]!);
    if (numbered) sections.add(numbered[1]!);
  }
  return { anchors, sections };
}

const pages = new Map<string, PageIndex | null>();
/** page("docs/contract.md") → its index, or null when the file does not exist. */
function page(rel: string): PageIndex | null {
  if (!pages.has(rel)) {
    const full = path.join(ROOT, rel);
    pages.set(rel, fs.existsSync(full) && fs.statSync(full).isFile() ? indexPage(fs.readFileSync(full, "utf8")) : null);
  }
  return pages.get(rel)!;
}

/** A docs reference in prose: `docs/contract.md §6.1, §6.5` or `docs/decisions.md#installer`. */
const DOCS_REFERENCE =
  /docs\/[\w./-]*\.md(#[\p{L}\p{N}_-]+)?((?:(?:\s*(?:,|\+|and|or|–|-|\/)\s*|\s+)§\d+(?:\.\d+)*)*)/gu;
const FORBIDDEN: ReadonlyArray<[RegExp, string]> = [
  [/\bSPEC\b/, "cites SPEC, which is not in the repository (use docs/contract.md §N)"],
  // "issue 12", "Issue #12", and the same broken over a line: a comment's leader (`//`, ` *`, `#`,
  // `--`) or a Markdown line break between the word and the number hid two citations from a
  // pattern that wanted one space.
  [
    /\bissues?[ \t]*(?:\r?\n[ \t]*(?:\/\/+|\*|#|--)?[ \t]*)?#?\d+/i,
    "cites an issue number, which is not in the repository (point at the docs/ page that explains it)",
  ],
  [/\bSTYLE (§|point)/, "cites STYLE, which is not in the repository"],
  [/\.\.\/shared\//, "points outside the repository (../shared/)"],
];

/**
 * referenceProblems(text, dir?) → one line per reference that does not resolve. `dir` is the
 * directory relative links start from (Markdown only); docs/… references are from the root.
 */
export function referenceProblems(text: string, markdownDir?: string): string[] {
  const problems: string[] = [];
  for (const [pattern, why] of FORBIDDEN) {
    const hit = pattern.exec(text);
    // JSON-quoted: a citation broken over a line is reported on one line.
    if (hit) problems.push(`${JSON.stringify(hit[0])} ${why}`);
  }
  let covered = text;
  for (const match of text.matchAll(DOCS_REFERENCE)) {
    const [whole, anchor, sectionList] = match;
    covered = covered.slice(0, match.index) + " ".repeat(whole.length) + covered.slice(match.index! + whole.length);
    const file = whole.slice(0, whole.indexOf(".md") + 3);
    const index = page(file);
    if (index === null) {
      if (!PENDING.has(file)) problems.push(`${whole}: ${file} does not exist`);
      continue;
    }
    if (anchor && !index.anchors.has(anchor.slice(1))) problems.push(`${whole}: ${file} has no heading ${anchor}`);
    for (const section of sectionList?.match(/\d+(?:\.\d+)*/g) ?? []) {
      if (!index.sections.has(section)) problems.push(`${whole}: ${file} has no section §${section}`);
    }
  }
  // Pages write "[contract §N](…)" as link text; a bare § in code or a comment points nowhere.
  const stray = markdownDir === undefined ? /§\s*\d+(?:\.\d+)*/.exec(covered) : null;
  if (stray) problems.push(`"${stray[0]}" is not part of a docs/….md reference, so it points nowhere`);
  if (markdownDir !== undefined) {
    let prose = "";
    let fenced = false;
    for (const line of text.split("\n")) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      else if (!fenced) prose += `${line.replace(/`[^`]*`/g, "")}\n`;
    }
    for (const link of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = link[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split("#", 2) as [string, string | undefined];
      const rel = file === "" ? undefined : path.posix.normalize(path.posix.join(markdownDir, file));
      if (rel?.startsWith("..")) {
        problems.push(`link ${target} leaves the repository`);
        continue;
      }
      if (rel !== undefined && !fs.existsSync(path.join(ROOT, rel))) {
        if (!PENDING.has(rel)) problems.push(`link ${target}: ${rel} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      const index = rel === undefined ? indexPage(text) : rel.endsWith(".md") ? page(rel) : null;
      if (index && !index.anchors.has(anchor)) problems.push(`link ${target}: no heading #${anchor} there`);
    }
  }
  return problems;
}

/** withoutOwnExamples(this file's text) → the text without the header, FORBIDDEN and the controls, which quote what they forbid. */
function withoutOwnExamples(text: string): string {
  return text
    .replace(/^[\s\S]*?\nconst ROOT/, "")
    .replace(/\nconst FORBIDDEN[\s\S]*?\n\];/, "")
    .replace(/\ndescribe\("the checker[\s\S]*$/, "");
}

/** Files outside src/, scripts/ and test/ that cite the contract too: installers, CI, fixtures. */
const OTHER_CITING_FILES = [
  "install.sh",
  "install.ps1",
  ".ci/run",
  ...fs.readdirSync(path.join(ROOT, ".github", "workflows")).map((f) => `.github/workflows/${f}`),
];

describe("source, scripts and tests point only at documentation in this repository", () => {
  const files = [
    ...["src", "scripts", "test", "fixtures", "targets", "npm"].flatMap((dir) => filesUnder(dir)),
    ...OTHER_CITING_FILES,
  ];

  test("there are files to check (positive control: the scan sees the code)", () => {
    expect(files).toContain("src/core/guard.ts");
    expect(files).toContain("test/docs-links.test.ts");
    expect(files).toContain("fixtures/payloads/README.md");
    expect(files).toContain(".github/workflows/release.yml");
    expect(files.some((f) => f.includes("node_modules"))).toBe(false);
  });

  test("no file cites a contract, tracker or path outside the repository, and every docs/ reference resolves", () => {
    const problems = files.flatMap((file) => {
      const text = fs.readFileSync(path.join(ROOT, file), "utf8");
      // This file names the forbidden forms in its header, its rules and its controls; the rest of it still counts.
      const checked = file === "test/docs-links.test.ts" ? withoutOwnExamples(text) : text;
      return referenceProblems(checked, file.endsWith(".md") ? path.posix.dirname(file) : undefined).map(
        (p) => `${file}: ${p}`,
      );
    });
    expect(problems).toEqual([]);
  });
});

describe("README.md and docs/ link only to files and headings that exist", () => {
  const pagesToCheck = ["README.md", ...filesUnder("docs", new Set([".md"]))];

  test("every page's relative links and docs/ references resolve", () => {
    expect(pagesToCheck).toContain("docs/contract.md");
    const problems = pagesToCheck.flatMap((file) =>
      referenceProblems(fs.readFileSync(path.join(ROOT, file), "utf8"), path.posix.dirname(file)).map(
        (p) => `${file}: ${p}`,
      ),
    );
    expect(problems).toEqual([]);
  });

  test("the contract's sections are numbered, so `docs/contract.md §N` can name them", () => {
    const contract = page("docs/contract.md")!;
    for (const section of [
      "1",
      "2",
      "3.1",
      "3.5",
      "4.1",
      "4.9",
      "5.1",
      "6.1",
      "6.5",
      "7",
      "8",
      "9",
      "10",
      "11",
      "12",
    ]) {
      expect(contract.sections.has(section)).toBe(true);
    }
  });

  test("README.md is a front page that keeps the two set-up commands word for word", () => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(150);
    const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(commands).toEqual(["npx velesdb-hooks install", "npm ci && npm test"]);
    // .ci/run runs the README's test command, word for word.
    expect(fs.readFileSync(path.join(ROOT, ".ci", "run"), "utf8")).toContain("npm ci && npm test");
  });
});

describe("the checker fails on what it must catch (controls)", () => {
  const cases: ReadonlyArray<[string, string, RegExp]> = [
    ["a SPEC citation", "// the guard (SPEC §6.1)", /cites SPEC/],
    ["an issue number", "// fixed in issue 19, item 2", /issue number/],
    ["an issue number with #", "// see Issue #19", /issue number/],
    ["an issue number after a line comment's break", "// measured in issue\n// 34, then", /issue number/],
    ["an issue number after a block comment's break", " * before rc.9, issue\n * 12). Bun", /issue number/],
    ["an issue number after a shell comment's break", "# as issue\n# #40 found", /issue number/],
    ["an issue number after a Markdown line break", "as issue\n40 showed", /issue number/],
    ["a STYLE citation", "// STYLE §6", /STYLE/],
    ["a path outside the repository", "// see ../shared/research/x.md", /outside the repository/],
    ["a missing page", "// see docs/no-such-page.md", /does not exist/],
    ["a missing anchor", "// see docs/decisions.md#no-such-heading", /no heading/],
    ["a missing section", "// docs/contract.md §6.9", /no section §6\.9/],
    ["a missing section in a list", "// docs/contract.md §6.1, §99", /no section §99/],
    ["a bare section sign", "// as §5.1 says", /points nowhere/],
  ];
  test.each(cases)("%s is reported", (_name, text, why) => {
    expect(referenceProblems(text).join("\n")).toMatch(why);
  });

  test("text that only looks like an issue citation passes (positive control)", () => {
    expect(referenceProblems("// the issue is the lock\n// 2 workers hold it")).toEqual([]);
    expect(referenceProblems("Known issues:\n\n1. none")).toEqual([]);
    expect(referenceProblems("tissue 12")).toEqual([]);
  });

  test("good references pass (positive control)", () => {
    expect(
      referenceProblems("// docs/contract.md §6.1, §6.5 and docs/decisions.md#installer; docs/doctor.md (pending)"),
    ).toEqual([]);
  });

  test("a Markdown link to a missing file or heading is reported, a good one is not", () => {
    expect(referenceProblems("[x](nowhere.md)", "docs").join("\n")).toMatch(/does not exist/);
    expect(referenceProblems("[x](contract.md#no-such)", "docs").join("\n")).toMatch(/no heading/);
    expect(referenceProblems("[x](../../etc/passwd)", "docs").join("\n")).toMatch(/leaves the repository/);
    expect(referenceProblems("[x](contract.md#61-the-guard) [y](hosts/claude.md) [z](#a)\n## A", "docs")).toEqual([]);
  });

  test("slugs are GitHub's", () => {
    expect(slug("3.2 Project identity: `.velesdb-hooks.json`")).toBe("32-project-identity-velesdb-hooksjson");
    expect(slug("What counts as a recall, per host (measured)")).toBe("what-counts-as-a-recall-per-host-measured");
    expect(indexPage("## A\n## A\n```\n## not a heading\n```").anchors).toEqual(new Set(["a", "a-1"]));
  });
});
