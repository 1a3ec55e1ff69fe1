// install.ps1 (docs/contract.md §11) on this Linux machine, where no PowerShell runs: its syntax is checked
// with a real PowerShell grammar (tree-sitter-powershell), each check next to a positive control
// that proves the grammar catches the mistake; its shape keeps a cut-short download from
// running anything; and what it looks for in SHA256SUMS is what the release build names. The
// script itself runs for real in the release workflow, on a Windows runner, against the
// just-built assets (.github/workflows/release.yml).
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { assetName, RELEASE_TARGETS } from "../targets/matrix.ts";
import { parsePowerShell } from "./support/powershell-grammar.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const SCRIPT = fs.readFileSync(path.join(ROOT, "install.ps1"), "utf8");
const LINES = SCRIPT.split("\n");
const LAST_CALL =
  "Invoke-VelesdbHooksInstaller -Version $Version -Client $Client -Uninstall $Uninstall.IsPresent -AddToPath $AddToPath.IsPresent -EndOfScript";

describe("install.ps1 parses as PowerShell", () => {
  test("the script has no syntax error", async () => {
    expect((await parsePowerShell(SCRIPT)).errors).toEqual([]);
  });

  // Positive controls: the same script with one mistake each; the grammar must see every one.
  // (It is more lenient than PowerShell's own parser in places, e.g. it accepts a `try` with
  // neither catch nor finally; the release workflow's run on Windows is the final word.)
  test.each([
    ["a closing brace removed", (s: string) => s.replace("\n}\n\nfunction Write-Step", "\n\nfunction Write-Step")],
    [
      "an unterminated string",
      (s: string) => s.replace('Write-Host "velesdb-hooks: $Message"', 'Write-Host "velesdb-hooks: $Message'),
    ],
    [
      "an if without its closing parenthesis",
      (s: string) => s.replace("if ($found.Count -eq 0) {", "if ($found.Count -eq 0 {"),
    ],
    ["a param block left open", (s: string) => s.replace("    [switch] $AddToPath\n)", "    [switch] $AddToPath\n")],
    ["a stray closing brace", (s: string) => s.replace("function Get-UserPath {", "}\nfunction Get-UserPath {")],
    ["a hashtable left open", (s: string) => s.replace("Version = $Matches[3] }", "Version = $Matches[3]")],
  ])("control: %s is a syntax error", async (_label, mutate) => {
    const broken = mutate(SCRIPT);
    expect(broken).not.toBe(SCRIPT); // the mutation applied
    expect((await parsePowerShell(broken)).errors.length).toBeGreaterThan(0);
  });
});

describe("a cut-short download runs nothing", () => {
  test("top level: the param block, function definitions, and one call on the last line", async () => {
    expect(shapeProblems((await parsePowerShell(SCRIPT)).statements)).toEqual([]);
    expect(SCRIPT.endsWith(`\n${LAST_CALL}\n`)).toBe(true);
    // The called function does nothing unless the call reached its last word.
    expect(SCRIPT).toContain("    if (-not $EndOfScript) { return } # the script's last line was cut short\n");
  });

  test.each([
    [
      "a command between two functions",
      (s: string) =>
        s.replace("\nfunction Write-Step", '\nRemove-Item -Recurse "$HOME\\.velesdb-hooks"\nfunction Write-Step'),
    ],
    [
      "an assignment at the top",
      (s: string) =>
        s.replace("\nfunction Get-DefaultRepo", '\n$ProgressPreference = "SilentlyContinue"\nfunction Get-DefaultRepo'),
    ],
    ["the last call without -EndOfScript", (s: string) => s.replace(" -EndOfScript\n", "\n")],
  ])("control: %s breaks the shape", async (_label, mutate) => {
    const changed = mutate(SCRIPT);
    expect(changed).not.toBe(SCRIPT);
    expect(shapeProblems((await parsePowerShell(changed)).statements).length).toBeGreaterThan(0);
  });

  test("every prefix at a line boundary either fails to parse or holds no command; control: the whole script holds the call", async () => {
    const commands: string[] = [];
    for (let n = 0; n < LINES.length - 2; n++) {
      const prefix = `${LINES.slice(0, n).join("\n")}\n`;
      const parsed = await parsePowerShell(prefix);
      if (parsed.errors.length > 0) continue; // PowerShell refuses the whole text: nothing runs
      const run = parsed.statements.filter((s) => s.type !== "param_block" && s.type !== "function_statement");
      if (run.length > 0) commands.push(`${n}: ${run.map((s) => s.text).join(" | ")}`);
    }
    expect(commands).toEqual([]);
    const whole = await parsePowerShell(SCRIPT);
    expect(whole.statements.filter((s) => s.type === "pipeline")).toHaveLength(1);
  });
});

/** shapeProblems(statements) → what is at the top level besides the param block, functions and the one last call. */
function shapeProblems(statements: ReadonlyArray<{ type: string; text: string }>): string[] {
  const problems: string[] = [];
  if (statements[0]?.type !== "param_block") problems.push(`first: ${statements[0]?.type} (not the param block)`);
  for (const s of statements.slice(1, -1)) if (s.type !== "function_statement") problems.push(`${s.type}: ${s.text}`);
  const last = statements.at(-1);
  if (last?.type !== "pipeline" || last.text !== LAST_CALL) problems.push(`last: ${last?.type}: ${last?.text}`);
  return problems;
}

describe("what install.ps1 asks for is what the release provides", () => {
  const pattern = () => {
    const match = SCRIPT.match(/\$line -notmatch '([^']+)'/);
    if (!match) throw new Error("install.ps1's SHA256SUMS line pattern was not found");
    return new RegExp(match[1]!);
  };

  test.each([
    [`${"a".repeat(64)}  ${assetName("0.1.0", RELEASE_TARGETS.find((t) => t.os === "windows")!)}`, "0.1.0"],
    [`${"A".repeat(64)} *${assetName("1.2.3-rc.1", RELEASE_TARGETS.find((t) => t.os === "windows")!)}`, "1.2.3-rc.1"],
  ])("SHA256SUMS line %p is the Windows archive of %s", (line, version) => {
    const match = line.match(pattern());
    expect(match?.[3]).toBe(version);
  });

  test.each(RELEASE_TARGETS.filter((t) => t.os !== "windows").map((t) => [t.id, t] as const))(
    "control: the %s archive is not picked",
    (_id, target) => {
      expect(`${"a".repeat(64)}  ${assetName("0.1.0", target)}`).not.toMatch(pattern());
    },
  );

  test("the binary it extracts and runs is the one the Windows archive holds, and the stable path is the installer's", () => {
    expect(SCRIPT).toContain('$binary = Join-Path $Directory "velesdb-hooks.exe"');
    expect(SCRIPT).toContain('return Join-Path (Join-Path $tree "bin") "velesdb-hooks.exe"');
    const paths = fs.readFileSync(path.join(ROOT, "src", "install", "paths.ts"), "utf8");
    expect(paths).toContain(
      'path.join(tree.path, "bin", ctx.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks")',
    );
  });

  test("plain http only to this machine; TLS 1.2 asked for; the user PATH changed only with -AddToPath, and kept unexpanded", () => {
    expect(SCRIPT).toContain("if ($Url -match '^https://') { return }");
    expect(SCRIPT).toContain("if ($Url -match '^http://(127\\.0\\.0\\.1|localhost|\\[::1\\])(:[0-9]+)?/') { return }");
    expect(SCRIPT).toContain("[Net.ServicePointManager]::SecurityProtocol = $protocols");
    // The user PATH is written in one place (raw, keeping REG_EXPAND_SZ), reached only from
    // Add-UserPath (with -AddToPath) and Remove-UserPath (on uninstall, once the binary is gone).
    expect(SCRIPT).not.toContain('SetEnvironmentVariable("Path"');
    expect(LINES.filter((line) => line.includes('$key.SetValue("Path"'))).toHaveLength(1);
    expect(LINES.filter((line) => /^\s+Set-UserPath /.test(line))).toHaveLength(2);
    expect(SCRIPT).toContain("    if ($AddToPath) {\n        Add-UserPath $binDir");
    expect(LINES.filter((line) => /^\s+(Add|Remove)-UserPath /.test(line))).toHaveLength(2);
  });
});
