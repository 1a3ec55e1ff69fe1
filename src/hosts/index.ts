// The host table, every host loaded: --help lists it, tests use it. `velesdb-hooks <host>
// <event>` looks its host up in the lazy twin, src/hosts/loaders.ts, which must name the same hosts.
import { claude } from "./claude.ts";
import { codebuddy } from "./codebuddy.ts";
import { codex } from "./codex.ts";
import { copilot } from "./copilot.ts";
import { droid } from "./droid.ts";
import { dsh } from "./dsh.ts";
import { gemini } from "./gemini.ts";
import type { HostModule } from "./host.ts";
import { kilo } from "./kilo.ts";
import { opencode } from "./opencode.ts";
import { pi } from "./pi.ts";
import { qwen } from "./qwen.ts";
import { windsurf } from "./windsurf.ts";

export const HOSTS = {
  claude,
  codex,
  windsurf,
  dsh,
  gemini,
  copilot,
  qwen,
  opencode,
  droid,
  kilo,
  codebuddy,
  pi,
} as const satisfies Record<string, HostModule>;

export type HostName = keyof typeof HOSTS;
