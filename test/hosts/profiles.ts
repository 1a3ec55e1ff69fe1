// The test profile of every host (test/hosts/profile.ts): one row per host folder, the same
// hosts as src/hosts/index.ts (the type says so: a host without a row fails the type check).
import type { HostName } from "../../src/hosts/index.ts";
import { CLAUDE_PROFILE } from "./claude/profile.ts";
import { CODEBUDDY_PROFILE } from "./codebuddy/profile.ts";
import { CODEX_PROFILE } from "./codex/profile.ts";
import { COPILOT_PROFILE } from "./copilot/profile.ts";
import { DROID_PROFILE } from "./droid/profile.ts";
import { DSH_PROFILE } from "./dsh/profile.ts";
import { GEMINI_PROFILE } from "./gemini/profile.ts";
import { KILO_PROFILE } from "./kilo/profile.ts";
import { OPENCODE_PROFILE } from "./opencode/profile.ts";
import { PI_PROFILE } from "./pi/profile.ts";
import type { HostTestProfile } from "./profile.ts";
import { QWEN_PROFILE } from "./qwen/profile.ts";
import { WINDSURF_PROFILE } from "./windsurf/profile.ts";

export const PROFILES: Readonly<Record<HostName, HostTestProfile>> = {
  claude: CLAUDE_PROFILE,
  codex: CODEX_PROFILE,
  windsurf: WINDSURF_PROFILE,
  dsh: DSH_PROFILE,
  gemini: GEMINI_PROFILE,
  copilot: COPILOT_PROFILE,
  qwen: QWEN_PROFILE,
  opencode: OPENCODE_PROFILE,
  droid: DROID_PROFILE,
  kilo: KILO_PROFILE,
  codebuddy: CODEBUDDY_PROFILE,
  pi: PI_PROFILE,
};

/** Every host, in the table's order. */
export const PROFILED_HOSTS = Object.keys(PROFILES) as HostName[];
