// The hosts the package says it serves are the hosts the code serves. package.json said four and
// the npm packages seven while the host table held nine; now both descriptions are built from the
// table (scripts/host-names.ts), and this file fails when package.json, the packed npm manifests,
// the installer's client table, the README's host table or docs/hosts/ name other hosts than
// src/hosts/index.ts does. The npm packages are packed for real (scripts/npm-packages.ts) and
// read back from their tarballs.
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { HOSTS } from "../src/hosts/index.ts";
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
