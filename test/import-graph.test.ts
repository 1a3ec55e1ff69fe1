// No module of src/, scripts/ or test/ reaches itself through its imports (docs/development/architecture.md,
// "No import circles"). A circle makes the order in which modules run depend on which one is
// loaded first (a value read before its module ran is undefined), and it ties modules a reader
// wants to understand one at a time. Type-only imports count: they tie the modules for a reader
// just the same, and `client.ts` ↔ `registry.ts` was such a circle (one side imported only a type).
// A lazy `import("…")` counts too: the module it names is still one the importer needs, and a lazy
// load back into a module that imports the loader is the same knot (scripts/bench.ts ↔
// bench-compress.ts was one). Imports are read by TypeScript's own pre-processor (imports,
// type-only ones, re-exports, `import("…")` with a literal), so an import in a comment or a
// string is not one.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dir, "..");
const ROOTS = ["src", "scripts", "test"] as const;
const SOURCE = /\.(?:ts|tsx|mts|cts|js|mjs)$/;

/** moduleFiles(root, folders) → every source file under those folders, outside node_modules, relative to root. */
function moduleFiles(root: string, folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders) {
    if (!fs.existsSync(path.join(root, folder))) continue;
    for (const file of new Bun.Glob(`${folder}/**/*`).scanSync({ cwd: root })) {
      if (
        SOURCE.test(file) &&
        !file.split(/[\\/]/).includes("node_modules") &&
        !file.endsWith(".d.ts") &&
        !file.endsWith(".d.mts")
      )
        found.push(file);
    }
  }
  return found.sort();
}

/** importGraph(root, files) → each file's relative imports that resolve to another of those files. */
function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(root, file), "utf8"), true, false);
    const targets = info.importedFiles
      .map((ref) => ref.fileName)
      .filter((spec) => spec.startsWith("./") || spec.startsWith("../"))
      .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** circles(graph) → every strongly connected set of two or more modules (or one importing itself), each as a path round it. */
function circles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm: one depth-first walk; a module whose lowest reachable index is its own closes a set.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const set: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      set.push(member);
    } while (member !== node);
    if (set.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(roundTrip(graph, set));
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** roundTrip(graph, set) → one path from the set's first module back to itself inside the set, for the message. */
function roundTrip(graph: Map<string, string[]>, set: readonly string[]): string[] {
  const members = new Set(set);
  const start = [...set].sort()[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const trail = [start];
        for (let at = node; at !== start; at = from.get(at)!) trail.splice(1, 0, at);
        return [...trail, start];
      }
      if (!from.has(target)) {
        from.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

/**
 * Which room of src/ may import which (docs/development/architecture.md, "Rooms"): core holds the
 * rules, state and texts and imports no other room; mcp (the shared front, broker and the hooks'
 * client of it) builds on core; hosts on both; stats reads core's records; install, loaded only by
 * its commands, builds on hosts (their descriptors) and stats; cli (src/cli.ts) may import any;
 * src/version.ts imports nothing and any room may import it. Its own room is always allowed.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  core: [],
  mcp: ["core"],
  hosts: ["core", "mcp"],
  stats: ["core"],
  install: ["core", "hosts", "stats"],
  cli: ["core", "mcp", "hosts", "stats", "install"],
};

/** roomOf("src/core/state.ts") → "core"; "src/cli.ts" → "cli"; "src/version.ts" → "version"; outside src/: undefined. */
function roomOf(file: string): string | undefined {
  const parts = file.split("/");
  if (parts[0] !== "src") return undefined;
  return parts.length === 2 ? parts[1]!.replace(/\.ts$/, "") : parts[1];
}

/** upwardImports(graph) → each import of src/ that goes to a room its room may not import, as "from → to". */
function upwardImports(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const room = roomOf(from);
    if (room === undefined) continue;
    for (const target of targets) {
      const to = roomOf(target);
      if (to === undefined || to === room || to === "version") continue;
      if (room === "version" || !(MAY_IMPORT[room] ?? []).includes(to)) found.push(`${from} → ${target}`);
    }
  }
  return found.sort();
}

describe("the rooms of src/", () => {
  test("every import of src/ goes to a room its own room may import", () => {
    const graph = importGraph(ROOT, moduleFiles(ROOT, ["src"]));
    // Positive control: the rooms are all there, with edges between them.
    expect(new Set([...graph.keys()].map(roomOf))).toEqual(new Set([...Object.keys(MAY_IMPORT), "version"]));
    expect(graph.get("src/mcp/front.ts")).toContain("src/core/mcp-runtime.ts");
    expect(upwardImports(graph)).toEqual([]);
  });

  test("catches planted upward imports (core → hosts, mcp → hosts, stats → install, from version.ts) and lets the allowed ones through", () => {
    const graph = new Map<string, string[]>([
      ["src/core/recall.ts", ["src/hosts/descriptors/claude.ts", "src/core/state.ts", "src/version.ts"]],
      ["src/mcp/front.ts", ["src/hosts/host.ts"]],
      ["src/stats/aggregate.ts", ["src/install/index.ts"]],
      ["src/version.ts", ["src/core/state.ts"]],
      ["src/hosts/host.ts", ["src/mcp/memory-client.ts", "src/core/decision.ts"]],
      ["src/cli.ts", ["src/install/index.ts"]],
    ]);
    expect(upwardImports(graph)).toEqual([
      "src/core/recall.ts → src/hosts/descriptors/claude.ts",
      "src/mcp/front.ts → src/hosts/host.ts",
      "src/stats/aggregate.ts → src/install/index.ts",
      "src/version.ts → src/core/state.ts",
    ]);
  });
});

describe("the import graph", () => {
  test("has no circle among the modules of src/, scripts/ and test/", { timeout: 30_000 }, () => {
    const files = moduleFiles(ROOT, ROOTS);
    const graph = importGraph(ROOT, files);
    // Positive control: the walk sees the tree and its edges (the pipeline imports the client table).
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get("src/install/pipeline.ts")).toContain("src/install/clients/index.ts");
    expect(circles(graph).map((trail) => trail.join(" → "))).toEqual([]);
  });

  test("catches a planted circle, a type-only one, a lazy one and a re-export, and ignores imports in comments and strings", () => {
    const box = fs.mkdtempSync(path.join(os.tmpdir(), "vh-import-graph-"));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(box, file)), { recursive: true });
        fs.writeFileSync(path.join(box, file), text);
      };
      write("src/a.ts", 'import { b } from "./deep/b.ts";\nexport const a = b;\n');
      write("src/deep/b.ts", 'import { c } from "../c.ts";\nexport const b = c;\n');
      write("src/c.ts", 'export { a } from "./a.ts";\nexport const c = 1;\n');
      write("scripts/types.ts", 'import type { T } from "./uses.ts";\nexport interface U { t?: T }\n');
      write("scripts/uses.ts", 'import type { U } from "./types.ts";\nexport type T = U;\n');
      write("test/lazy.ts", 'export const load = () => import("./back.ts");\n');
      write("test/back.ts", 'import { load } from "./lazy.ts";\nexport const again = load;\n');
      write("test/reexport.ts", 'export * from "./reexported.ts";\n');
      write("test/reexported.ts", 'import "./reexport.ts";\nexport const side = 1;\n');
      write(
        "test/quiet.ts",
        '// import { x } from "./quiet-other.ts";\nexport const text = \'import { y } from "./quiet-other.ts"\';\n',
      );
      write("test/quiet-other.ts", 'import { text } from "./quiet.ts";\nexport const x = text;\n');
      write("test/self.ts", 'import * as me from "./self.ts";\nexport const self = me;\n');
      const graph = importGraph(box, moduleFiles(box, ROOTS));
      expect(
        circles(graph)
          .map((trail) => trail.join(" → "))
          .sort(),
      ).toEqual([
        "scripts/types.ts → scripts/uses.ts → scripts/types.ts",
        "src/a.ts → src/deep/b.ts → src/c.ts → src/a.ts",
        "test/back.ts → test/lazy.ts → test/back.ts",
        "test/reexport.ts → test/reexported.ts → test/reexport.ts",
        "test/self.ts → test/self.ts",
      ]);
    } finally {
      fs.rmSync(box, { recursive: true, force: true });
    }
  });
});
