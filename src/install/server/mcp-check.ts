// check and doctor: where each agent reads MCP servers, whether a usable velesdb-memory entry is
// there (hooks without one lock opted-in edits: docs/mcp-server.md), and the repair line; each
// usable entry goes on to the probe (server-report.ts).
import * as path from "node:path";
import type { InstallerClient, McpFile } from "../client.ts";
import { safeUrl, UPSTREAM_DAEMON_URL } from "./mcp-server.ts";
import { describeServer, findServer, readMcpFile, type McpRead } from "./mcp-read.ts";
import { shown, type InstallerContext } from "../paths.ts";
import type { ServerSpec } from "./server-conversation.ts";
import { isRelativeCommand, serverSpec } from "./server-probe.ts";

export interface McpReport {
  readonly lines: string[];
  readonly drifted: boolean;
  readonly repairs: string[];
  /** Each usable entry as the agent would start it, for the probe of check/doctor (server-report.ts). */
  readonly servers: ServerTarget[];
}

/** One configured server to start: where it was found ("in ~/.claude.json (local scope)") and what runs. */
export interface ServerTarget {
  readonly where: string;
  readonly spec: ServerSpec;
}

/** mcpInstallCommand(ctx, client) → the repair line's command. */
export const mcpInstallCommand = (client: InstallerClient): string =>
  `velesdb-hooks install --client ${client.name} --mcp (stdio velesdb-memory from PATH or VELESDB_MEMORY_BIN) or --mcp-url URL (a running daemon, e.g. ${UPSTREAM_DAEMON_URL})`;

/**
 * mcpReport(ctx, client, tree, hooksHere) → one line per place the agent reads servers from
 * that holds a velesdb-memory entry (or one line saying none does). With our hooks in place,
 * no usable server is drift: the guard would refuse every edit of an opted-in repository.
 */
export function mcpReport(ctx: InstallerContext, client: InstallerClient, tree: string, hooksHere: boolean): McpReport {
  const name = client.name;
  if (!client.mcp)
    return {
      lines: hooksHere && client.mcpUnchecked ? [`${name}: MCP server not checked: ${client.mcpUnchecked}`] : [],
      drifted: false,
      repairs: [],
      servers: [],
    };
  const lines: string[] = [];
  const servers: ServerTarget[] = [];
  const cache = new Map<string, McpRead>();
  let usable = false;
  let found = false;
  const places: string[] = [];
  const seen = new Set<string>();
  // A file that cannot be read is what to fix first: `install --mcp` refuses it for the same reason (docs/hardening.md §8).
  const unreadable: string[] = [];
  const readable: string[] = [];
  for (const spot of client.mcp.files) {
    const resolved = spot.path(ctx);
    if (!resolved.ok) {
      lines.push(`${name}: MCP servers cannot be checked (${spot.label}): ${resolved.problem}`);
      continue;
    }
    // The project's file and the user's are one when the agent runs in the home directory.
    const keys = spot.servers(ctx);
    const seenKey = JSON.stringify([resolved.path, ...keys]);
    if (seen.has(seenKey)) continue;
    seen.add(seenKey);
    // The project's .mcp.json sits under the cwd, a name the repository chooses: quoted when odd.
    const where = shown(ctx, resolved.path);
    const place = spot.label === path.basename(resolved.path) ? where : `${where} (${spot.label})`;
    places.push(place);
    const tables = client.mcp.files
      .filter((other) => sameFile(other.path(ctx), resolved.path))
      .map((other) => other.servers(ctx));
    const read = cache.get(resolved.path) ?? readMcpFile(resolved.path, spot.format, tree, tables);
    cache.set(resolved.path, read);
    if (read.kind === "refused") {
      lines.push(`${name}: MCP servers cannot be checked: ${where} ${read.problem}`);
      unreadable.push(`${where} (it ${read.problem})`);
      continue;
    }
    readable.push(place);
    const server = findServer(read.value, keys);
    if (!server) continue;
    found = true;
    const described = describeServer(ctx, server.entry);
    const approval = spot.needsApproval ? " (used once approved in a session)" : "";
    usable ||= described.usable;
    const foundIn = `${where}${spot.label === path.basename(resolved.path) ? "" : ` (${spot.label})`}`;
    lines.push(
      `${name}: MCP server ${server.name} ${described.usable ? "configured" : "UNUSABLE"} in ${foundIn}${approval}: ${described.text}`,
    );
    // Agents start every server, a user-level one too, in the session's directory (where a
    // repository's velesdb-memory.toml is read): the probe starts it where check runs.
    const spec = described.usable ? serverSpec(server.entry, ctx.cwd) : undefined;
    if (!spec) continue;
    // A file of the directory being checked names whatever program its repository wants; the
    // probe would run it as the user, with the user's environment, and without the approval
    // the agent asks for (docs/hardening.md §4.1). It is named, never started.
    const refused = notStarted(ctx, spot, spec);
    if (refused) lines.push(`${name}: MCP server in ${foundIn} ${refused}`);
    else servers.push({ where: foundIn, spec });
  }
  const repairs: string[] = [];
  let drifted = false;
  if (!found) {
    const looked =
      unreadable.length > 0
        ? `not found in the files that could be read (${readable.join(", ") || "none"})`
        : `missing (looked in ${places.join(", ")})`;
    lines.push(
      `${name}: MCP server velesdb-memory ${looked}${hooksHere ? ": the hooks ask for velesdb-memory tools the agent does not have, and an opted-in repository refuses every edit" : ""}`,
    );
  }
  if (hooksHere && !usable) {
    drifted = true;
    if (unreadable.length > 0)
      repairs.push(`fix ${[...new Set(unreadable)].join(" and ")} or move it aside, then ${mcpInstallCommand(client)}`);
    else
      repairs.push(
        found
          ? `fix or remove the velesdb-memory MCP server of ${name}, then ${mcpInstallCommand(client)}`
          : mcpInstallCommand(client),
      );
  }
  return { lines, drifted, repairs, servers };
}

/**
 * notStarted(ctx, spot, spec) → why the probe leaves this server alone, or undefined to start
 * it: a project file's server (whatever it names, escaped), and a relative command, which
 * names a file of the directory the probe runs in (programPath in server-probe.ts).
 */
function notStarted(ctx: InstallerContext, spot: McpFile, spec: ServerSpec): string | undefined {
  if (spot.scope === "project") {
    const what =
      spec.kind === "http" ? `not contacted: ${safeUrl(spec.url)}` : `not started: ${shown(ctx, spec.command)}`;
    return `${what} is named by a file of the directory being checked; check and doctor start only the servers of your own configuration`;
  }
  if (spec.kind === "stdio" && isRelativeCommand(spec.command))
    return `not started: its command ${shown(ctx, spec.command)} is relative, so it would run a file of ${shown(ctx, spec.cwd)}`;
  return undefined;
}

const sameFile = (resolved: { ok: true; path: string } | { ok: false }, filePath: string): boolean =>
  resolved.ok && resolved.path === filePath;
