// What one host is, as plain data: the single source the hook side (src/hosts/<host>.ts) and the
// installer side (src/install/clients/<host>.ts) both read, so the two cannot drift apart
// (test/host-descriptors.test.ts fails when they do). A descriptor imports nothing but this file
// and core's plain list of velesdb-memory's tools, src/core/velesdb-tools.ts (Kilo Code's also
// OpenCode's, whose fork it is): the installer loads no hook rule through it, a hook no installer
// code. Adding a host is its descriptor here (one file, and one row in the tests' table,
// test/support/host-descriptors.ts), its encoder in
// src/hosts/, its client module for what only the installer knows (home, settings file, handler
// spelling, MCP files), and its tests (docs/development/architecture.md).
import { RECALL_TOOL_NAMES } from "../../core/velesdb-tools.ts";

/** One event of ours: how the host's settings name it, and what the installer registers with it. */
export interface EventDescriptor {
  /** The event name the host sends (`hook_event_name`) and its settings file it under. */
  readonly wire: string;
  /**
   * The regex the installer registers for a tool event, or how it is built from this descriptor:
   * "edit tools" (the keys of `editTools`), "velesdb tools" (the shell tool, then the server's
   * tools as `velesdbTools` spells them). Absent: the event takes no matcher.
   */
  readonly matcher?: "edit tools" | "velesdb tools";
  /** Seconds the host waits for the hook before it gives up (the installer writes it; compression keeps inside it). */
  readonly timeoutS?: number;
  /** Codex shows this while the hook runs (part of the bytes Codex trusts: never reword). */
  readonly statusMessage?: string;
}

/**
 * Where an edit tool names what it changes: `path` — one target in that argument field; `patch` —
 * a patch whose targets the guard parses, in that field (absent: the arguments are the patch);
 * `none` — the host hands over no target (the session cwd's policy decides).
 */
export type EditTarget =
  | { readonly kind: "path"; readonly field: string }
  | { readonly kind: "patch"; readonly field?: string }
  | { readonly kind: "none" };

/** How velesdb-memory's tools are spelled at this host. */
export interface VelesdbToolSpelling {
  /** The name the model sees is `shownPrefix + tool` (HostProfile.mcpTool); "" for the bare tool. */
  readonly shownPrefix: string;
  /**
   * Regex source (no anchors, no groups of its own but a plugin prefix) of what comes before the
   * tool in the name hooks receive: the matcher's. Absent when the host hands the server apart
   * (`server`).
   */
  readonly sentStem?: string;
  /**
   * Regex source (no anchors) of the server's name, for a host that hands server and tool apart
   * in each tool result (Pi through pi-mcp-adapter: `details.server`, `details.tool`): its
   * extension sends a result on only when the server matches, and the hook joins the two.
   */
  readonly server?: string;
  /**
   * Regex source splitting a name hooks receive into server (group 1) and tool (group 2), for a
   * host whose names are not the `mcp__<server>__<tool>` that src/core/recall.ts reads itself.
   */
  readonly split?: string;
  /** The PostToolUse matcher lets through "all" of the server's tools, or only the "recalls". */
  readonly matched: "all" | "recalls";
}

export interface HostDescriptor {
  /** `velesdb-hooks <name> <event>`, `--client <name>`. */
  readonly name: string;
  /** Keyed by the `<event>` of `velesdb-hooks <host> <event>`, in the order the installer registers them. */
  readonly events: Readonly<Record<string, EventDescriptor>>;
  /** The tools the edit guard covers, and where each names its target. */
  readonly editTools: Readonly<Record<string, EditTarget>>;
  /** The shell tool whose output compression reads (registered with the velesdb tools), if any. */
  readonly shellTool?: string;
  /** Absent: the host names server and tool apart (Windsurf), registers no matcher, and its model sees the bare tool. */
  readonly velesdbTools?: VelesdbToolSpelling;
}

/** alternation(["a", "b"]) → "(a|b)". */
const alternation = (names: readonly string[]): string => `(${names.join("|")})`;

/** editToolsMatcher(descriptor) → "^(Edit|Write|NotebookEdit)$": the edit tools, anchored. */
export function editToolsMatcher(descriptor: HostDescriptor): string {
  return `^${alternation(Object.keys(descriptor.editTools))}$`;
}

/** velesdbToolsMatcher(descriptor) → "^(Bash|mcp__velesdb[-_]memory__.+)$": the shell tool and the server's tools. */
export function velesdbToolsMatcher(descriptor: HostDescriptor): string {
  const spelling = descriptor.velesdbTools;
  if (spelling?.sentStem === undefined) throw new Error(`${descriptor.name} has no velesdb tool name for a matcher`);
  const tools = `${spelling.sentStem}${spelling.matched === "all" ? ".+" : alternation(RECALL_TOOL_NAMES)}`;
  return descriptor.shellTool === undefined ? `^${tools}$` : `^(${descriptor.shellTool}|${tools})$`;
}

/** matcherOf(descriptor, event) → the regex the installer registers for that event, or undefined. */
export function matcherOf(descriptor: HostDescriptor, event: EventDescriptor): string | undefined {
  if (event.matcher === "edit tools") return editToolsMatcher(descriptor);
  if (event.matcher === "velesdb tools") return velesdbToolsMatcher(descriptor);
  return undefined;
}

/** shownToolName(descriptor, "recall") → the name this host's model sees for a velesdb-memory tool. */
export function shownToolName(descriptor: HostDescriptor, tool: string): string {
  return `${descriptor.velesdbTools?.shownPrefix ?? ""}${tool}`;
}

/** pathFieldsOf(descriptor) → {Edit: "file_path", …}: the edit tools that name one target, and its field. */
export function pathFieldsOf(descriptor: HostDescriptor): Readonly<Record<string, string>> {
  const fields: Record<string, string> = {};
  for (const [tool, target] of Object.entries(descriptor.editTools))
    if (target.kind === "path") fields[tool] = target.field;
  return fields;
}

/** The argv event names of a descriptor. */
export type EventNames<D extends HostDescriptor> = keyof D["events"] & string;
