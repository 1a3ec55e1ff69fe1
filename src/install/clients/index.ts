// The client table: one row per agent the installer serves. Adding a client is its module in
// this directory (see client.ts for what it declares) and one row here; `--client all`, the
// detection of `install`, check, doctor and usage messages all read this table.
import { claude } from "./claude.ts";
import type { InstallerClient } from "../client.ts";
import { codebuddy } from "./codebuddy.ts";
import { codex } from "./codex.ts";
import { copilot } from "./copilot.ts";
import { droid } from "./droid.ts";
import { dsh } from "./dsh.ts";
import { gemini } from "./gemini.ts";
import { kilo } from "./kilo.ts";
import { opencode } from "./opencode.ts";
import { pi } from "./pi.ts";
import { qwen } from "./qwen.ts";
import { windsurf } from "./windsurf.ts";

export const CLIENTS: readonly InstallerClient[] = [
  claude,
  codex,
  windsurf,
  dsh,
  gemini,
  qwen,
  copilot,
  opencode,
  droid,
  kilo,
  codebuddy,
  pi,
];

export type ClientName = string;

export const CLIENT_NAMES: readonly ClientName[] = CLIENTS.map((client) => client.name);

/** clientNamed("codex") → that client's module (names come from the table, so it exists). */
export function clientNamed(name: ClientName): InstallerClient {
  const client = CLIENTS.find((c) => c.name === name);
  if (!client) throw new Error(`no installer client named ${JSON.stringify(name)}`);
  return client;
}

export type { InstallerClient } from "../client.ts";
