// Codex trust (docs/contract.md §4.2, research e2e-recipes.md). Codex runs a non-managed hook only after
// the user approved its exact definition in /hooks; the approval is stored in config.toml as
// `[hooks.state."<file>:<event_label>:<group>:<handler>"] trusted_hash = "sha256:<hex>"`, and
// a hook whose current hash differs is skipped without a word. doctor recomputes that hash the
// way Codex does, so "my hook never fires" has a visible cause. We never write approvals.
//
// The hash is sha256 over the canonical JSON (sorted keys, compact, null fields dropped) of
// `{event_name, matcher?, hooks: [{type, command, timeout, async, statusMessage?}]}` for the one
// handler; `timeout` defaults to 600 and `async` to false; Stop and UserPromptSubmit drop the
// matcher. Checked against `codex app-server` hooks/list on codex-cli 0.169.0 (test/doctor-trust
// pins those measured hashes). `commandWindows` is not part of it on POSIX; on Windows we hash
// the command Codex would run there, which was not measured.
import * as path from "node:path";
import TOML from "@iarna/toml";
import { z } from "zod";
import { canonicalJson, isJsonObject } from "../entries/entries.ts";
import { readBoundedFile } from "../../core/bounded-read.ts";
import type { OwnedEntry } from "../entries/entries.ts";
import { ownedEntries } from "../entries/owned-entries.ts";
import { MAX_READ_BYTES } from "../files/safe-read.ts";

const EVENTS_WITHOUT_MATCHER = new Set(["Stop", "UserPromptSubmit"]);
const DEFAULT_TIMEOUT_SECONDS = 600;

/** eventLabel("PreToolUse") → "pre_tool_use", the spelling of trust keys. */
export const eventLabel = (wireEvent: string): string =>
  wireEvent.replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase();

/** trustKey(file, "Stop", 0, 1) → "<file>:stop:0:1". */
export const trustKey = (file: string, wireEvent: string, group: number, handler: number): string =>
  `${file}:${eventLabel(wireEvent)}:${group}:${handler}`;

/** trustHash("PreToolUse", "^x$", handler) → "sha256:<hex>", as Codex computes it for that one handler. */
export function trustHash(
  wireEvent: string,
  matcher: unknown,
  handler: Record<string, unknown>,
  platform: NodeJS.Platform = process.platform,
): string {
  const command =
    platform === "win32" && typeof handler.commandWindows === "string" ? handler.commandWindows : handler.command;
  const identity: Record<string, unknown> = {
    event_name: eventLabel(wireEvent),
    hooks: [
      {
        type: handler.type ?? "command",
        command,
        timeout: handler.timeout ?? DEFAULT_TIMEOUT_SECONDS,
        async: handler.async ?? false,
        statusMessage: handler.statusMessage ?? handler.status_message,
      },
    ],
  };
  if (typeof matcher === "string" && !EVENTS_WITHOUT_MATCHER.has(wireEvent)) identity.matcher = matcher;
  // Bun's hasher, not node:crypto: a static built-in import would be evaluated by every hook.
  return `sha256:${new Bun.CryptoHasher("sha256").update(canonicalJson(identity)).digest("hex")}`;
}

const TrustState = z.object({ trusted_hash: z.string().optional(), enabled: z.boolean().optional() });
const TrustStates = z.record(z.string(), z.unknown());

export type CodexConfig =
  | { readonly kind: "absent"; readonly path: string }
  | { readonly kind: "unreadable"; readonly path: string; readonly problem: string }
  | {
      readonly kind: "present";
      readonly path: string;
      readonly trust: ReadonlyMap<string, z.infer<typeof TrustState>>;
      /** The `[hooks]` event tables (everything under `hooks` but `state`). */
      readonly hooks: Record<string, unknown>;
    };

/** codexConfigPath(codexHome) → <codex home>/config.toml, where Codex keeps trust and [hooks] tables. */
export const codexConfigPath = (codexHome: string): string => path.join(codexHome, "config.toml");

/** readCodexConfig(codexHome) → config.toml's trust states and [hooks] tables; a parse error gives only its line. */
export function readCodexConfig(codexHome: string): CodexConfig {
  const file = codexConfigPath(codexHome);
  // Codex follows a linked config.toml (dotfile managers link it), so do we, to a regular file only.
  const read = readBoundedFile(file, MAX_READ_BYTES, { followLink: true });
  if (!read.ok)
    return read.code === "ENOENT"
      ? { kind: "absent", path: file }
      : { kind: "unreadable", path: file, problem: read.problem };
  const text = read.bytes.toString("utf8");
  let parsed: Record<string, unknown>;
  try {
    parsed = TOML.parse(text) as Record<string, unknown>;
  } catch (error) {
    // The parser's message quotes the offending lines; only the position is safe to show.
    const line = (error as { line?: unknown }).line;
    return {
      kind: "unreadable",
      path: file,
      problem: `does not parse${typeof line === "number" ? ` (line ${line + 1})` : ""}`,
    };
  }
  const hooksTable = isJsonObject(parsed.hooks) ? parsed.hooks : {};
  const trust = new Map<string, z.infer<typeof TrustState>>();
  const states = TrustStates.safeParse(hooksTable.state);
  if (states.success) {
    for (const [key, value] of Object.entries(states.data)) {
      const state = TrustState.safeParse(value);
      if (state.success) trust.set(key, state.data);
    }
  }
  const { state: _state, ...events } = hooksTable;
  return { kind: "present", path: file, trust, hooks: events };
}

export type TrustStatus = "trusted" | "untrusted" | "modified" | "disabled";

export interface EntryTrust {
  readonly entry: OwnedEntry;
  readonly file: string;
  readonly key: string;
  readonly hash: string;
  readonly status: TrustStatus;
}

/** trustOf(entries, file, config) → each entry's trust: stored hash equal (trusted), different (modified) or none. */
export function trustOf(
  entries: readonly OwnedEntry[],
  file: string,
  config: CodexConfig,
  platform: NodeJS.Platform = process.platform,
): EntryTrust[] {
  return entries.map((entry) => {
    const key = trustKey(file, entry.event, entry.group, entry.handler);
    const hash = trustHash(entry.event, entry.matcher, isJsonObject(entry.value) ? entry.value : {}, platform);
    const stored = config.kind === "present" ? config.trust.get(key) : undefined;
    let status: TrustStatus = "untrusted";
    if (stored?.enabled === false) status = "disabled";
    else if (stored?.trusted_hash !== undefined) status = stored.trusted_hash === hash ? "trusted" : "modified";
    return { entry, file, key, hash, status };
  });
}

/** configTomlEntries(config, binary) → our handlers defined in config.toml's [hooks] tables (they run too). */
export function configTomlEntries(config: CodexConfig, binaryPath: string): OwnedEntry[] {
  return config.kind === "present" ? ownedEntries(config.hooks, binaryPath) : [];
}
