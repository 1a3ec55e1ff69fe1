// What the installer knows about one client (agent), in one module per client beside this
// file. The pipeline (src/install/pipeline.ts: read → plan → preflight → write → report) and
// check/doctor (report.ts, doctor.ts) know no client by name: they read these fields.
//
// Adding a client is one module here and one row in the table of ./index.ts, after its
// descriptor (src/hosts/descriptors/<host>.ts), which it names as `descriptor`:
// 1. `home(ctx)`: the agent's own directory (`install` without --client acts on clients whose
//    directory exists). Honour the agent's own variable with `absoluteOverride` (a relative
//    value is refused, never resolved against the cwd).
// 2. `registry`: the JSON(C) file the agent reads hooks from, under its top-level `"hooks"`
//    object. `layout` says how it files handlers per event ("grouped":
//    `[{matcher?, hooks: [handler]}]` as Claude, Codex, Gemini and Qwen do; "flat":
//    `[handler]` as Windsurf and Copilot do). `rows` are the events to register, always
//    `rowsOf(<descriptor>)` (events, matchers, timeouts come from there), `handler`
//    spells one of ours for this agent (timeout units, quoting for the shell the agent runs
//    the command through — bash and PowerShell for Gemini). `commandFields` names the handler
//    fields holding a command line (default `command`; Copilot: `bash`, `powershell`): an
//    entry is ours when one of them runs our installed binary. `skeleton` holds the top-level
//    fields a file we create starts with (Copilot: `{"version": 1}`).
// 3. `sections`: other files holding a marked text section of ours (Windsurf's global rules).
// 4. `report`: extra lines for check/doctor (Codex: entries in config.toml, trust status),
//    e.g. "the registered binary path exists" for an agent that denies on a missing command:
//    it gets the entries of ours found in the registry (`owned`, with their values) and the
//    stable binary path; drift it reports makes `check` exit 1 with its repair line.
// 5. `afterWrite`: what install/uninstall says after this client's files (Codex: trust in
//    /hooks; dsh: the plugin row to paste). `alsoNamesBinary`: other files of the agent that
//    can still run our binary after uninstall (Codex config.toml), so the binary is kept;
//    `alsoReads` lists such files, so root in another user's home checks their links first.
// 6. `configFile`: only for a client whose registry path the user chooses (`--config PATH`).
// 7. `mcp`: where the agent reads its MCP servers and how it spells one (src/install/server/
//    does the rest: check/doctor look for a velesdb-memory server there, `install --mcp` /
//    `--mcp-url` add one to `mcp.files[0]`, uninstall takes it out again). `files` lists every
//    place the agent reads servers from, the one install writes first; `stdio(command)` and
//    `url(url)` spell the entry. A client whose agent reads its servers where we cannot look
//    says why in `mcpUnchecked` instead.
// Ownership, merge, backups, owner/mode, duplicate keys, undo on a failed write and the record
// of written files (manifest.ts, which lets uninstall find them again) come with the pipeline.
// Then the host module in src/hosts/, and the tests: test/install-<client>.test.ts
// (test/host-descriptors.test.ts checks the two sides agree).
import * as path from "node:path";
import type { JsonObject, OwnedEntry } from "./entries/entries.ts";
import type { InstallerContext, Resolved } from "./paths.ts";
import { matcherOf, type HostDescriptor } from "../hosts/descriptors/descriptor.ts";

export interface Registration {
  /** The key under `hooks` in the client's registry, exactly as the host spells it. */
  readonly wireEvent: string;
  /** The `<event>` of `velesdb-hooks <host> <event>`. */
  readonly argvEvent: string;
  /** Regex the host matches against the tool name; absent for lifecycle events. */
  readonly matcher?: string;
  /** Seconds the host waits before giving up on the hook (the handler converts to the host's unit). */
  readonly timeout?: number;
  /** Codex shows this while the hook runs. */
  readonly statusMessage?: string;
}

/**
 * How a registry files handlers under `hooks.<event>`:
 * - "grouped": `[{matcher?, hooks: [handler, …]}, …]`;
 * - "flat": `[handler, …]`, no groups; a handler may carry its own `matcher` (Copilot).
 */
export type RegistryLayout = "grouped" | "flat";

export interface RegistrySpec {
  /** The file the installer edits. */
  path(ctx: InstallerContext): Resolved;
  readonly layout: RegistryLayout;
  /** Every field here ends up in an entry's bytes (Codex trusts entries by their hash): keep rows byte-stable. */
  readonly rows: readonly Registration[];
  /** handler(row, binary, platform) → the handler object filed under row.wireEvent. */
  handler(row: Registration, binaryPath: string, platform: NodeJS.Platform): JsonObject;
  /** Handler fields holding a command line; default ["command"]. */
  readonly commandFields?: readonly string[];
  /** Top-level fields (besides `hooks`) of a file we create; uninstall deletes such a file once it holds only these. */
  readonly skeleton?: JsonObject;
}

/** A marked section of ours in a user's text file (Windsurf's global rules). */
export interface SectionSpec {
  /** What messages call it: "rules section". */
  readonly label: string;
  path(ctx: InstallerContext): string;
  /** The text between the marker lines (no trailing line break); `stable` is the installed binary's path. */
  body(stable: string): string;
  /** The marker lines' comment syntax: "html" (default, `<!-- … -->`) or "line" (`// …`, a JavaScript file). */
  readonly comment?: "html" | "line";
  /** A short note inside the begin marker telling a reader what the section is. */
  markerNote(): string;
  /**
   * The section is the whole file (OpenCode's plugin module): a file at that path holding no
   * section of ours is the user's, never appended to (docs/hardening.md §3: appended to a user's module,
   * both failed to load). Its value says what such a file is to its host, for the refusal.
   * Absent: a section appended to the user's text (Windsurf's rules).
   */
  readonly ownFile?: string;
}

/** What check/doctor know about a client's registry when its `report` is asked. */
export interface ReportFacts {
  readonly registryPath: string;
  /** Handlers of ours found in the registry (file order); empty when it could not be read. */
  readonly owned: readonly OwnedEntry[];
  readonly stable: string;
}

export interface ClientExtraReport {
  /** check lines (and doctor lines, under the client's name). */
  readonly lines: readonly string[];
  readonly drifted: boolean;
  readonly repairs: readonly string[];
  /** doctor-only lines, each with its left-column label ("trust:"). */
  readonly doctor: ReadonlyArray<{ readonly label: string; readonly text: string }>;
}

export interface WriteFacts {
  readonly mode: "install" | "uninstall";
  readonly dryRun: boolean;
  readonly registryPath: string;
  /** The registry's `hooks` value after this run (or what it would be, on --dry-run). */
  readonly hooksAfter: unknown;
  readonly stable: string;
}

/** One file an agent reads MCP servers from. */
export interface McpFile {
  /** What messages call it: "user settings", "the project's .mcp.json". */
  readonly label: string;
  path(ctx: InstallerContext): Resolved;
  /** "json": JSON with comments, edited as text (jsonc-edit.ts); "toml": Codex's config.toml. */
  readonly format: "json" | "toml";
  /** Keys leading to the table of servers: ["mcpServers"]; Claude's local scope: ["projects", cwd, "mcpServers"]. */
  servers(ctx: InstallerContext): readonly string[];
  /**
   * "user": a file of the agent's own configuration, found from the home directory or the
   * agent's own variable (CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, …), which only the user writes.
   * "project": a file found from the working directory, which the repository chooses: check
   * and doctor name its servers and never start them (docs/doctor.md, docs/hardening.md §4.1).
   */
  readonly scope: "user" | "project";
  /** The agent asks the user before it uses a server from this file (Claude's project .mcp.json). */
  readonly needsApproval?: boolean;
}

export interface McpSpec {
  /** Where the agent reads servers; install writes into the first (user level). */
  readonly files: readonly [McpFile, ...McpFile[]];
  /**
   * stdio("~/.velesdb-hooks/bin/velesdb-hooks", ["mcp", "--server", "/abs/velesdb-memory"]) → the
   * entry that runs the shared front (src/mcp/front.ts); with no arguments, the direct
   * velesdb-memory entry an earlier install wrote (stdio is its default transport), which is
   * still recognised as ours so install can upgrade it.
   */
  stdio(command: string, args: readonly string[]): JsonObject;
  /** url("https://127.0.0.1:18090/mcp") → the entry for the HTTP daemon. */
  url(url: string): JsonObject;
}

export interface InstallerClient {
  /** `--client <name>` and the prefix of every line about this client. */
  readonly name: string;
  /** The host as data, shared with the hook side (src/hosts/descriptors/): events, matchers, tools. */
  readonly descriptor: HostDescriptor;
  /** The agent's own directory; `install` without --client acts on clients whose directory exists. */
  home(ctx: InstallerContext): Resolved;
  /**
   * The JSON(C) file of hooks entries; absent for an agent whose hooks are code (OpenCode's
   * plugin): its one file of ours is then its first section, written whole.
   */
  readonly registry?: RegistrySpec;
  readonly sections?: readonly SectionSpec[];
  /** Set when the client takes `--config PATH` (the path of its registry): what that file is, for usage errors ("the DeepSeek harness hooks.json"). */
  readonly configFile?: string;
  report?(ctx: InstallerContext, facts: ReportFacts): ClientExtraReport;
  afterWrite?(ctx: InstallerContext, facts: WriteFacts): readonly string[];
  /** alsoNamesBinary(ctx, stable) → another file of this client that still runs the binary, if any. */
  alsoNamesBinary?(ctx: InstallerContext, stable: string): string | undefined;
  /** Files besides the registry and sections that install/uninstall read for this client (Codex config.toml): they pass the same link rule. */
  alsoReads?(ctx: InstallerContext): readonly string[];
  /** Where the agent reads MCP servers and how it spells one (item 7 above). */
  readonly mcp?: McpSpec;
  /** Without `mcp`: why its MCP servers are not checked (check/doctor and install --mcp say it). */
  readonly mcpUnchecked?: string;
}

/**
 * rowsOf(CLAUDE) → the registrations of the host's descriptor (src/hosts/descriptors/), in its
 * order: wire name, argv event, matcher, timeout and status message, each only when it has one.
 */
export function rowsOf(descriptor: HostDescriptor): readonly Registration[] {
  return Object.entries(descriptor.events).map(([argvEvent, event]) => {
    const matcher = matcherOf(descriptor, event);
    return {
      wireEvent: event.wire,
      argvEvent,
      ...(matcher === undefined ? {} : { matcher }),
      ...(event.timeoutS === undefined ? {} : { timeout: event.timeoutS }),
      ...(event.statusMessage === undefined ? {} : { statusMessage: event.statusMessage }),
    };
  });
}

/** The group that holds one handler: `{matcher?, hooks: [handler]}`. */
export function groupFor(row: Registration, handler: JsonObject): JsonObject {
  return row.matcher === undefined ? { hooks: [handler] } : { matcher: row.matcher, hooks: [handler] };
}

/** entryFor(registry, row, binary, platform) → what install files under row.wireEvent: a group, or the bare handler. */
export function entryFor(
  registry: RegistrySpec,
  row: Registration,
  binaryPath: string,
  platform: NodeJS.Platform,
): JsonObject {
  const handler = registry.handler(row, binaryPath, platform);
  return registry.layout === "flat" ? handler : groupFor(row, handler);
}

/** A client whose hooks are entries in a registry file (every client but OpenCode). */
export type RegistryClient = InstallerClient & { readonly registry: RegistrySpec };

/** primaryPath(client, ctx) → the file that says whether the client is installed: its registry, else its first section. */
export function primaryPath(client: InstallerClient, ctx: InstallerContext): Resolved {
  if (client.registry) return client.registry.path(ctx);
  const home = client.home(ctx);
  if (!home.ok) return home;
  const section = client.sections?.[0];
  return section
    ? { ok: true, path: section.path(ctx) }
    : { ok: false, problem: "has neither a registry nor a section (a bug)" };
}

/** fileInHome(home, "settings.json") → a `registry.path`: that file in the client's home, or the home's problem. */
export function fileInHome(home: InstallerClient["home"], ...segments: string[]): RegistrySpec["path"] {
  return (ctx) => {
    const dir = home(ctx);
    return dir.ok ? { ok: true, path: path.join(dir.path, ...segments) } : dir;
  };
}
