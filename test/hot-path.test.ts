// SPEC §2/§12: a hook must not pay for code it does not run. `bun build --compile` emits one
// bundle and hoists every static import of a built-in module to its top, so one static
// `import … from "node:crypto"` anywhere (even in the lazily imported installer) is evaluated
// by every hook: measured at ~2 ms of a ~5 ms hook. This test bundles the entry the way the
// release build does and allows only the built-ins every hook needs at the top level.
import { expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "./support/hook-runner.ts";

const HOOK_PATH_BUILTINS = ["fs", "path"];

test("the bundle's top-level imports are only the built-ins every hook uses", () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-bundle-"));
  try {
    const result = Bun.spawnSync([process.execPath, "build", "--target=bun", "--format=esm", path.join(REPO_ROOT, "src", "cli.ts"), "--outdir", outdir]);
    expect(result.exitCode).toBe(0);
    const bundle = fs.readFileSync(path.join(outdir, "cli.js"), "utf8");
    const staticImports = [...bundle.matchAll(/^import\s+(?:[^"';]+?\s+from\s+)?["']([^"']+)["'];?$/gm)].map((m) => m[1]!.replace(/^node:/, ""));
    expect([...new Set(staticImports)].sort()).toEqual(HOOK_PATH_BUILTINS);
    // The installer's libraries are bundled but wrapped for lazy evaluation, never at top level.
    expect(bundle).toContain("jsonc-parser");
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
});
