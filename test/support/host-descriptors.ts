// Every host's descriptor, for the tests: no module of src/ needs the table of all of them (a
// hook imports only its own host's descriptor, the installer each client's own), so it lives
// here, not in src/ (docs/development/architecture.md, "One descriptor per host").
import { CLAUDE } from "../../src/hosts/descriptors/claude.ts";
import { CODEBUDDY } from "../../src/hosts/descriptors/codebuddy.ts";
import { CODEX } from "../../src/hosts/descriptors/codex.ts";
import { COPILOT } from "../../src/hosts/descriptors/copilot.ts";
import type { HostDescriptor } from "../../src/hosts/descriptors/descriptor.ts";
import { DROID } from "../../src/hosts/descriptors/droid.ts";
import { DSH } from "../../src/hosts/descriptors/dsh.ts";
import { GEMINI } from "../../src/hosts/descriptors/gemini.ts";
import { KILO } from "../../src/hosts/descriptors/kilo.ts";
import { OPENCODE } from "../../src/hosts/descriptors/opencode.ts";
import { PI } from "../../src/hosts/descriptors/pi.ts";
import { QWEN } from "../../src/hosts/descriptors/qwen.ts";
import { WINDSURF } from "../../src/hosts/descriptors/windsurf.ts";

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
