// The host table as the entry point uses it: `velesdb-hooks <host> <event>` loads only that
// host's module (a chunk of its own in the release build). src/hosts/index.ts is the same
// table loaded whole, for --help and the tests; test/hot-path.test.ts checks they agree.
// Evaluating every host (their functions, tables and patterns) in every hook would cost
// every hook their code (docs/performance/2026-12-02-io-floor.md).
//
// What every host module is built on is imported here, so the release build puts it in the
// entry's own chunk: the host interface, the recall-evidence rule's first step, the compression
// gates and the edit guard's opt-in walk, which nearly every tool event runs. Imported by the
// host modules alone, each was a chunk of its own that every hook loaded one by one: a
// Read's PostToolUse loaded nine chunks, and each chunk costs the engine heap blocks; past its
// 64th block the engine starts a thread that pre-faults more (JavaScriptCore's block warm-up),
// 3–5% of a hook's CPU. Here a hook loads three to six, and the commonest ones stay below the
// warm-up (test/hot-path.test.ts; docs/performance/2026-12-02-bench-guard.md).
import type { HostModule } from "./host.ts";
import "./host.ts";
import "./tool-events.ts";
import "../core/compress-gates.ts";
import "../core/guard.ts";

export const HOST_LOADERS: Readonly<Record<string, () => Promise<HostModule>>> = {
  claude: async () => (await import("./claude.ts")).claude,
  codex: async () => (await import("./codex.ts")).codex,
  windsurf: async () => (await import("./windsurf.ts")).windsurf,
  dsh: async () => (await import("./dsh.ts")).dsh,
  gemini: async () => (await import("./gemini.ts")).gemini,
  copilot: async () => (await import("./copilot.ts")).copilot,
  qwen: async () => (await import("./qwen.ts")).qwen,
  opencode: async () => (await import("./opencode.ts")).opencode,
  droid: async () => (await import("./droid.ts")).droid,
  kilo: async () => (await import("./kilo.ts")).kilo,
  codebuddy: async () => (await import("./codebuddy.ts")).codebuddy,
  pi: async () => (await import("./pi.ts")).pi,
};
