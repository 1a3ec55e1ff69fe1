// The host table as the entry point uses it: `velesdb-hooks <host> <event>` loads only that
// host's module (a chunk of its own in the release build). src/hosts/index.ts is the same
// table loaded whole, for --help and the tests; test/hot-path.test.ts checks they agree.
// Evaluating all nine hosts (their functions, tables and patterns) in every hook grew its heap
// past the size where the engine starts a memory warm-up thread, ~0.8 ms of CPU
// (docs/performance/2026-12-02-io-floor.md). Kept apart when the sub-millisecond splits were
// folded back: its saving is above that half-millisecond, on every hook of every host
// (docs/performance/2026-12-02-fold-backs.md).
import type { HostModule } from "./host.ts";

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
