// Every host's descriptor, for the tests. A hook imports only its own host's descriptor
// (src/hosts/<host>.ts), never this table, and the installer takes each one through its host
// module (src/install/clients/<host>.ts imports CLAUDE from src/hosts/claude.ts, which
// re-exports it). That route is for the release build: a module that two lazily loaded parts
// reach by different paths gets a chunk of its own, so a descriptor the installer imported
// directly was one more module for every hook to load; through the host module it shares the
// hook module's chunk (docs/performance/2026-12-02-bench-guard.md, "Chunks and heap blocks").
import { CLAUDE } from "./claude.ts";
import { CODEBUDDY } from "./codebuddy.ts";
import { CODEX } from "./codex.ts";
import { COPILOT } from "./copilot.ts";
import type { HostDescriptor } from "./descriptor.ts";
import { DROID } from "./droid.ts";
import { DSH } from "./dsh.ts";
import { GEMINI } from "./gemini.ts";
import { KILO } from "./kilo.ts";
import { OPENCODE } from "./opencode.ts";
import { PI } from "./pi.ts";
import { QWEN } from "./qwen.ts";
import { WINDSURF } from "./windsurf.ts";

export const DESCRIPTORS: readonly HostDescriptor[] = [
  CLAUDE,
  CODEX,
  WINDSURF,
  DSH,
  GEMINI,
  COPILOT,
  QWEN,
  OPENCODE,
  DROID,
  KILO,
  CODEBUDDY,
  PI,
];

/** The PostToolUse timeout of each host that compresses shell output, in seconds (its descriptor's). */
export const POST_TOOL_USE_TIMEOUT_S = {
  claude: CLAUDE.events["post-tool-use"].timeoutS,
  codex: CODEX.events["post-tool-use"].timeoutS,
  copilot: COPILOT.events["post-tool-use"].timeoutS,
  opencode: OPENCODE.events["post-tool-use"].timeoutS,
  // The spawn bound of Kilo's plugin (OpenCode's) and of Pi's extension.
  kilo: KILO.events["post-tool-use"].timeoutS,
  pi: PI.events["post-tool-use"].timeoutS,
} as const;
