// The host table: `velesdb-hooks <host> <event>` looks the host up here.
import { claude } from "./claude.ts";
import { codex } from "./codex.ts";
import type { HostModule } from "./host.ts";

export const HOSTS = {
  claude,
  codex,
} as const satisfies Record<string, HostModule>;

export type HostName = keyof typeof HOSTS;
