// The hosts the package says it serves are the hosts the code serves. package.json said four and
// the npm packages seven while the host table held nine; now both descriptions are built from the
// table (scripts/host-names.ts), and this file fails when package.json, the packed npm manifests,
// the installer's client table, the README's host table or docs/hosts/ name other hosts than
// src/hosts/index.ts does. The npm packages are packed for real (scripts/npm-packages.ts) and
// read back from their tarballs.
//
// The docs follow the descriptor table (test/support/host-descriptors.ts) too. Three hosts after
// Kilo Code, CodeBuddy Code and Pi landed, docs/contract.md still said "nine hosts" and had no
// section for them, and their pages had an outline of their own. So this file also fails unless
// docs/contract.md §4 holds one numbered section per host and no other, each docs/hosts/ page
// follows the common outline and links its own section there, and the README's table and
// docs/index.md hold one entry per host. Each check has a control that plants the drift it catches.
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DESCRIPTORS } from "./support/host-descriptors.ts";
import { HOSTS, type HostName } from "../src/hosts/index.ts";
import { CLIENT_NAMES } from "../src/install/clients/index.ts";
import { HOST_PRODUCTS, hostProducts, PACKAGE_JSON, packageDescription } from "../scripts/host-names.ts";
import { packMainPackage, packPlatformPackage } from "../scripts/npm-packages.ts";
import { RELEASE_TARGETS } from "../targets/matrix.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "vh-host-names-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** missingProducts(text) → the product names of the host table that the text does not mention. */
function missingProducts(text: string): string[] {
  return hostProducts().filter((name) => !text.includes(name));
}

/** packedFile(tarball, "package/package.json") → that entry's text, read with tar(1). */
function packedFile(tarball: string, entry: string): string {
  const run = Bun.spawnSync(["tar", "-xzOf", tarball, entry]);
  if (run.exitCode !== 0) throw new Error(`tar -xzOf ${tarball} ${entry}: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

describe("one host table", () => {
  test("every host of src/hosts/index.ts has a product name, and the installer serves the same hosts", () => {
    expect(Object.keys(HOST_PRODUCTS).sort()).toEqual(Object.keys(HOSTS).sort());
    expect([...CLIENT_NAMES].sort()).toEqual(Object.keys(HOSTS).sort());
  });

  test("the description names every host, in the table's order", () => {
    const description = packageDescription();
    expect(missingProducts(description)).toEqual([]);
    const positions = hostProducts().map((name) => description.indexOf(name));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  test("control: a description that leaves a host out is caught", () => {
    const withoutDroid = packageDescription().replace("Factory Droid, ", "");
    expect(missingProducts(withoutDroid)).toEqual(["Factory Droid"]);
    // package.json as it was before the table decided it: four hosts.
    expect(missingProducts("… for Claude Code, Codex, Windsurf and the DeepSeek harness.")).toHaveLength(9);
  });
});

describe("the metadata says what the table says", () => {
  test("package.json's description is the table's (bun scripts/host-names.ts --write)", () => {
    expect(JSON.parse(fs.readFileSync(PACKAGE_JSON, "utf8")).description).toBe(packageDescription());
  });

  test("the packed npm packages carry the same description, in package.json and the launcher's README", () => {
    const npmDir = path.join(scratch, "npm");
    const launcher = packMainPackage(
      fs.readFileSync(path.join(ROOT, "npm", "launcher.js"), "utf8"),
      "0.0.0-test",
      undefined,
      npmDir,
    );
    expect(JSON.parse(packedFile(launcher.path, "package/package.json")).description).toBe(packageDescription());
    expect(packedFile(launcher.path, "package/README.md")).toContain(packageDescription());
    const target = RELEASE_TARGETS[0]!;
    const platform = packPlatformPackage(target, PACKAGE_JSON, "0.0.0-test", undefined, npmDir);
    expect(JSON.parse(packedFile(platform.path, "package/package.json")).description).toBe(packageDescription());
  });

  test("the README's host table links one page per host, and docs/hosts/ holds exactly those pages", () => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const table = readme.slice(readme.indexOf("## Hosts"), readme.indexOf("\n## ", readme.indexOf("## Hosts") + 1));
    for (const host of Object.keys(HOSTS)) expect(table).toContain(`](docs/hosts/${host}.md)`);
    expect(
      missingProducts(
        table
          .replaceAll("Windsurf Cascade", "Windsurf")
          .replaceAll("DeepSeek harness", "the DeepSeek harness")
          .replaceAll("Pi coding agent", "the Pi coding agent"),
      ),
    ).toEqual([]);
    const pages = fs
      .readdirSync(path.join(ROOT, "docs", "hosts"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => f.slice(0, -3));
    expect(pages.sort()).toEqual(Object.keys(HOSTS).sort());
  });
});

/** The descriptor table's hosts, in its order (test/support/host-descriptors.ts). */
const DESCRIBED = DESCRIPTORS.map((d) => d.name as HostName);
/** shortProduct("claude") → "Claude Code": the product name as a heading or a table cell writes it, without "the ". */
const shortProduct = (host: HostName): string => HOST_PRODUCTS[host].replace(/^the /, "");

/** hostsNamedBy("4.3 Windsurf Cascade") → ["windsurf"]: every host whose product name the text holds. */
function hostsNamedBy(text: string): HostName[] {
  return DESCRIBED.filter((host) => text.includes(shortProduct(host)));
}

/** headings(markdown, 2) → the text of every `## …` heading outside code fences, in order. */
function headings(markdown: string, level: number): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : new RegExp(`^#{${level}}\\s+(.*?)\\s*$`).exec(line);
    if (heading) out.push(heading[1]!);
  }
  return out;
}

/** contractHostSections(contract) → {"4.1": "Claude Code", …}: the numbered subsections of `## 4. Hosts`. */
function contractHostSections(contract: string): Map<string, string> {
  const start = contract.indexOf("\n## 4. Hosts");
  const end = contract.indexOf("\n## 5.", start);
  const sections = new Map<string, string>();
  if (start < 0 || end < 0) return sections;
  for (const heading of headings(contract.slice(start, end), 3)) {
    const numbered = /^(4\.\d+)\s+(.*)$/.exec(heading);
    if (numbered) sections.set(numbered[1]!, numbered[2]!);
  }
  return sections;
}

/** contractProblems(contract) → one line per host without its own section under Hosts, and per section of no host or several. */
function contractProblems(contract: string): string[] {
  const problems: string[] = [];
  const covered = new Map<HostName, string[]>();
  for (const [number, title] of contractHostSections(contract)) {
    const named = hostsNamedBy(title);
    if (named.length !== 1) problems.push(`section ${number} "${title}" names ${named.length} hosts of the table`);
    for (const host of named) covered.set(host, [...(covered.get(host) ?? []), number]);
  }
  for (const host of DESCRIBED) {
    const numbers = covered.get(host) ?? [];
    if (numbers.length !== 1)
      problems.push(`${host} has ${numbers.length} sections under Hosts (${numbers.join(", ")})`);
  }
  return problems;
}

/** argvNamesMissing(contract) → the hosts whose argv name the contract's "Hosts are the keys …" bullet leaves out. */
function argvNamesMissing(contract: string): HostName[] {
  const bullet = /- Hosts are the keys of the host table[\s\S]*?\n- /.exec(contract)?.[0] ?? "";
  return DESCRIBED.filter((host) => !bullet.includes(`\`${host}\``));
}

/** The `##` outline of docs/hosts/<host>.md; the recall-evidence section is left out where the host hands nothing of its own. */
const HOST_PAGE_OUTLINE = [
  "Events",
  "What it gets, what is weaker, and why",
  "How the host behaves, and what follows for the hooks",
  "What it hands the recall-evidence hook",
  "Compression",
  "The velesdb-memory MCP server",
  "See also",
] as const;
const OPTIONAL_SECTION = "What it hands the recall-evidence hook";

/** hostPageProblems(host, page, contract) → one line per way docs/hosts/<host>.md leaves the common outline. */
function hostPageProblems(host: HostName, page: string, contract: string): string[] {
  const problems: string[] = [];
  const title = headings(page, 1)[0] ?? "";
  if (!title.startsWith(shortProduct(host)) || !title.endsWith(` (\`${host}\`)`))
    problems.push(`title "${title}" is not "${shortProduct(host)}… (\`${host}\`)"`);
  if (!/^Measured on: /m.test(page)) problems.push('no "Measured on:" line');
  if (!new RegExp(`^\`\`\`sh\nvelesdb-hooks install --client ${host}( [^\n]*)?\n\`\`\`$`, "m").test(page))
    problems.push(`no \`velesdb-hooks install --client ${host}\` block`);
  const outline = headings(page, 2);
  const expected = HOST_PAGE_OUTLINE.filter((h) => h !== OPTIONAL_SECTION || outline.includes(OPTIONAL_SECTION));
  if (outline.join(" | ") !== expected.join(" | ")) problems.push(`sections ${JSON.stringify(outline)}`);
  if (!page.includes(`| \`${host}\` |`)) problems.push(`the Events table has no \`${host}\` row`);
  const seeAlso = page.slice(page.indexOf("\n## See also"));
  const link = /\[contract §(4\.\d+)\]\(\.\.\/contract\.md#(\d+)-[^)]*\)/.exec(seeAlso);
  const own = [...contractHostSections(contract)].find(([, t]) => hostsNamedBy(t).includes(host))?.[0];
  if (!link || own === undefined || link[1] !== own || link[2] !== own.replace(".", ""))
    problems.push(`See also does not link its own section, contract section ${own ?? "(none)"}`);
  return problems;
}

/** tableRowHosts(readme) → the host page each row of the README's host table links, in order. */
function tableRowHosts(readme: string): string[] {
  const start = readme.indexOf("\n## Hosts");
  const end = readme.indexOf("\n## ", start + 1);
  return [...readme.slice(start, end).matchAll(/^\| \[[^\]]+\]\(docs\/hosts\/([\w-]+)\.md\) \|/gm)].map((m) => m[1]!);
}

/** indexHosts(index) → the host page each link of docs/index.md's Hosts section names. */
function indexHosts(index: string): string[] {
  const start = index.indexOf("\n## Hosts");
  const end = index.indexOf("\n## ", start + 1);
  return [...index.slice(start, end).matchAll(/\]\(hosts\/([\w-]+)\.md\)/g)].map((m) => m[1]!);
}

const read = (rel: string): string => fs.readFileSync(path.join(ROOT, rel), "utf8");

describe("the docs list the hosts of the descriptor table", () => {
  const contract = read("docs/contract.md");

  test("the descriptor table holds the host table's hosts, in its order", () => {
    expect(DESCRIBED).toEqual(Object.keys(HOSTS) as HostName[]);
  });

  test("docs/contract.md §4 has one numbered section per host and none of another", () => {
    expect(contractHostSections(contract).size).toBe(DESCRIBED.length);
    expect(contractProblems(contract)).toEqual([]);
  });

  test("docs/contract.md §2 lists every host's argv name", () => {
    expect(argvNamesMissing(contract)).toEqual([]);
  });

  test("every docs/hosts/ page follows the common outline and links its own contract section", () => {
    const problems = DESCRIBED.flatMap((host) =>
      hostPageProblems(host, read(`docs/hosts/${host}.md`), contract).map((p) => `docs/hosts/${host}.md: ${p}`),
    );
    expect(problems).toEqual([]);
  });

  test("the README's host table has one row per host, and docs/index.md one link per host", () => {
    expect(tableRowHosts(read("README.md")).sort()).toEqual([...DESCRIBED].sort());
    expect(indexHosts(read("docs/index.md")).sort()).toEqual([...DESCRIBED].sort());
  });

  describe("controls: each kind of drift is caught", () => {
    test("a host without its contract section, and a section of no host", () => {
      const withoutPi = contract.replace("### 4.12 Pi coding agent", "### 4.12 Another agent");
      expect(contractProblems(withoutPi)).toEqual([
        'section 4.12 "Another agent" names 0 hosts of the table',
        "pi has 0 sections under Hosts ()",
      ]);
      const twice = contract.replace("### 4.10 Kilo Code", "### 4.10 OpenCode");
      expect(contractProblems(twice)).toContain("opencode has 2 sections under Hosts (4.8, 4.10)");
      // The contract as it was: nine sections.
      const nine = contract.replace(/\n### 4\.1[0-2] [\s\S]*?(?=\n## 5\.)/, "\n");
      expect(contractHostSections(nine).size).toBe(9);
      expect(contractProblems(nine)).toEqual([
        "kilo has 0 sections under Hosts ()",
        "codebuddy has 0 sections under Hosts ()",
        "pi has 0 sections under Hosts ()",
      ]);
    });

    test("a host the command-line section leaves out", () => {
      expect(argvNamesMissing(contract.replace(", `kilo`, `codebuddy`, `pi`", ""))).toEqual([
        "kilo",
        "codebuddy",
        "pi",
      ]);
    });

    test("a page in another outline, with another title, or linking another host's section", () => {
      const page = read("docs/hosts/kilo.md");
      expect(hostPageProblems("kilo", page, contract)).toEqual([]);
      // The outline the three newest pages had.
      const other =
        "# Kilo Code CLI\n\nKilo.\n\n## Install\n\n```sh\nvelesdb-hooks install --client kilo\n```\n\n## What you get\n";
      const problems = hostPageProblems("kilo", other, contract).join("\n");
      expect(problems).toMatch(/title "Kilo Code CLI"/);
      expect(problems).toMatch(/no "Measured on:" line/);
      expect(problems).toMatch(/sections \["Install","What you get"\]/);
      expect(problems).toMatch(/no `kilo` row/);
      expect(problems).toMatch(/does not link its own section, contract section 4\.10/);
      expect(
        hostPageProblems(
          "kilo",
          page.replace("(../contract.md#410-kilo-code)", "(../contract.md#48-opencode)"),
          contract,
        ),
      ).toEqual(["See also does not link its own section, contract section 4.10"]);
      expect(
        hostPageProblems("kilo", page.replace("\n## Compression\n", "\n## Offline notes\n"), contract),
      ).toHaveLength(1);
    });

    test("a README row or index link too few or too many", () => {
      const readme = read("README.md");
      const row = readme.split("\n").find((line) => line.startsWith("| [Pi coding agent]"))!;
      expect(tableRowHosts(readme.replace(`${row}\n`, "")).sort()).not.toEqual([...DESCRIBED].sort());
      expect(tableRowHosts(readme.replace(row, `${row}\n${row}`))).toHaveLength(DESCRIBED.length + 1);
      const index = read("docs/index.md");
      expect(indexHosts(index.replace(" · [Pi coding agent](hosts/pi.md)", "")).sort()).not.toEqual(
        [...DESCRIBED].sort(),
      );
    });
  });
});
