// One descriptor per host (src/hosts/descriptors/) is what the hook side (src/hosts/<host>.ts)
// and the installer (src/install/clients/<host>.ts) both read. This file fails when the two sides
// disagree anyway: an event the hook knows under another wire name than the installer registers, a
// matcher that lets through a tool the guard does not cover (or keeps out one it does), a
// velesdb-memory tool the model sees under a name the matcher drops or the hook does not read as a
// recall, a timeout or spawn bound other than the descriptor's, a plugin or extension that spawns
// another host. And a host module that lists an event's wire name, an edit tool or its shell tool
// itself, in a string of its own, instead of reading it from its descriptor: such a list is what
// drifts. Each kind of disagreement is planted once to show it is caught.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { bareVelesdbToolName, isVelesdbRecallToolName, mcpToolName } from "../src/core/recall.ts";
import { editToolsMatcher, velesdbToolsMatcher } from "../src/hosts/descriptors/descriptor.ts";
import { DESCRIPTORS } from "./support/host-descriptors.ts";
import { RECALL_TOOL_NAMES } from "../src/core/velesdb-tools.ts";
import type { HostDescriptor } from "../src/hosts/descriptors/descriptor.ts";
import type { HostModule } from "../src/hosts/host.ts";
import { HOSTS } from "../src/hosts/index.ts";
import { CLIENTS, clientNamed, type InstallerClient } from "../src/install/clients/index.ts";

const BINARY = "/opt/velesdb-hooks/bin/velesdb-hooks";

/** Every tool name some host uses, so a matcher can be shown to keep out what is not its host's. */
const ALL_TOOL_NAMES: readonly string[] = [
  ...new Set(DESCRIPTORS.flatMap((d) => [...Object.keys(d.editTools), ...(d.shellTool ? [d.shellTool] : [])])),
  "Read",
  "read_file",
  "mcp__other-server__recall",
];

/**
 * restated(source, descriptor) → the names of the descriptor (wire names, edit tools, the shell
 * tool) that a host module's source spells in a string literal of its own, comments left out.
 * `toolName: "Bash"` is not the host's name but the one compression files every shell output
 * under (src/core/compress-gates.ts), whatever the host calls its shell; `kind === "patch"` is an
 * EditTarget kind (src/hosts/descriptors/descriptor.ts), not OpenCode's `patch` tool.
 */
function restated(source: string, descriptor: HostDescriptor): string[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "")
    .replaceAll('toolName: "Bash"', "")
    .replace(/kind === "(path|patch|none)"/g, "");
  const names = new Set([
    ...Object.values(descriptor.events).map((event) => event.wire),
    ...Object.keys(descriptor.editTools),
    ...(descriptor.shellTool === undefined ? [] : [descriptor.shellTool]),
  ]);
  return [...names]
    .filter((name) => code.includes(JSON.stringify(name)))
    .map((name) => `the hook module spells ${name} itself`);
}

const hostSource = (file: string): string =>
  fs.readFileSync(path.join(import.meta.dir, "..", "src", "hosts", file), "utf8");

/**
 * disagreements(host, client) → every way the hook side and the installer side of one host
 * disagree, as sentences; empty when they agree.
 */
function disagreements(host: HostModule, client: InstallerClient): string[] {
  const found: string[] = [];
  const d = host.descriptor;
  if (client.descriptor !== d) found.push("the hook and the installer read different descriptors");
  if (client.name !== d.name || host.profile.name !== d.name)
    found.push(`names: hook ${host.profile.name}, installer ${client.name}, descriptor ${d.name}`);

  // Events: the hook answers each under the wire name the installer files it under.
  const hookEvents = Object.keys(host.events).sort();
  if (JSON.stringify(hookEvents) !== JSON.stringify(Object.keys(d.events).sort()))
    found.push(`hook events ${hookEvents.join(",")} are not the descriptor's`);
  for (const [argv, event] of Object.entries(host.events)) {
    if (d.events[argv] !== undefined && event.wireName !== d.events[argv]!.wire)
      found.push(`${argv}: the hook answers as ${event.wireName}, the descriptor says ${d.events[argv]!.wire}`);
  }

  // The tools the hook reads, as the model sees them.
  const shown = RECALL_TOOL_NAMES.map((tool) => host.profile.mcpTool(tool));
  const spelling = d.velesdbTools;
  for (const [index, name] of shown.entries()) {
    const tool = RECALL_TOOL_NAMES[index]!;
    if (spelling === undefined) {
      if (name !== tool) found.push(`the model sees ${name} for ${tool}, but the hook reads server and tool apart`);
      continue;
    }
    if (spelling.server !== undefined) {
      // Handed apart (Pi's adapter): the hook joins server and tool, in either spelling of the server.
      const server = new RegExp(`^${spelling.server}$`);
      for (const spelled of ["velesdb-memory", "velesdb_memory"]) {
        const joined = mcpToolName(spelled, tool);
        if (!server.test(spelled) || joined === undefined || !isVelesdbRecallToolName(joined))
          found.push(`the hook does not read ${tool} of the server ${spelled} as a recall`);
      }
      continue;
    }
    const split = spelling.split === undefined ? undefined : new RegExp(spelling.split).exec(name);
    const read = spelling.split === undefined ? bareVelesdbToolName(name) : split?.[2];
    const canonical = spelling.split === undefined ? name : split ? mcpToolName(split[1], split[2]) : undefined;
    if (read !== tool || canonical === undefined || !isVelesdbRecallToolName(canonical))
      found.push(`the hook does not read ${name} as the recall ${tool}`);
  }

  if (client.registry === undefined) {
    found.push(...pluginDisagreements(host, client));
    return found;
  }
  const rows = client.registry.rows;
  const rowEvents = rows.map((row) => row.argvEvent);
  if (JSON.stringify(rowEvents) !== JSON.stringify(Object.keys(d.events)))
    found.push(`installer events ${rowEvents.join(",")} are not the descriptor's`);
  for (const row of rows) {
    const event = host.events[row.argvEvent];
    if (event === undefined) {
      found.push(`the installer registers ${row.argvEvent}, which the hook does not know`);
      continue;
    }
    if (row.wireEvent !== event.wireName)
      found.push(`${row.argvEvent}: registered under ${row.wireEvent}, the hook answers as ${event.wireName}`);
    const described = d.events[row.argvEvent];
    if (row.timeout !== described?.timeoutS)
      found.push(`${row.argvEvent}: registered with ${row.timeout} s, the descriptor says ${described?.timeoutS}`);
    const handler = JSON.stringify(client.registry.handler(row, BINARY, "linux"));
    if (!handler.includes(`${d.name} ${row.argvEvent}`) && !handler.includes(`"${d.name}","${row.argvEvent}"`))
      found.push(`${row.argvEvent}: the handler does not run \`${d.name} ${row.argvEvent}\``);
    if (row.matcher === undefined) {
      if (described?.matcher !== undefined)
        found.push(`${row.argvEvent}: registered without the matcher the descriptor asks for`);
      continue;
    }
    const matcher = new RegExp(row.matcher);
    if (described?.matcher === "edit tools") {
      const editTools = new Set(Object.keys(d.editTools));
      for (const tool of ALL_TOOL_NAMES) {
        if (matcher.test(tool) !== editTools.has(tool))
          found.push(
            `${row.argvEvent}: the matcher ${matcher.test(tool) ? "lets through" : "keeps out"} ${tool}, which the guard ${editTools.has(tool) ? "covers" : "does not cover"}`,
          );
      }
    } else {
      for (const name of shown)
        if (!matcher.test(name))
          found.push(`${row.argvEvent}: the matcher keeps out ${name}, the recall the hook reads`);
      if (d.shellTool !== undefined && !matcher.test(d.shellTool))
        found.push(`${row.argvEvent}: the matcher keeps out ${d.shellTool}, the output the hook compresses`);
      for (const other of ["Read", "read_file", "mcp__other-server__recall"])
        if (matcher.test(other)) found.push(`${row.argvEvent}: the matcher lets through ${other}`);
      found.push(...spellingDisagreements(d, matcher, row.argvEvent));
    }
  }
  return found;
}

/**
 * hookReads(descriptor, "mcp__velesdb_memory__recall") → "recall": the velesdb-memory tool the
 * hook reads in a name it receives (its descriptor's `split`, else src/core/recall.ts's own
 * `mcp__<server>__<tool>` reading), or undefined.
 */
function hookReads(d: HostDescriptor, name: string): string | undefined {
  const split = d.velesdbTools?.split;
  if (split === undefined) return bareVelesdbToolName(name);
  const parts = new RegExp(split).exec(name);
  return parts ? bareVelesdbToolName(mcpToolName(parts[1], parts[2])) : undefined;
}

/**
 * The server's other spelling, and Claude-plugin prefixes (src/core/recall.ts reads a plugin
 * name without an underscore): whatever of these the matcher lets through, the hook must read as
 * velesdb-memory's (as a recall, when only the recalls are matched); what the hook reads as a
 * recall in the host's own form, the matcher must let through.
 */
function spellingDisagreements(d: HostDescriptor, matcher: RegExp, argv: string): string[] {
  const found: string[] = [];
  const prefix = d.velesdbTools?.shownPrefix ?? "";
  for (const server of ["velesdb-memory", "velesdb_memory"]) {
    const own = prefix.replace(/velesdb[-_]memory/, server);
    for (const tool of [...RECALL_TOOL_NAMES, "store"]) {
      for (const name of [
        `${own}${tool}`,
        `mcp__plugin_vm_${server}__${tool}`,
        `mcp__plugin_my_vm_${server}__${tool}`,
      ]) {
        if (!matcher.test(name)) continue;
        const read = hookReads(d, name);
        if (read === undefined) found.push(`${argv}: the matcher lets through ${name}, which the hook does not read`);
        else if (d.velesdbTools?.matched === "recalls" && !RECALL_TOOL_NAMES.includes(read))
          found.push(`${argv}: the matcher lets through ${name}, which is no recall`);
      }
      const read = hookReads(d, `${own}${tool}`);
      if (read !== undefined && RECALL_TOOL_NAMES.includes(read) && !matcher.test(`${own}${tool}`))
        found.push(`${argv}: the matcher keeps out ${own}${tool}, a recall the hook reads`);
    }
  }
  return found;
}

/**
 * OpenCode, Kilo Code and Pi have no registry: the plugin (extension) must call each event, spawn
 * this host, within the descriptor's bound, and send the descriptor's tools.
 */
function pluginDisagreements(host: HostModule, client: InstallerClient): string[] {
  const body = client.sections?.[0]?.body(BINARY) ?? "";
  const found: string[] = [];
  const d = host.descriptor;
  if (!body.includes(`spawnSync(BINARY, [${JSON.stringify(d.name)}, event]`))
    found.push(`the plugin does not spawn \`${d.name} <event>\``);
  for (const argv of Object.keys(host.events))
    if (!body.includes(`ask("${argv}"`)) found.push(`the plugin never asks for ${argv}`);
  for (const [argv, event] of Object.entries(host.events)) {
    if (argv !== "session-start" && !body.includes(`"${event.wireName}"`))
      found.push(`the plugin has no ${event.wireName} callback for ${argv}`);
  }
  if (!body.includes(`/${editToolsMatcher(host.descriptor)}/`))
    found.push("the plugin's edit tools are not the descriptor's");
  const server = d.velesdbTools?.server;
  const afterTools = server === undefined ? velesdbToolsMatcher(d) : `^${server}$`;
  if (!body.includes(`/${afterTools}/`)) found.push("the plugin's after-tools are not the descriptor's");
  if (d.shellTool !== undefined && !body.includes(`=== ${JSON.stringify(d.shellTool)}`))
    found.push(`the plugin never tells ${d.shellTool} apart, the output the hook compresses`);
  const timeoutS = host.descriptor.events["post-tool-use"]?.timeoutS;
  if (timeoutS === undefined || !body.includes(`timeout: ${timeoutS * 1000},`))
    found.push(`the plugin's spawn bound is not the descriptor's ${timeoutS} s`);
  return found;
}

describe("the hook side and the installer side of each host agree", () => {
  test("every host has one descriptor, one hook module and one client", () => {
    expect(DESCRIPTORS.map((d) => d.name).sort()).toEqual(Object.keys(HOSTS).sort());
    expect(CLIENTS.map((c) => c.name).sort()).toEqual(Object.keys(HOSTS).sort());
    for (const [name, host] of Object.entries(HOSTS)) {
      expect(DESCRIPTORS).toContain(host.descriptor);
      expect(host.descriptor.name).toBe(name);
    }
  });

  test.each(Object.keys(HOSTS))("%s", (name) => {
    const host = (HOSTS as Record<string, HostModule>)[name]!;
    expect(disagreements(host, clientNamed(name))).toEqual([]);
  });

  test.each([...Object.keys(HOSTS), "claude-in-cursor"])(
    "%s's hook module takes its names from its descriptor",
    (name) => {
      const descriptor =
        name === "claude-in-cursor" ? HOSTS.claude.descriptor : (HOSTS as Record<string, HostModule>)[name]!.descriptor;
      expect(restated(hostSource(`${name}.ts`), descriptor)).toEqual([]);
    },
  );

  test("Claude under Cursor answers Claude's registered events", async () => {
    const { claudeInCursor } = await import("../src/hosts/claude-in-cursor.ts");
    const cursorAsClaude: HostModule = { ...claudeInCursor, profile: HOSTS.claude.profile };
    expect(disagreements(cursorAsClaude, clientNamed("claude"))).toEqual([]);
  });
});

describe("controls: a planted disagreement is caught", () => {
  const claude = HOSTS.claude as HostModule;
  const client = clientNamed("claude");
  const registry = client.registry!;

  test("an edit tool the installer's matcher drops", () => {
    const rows = registry.rows.map((row) =>
      row.argvEvent === "pre-tool-use" ? { ...row, matcher: "^(Edit|Write)$" } : row,
    );
    expect(disagreements(claude, { ...client, registry: { ...registry, rows } })).toEqual([
      "pre-tool-use: the matcher keeps out NotebookEdit, which the guard covers",
    ]);
  });

  test("an event the hook answers under another wire name", () => {
    const events = { ...claude.events, stop: { ...claude.events.stop!, wireName: "SubagentStop" } };
    expect(disagreements({ ...claude, events }, client)).toEqual([
      "stop: the hook answers as SubagentStop, the descriptor says Stop",
      "stop: registered under Stop, the hook answers as SubagentStop",
    ]);
  });

  test("a tool spelling the model sees but the matcher keeps out", () => {
    const codex = HOSTS.codex as HostModule;
    const profile = { ...codex.profile, mcpTool: (tool: string) => `mcp__velesdb-memory__${tool}_v2` };
    const found = disagreements({ ...codex, profile }, clientNamed("codex"));
    expect(found).toContain("the hook does not read mcp__velesdb-memory__recall_v2 as the recall recall");
    expect(found).toContain(
      "post-tool-use: the matcher keeps out mcp__velesdb-memory__recall_v2, the recall the hook reads",
    );
  });

  test("a timeout that is not the descriptor's, and a client reading another descriptor", () => {
    const rows = registry.rows.map((row) => (row.argvEvent === "post-tool-use" ? { ...row, timeout: 10 } : row));
    expect(disagreements(claude, { ...client, registry: { ...registry, rows } })).toEqual([
      "post-tool-use: registered with 10 s, the descriptor says 30",
    ]);
    expect(disagreements(claude, { ...client, descriptor: HOSTS.qwen.descriptor })).toEqual([
      "the hook and the installer read different descriptors",
    ]);
  });

  test("a plugin that sends other tools than the descriptor's", () => {
    const opencode = clientNamed("opencode");
    const section = opencode.sections![0]!;
    const planted = { ...section, body: (stable: string) => section.body(stable).replace("|multiedit|", "|") };
    expect(disagreements(HOSTS.opencode as HostModule, { ...opencode, sections: [planted] })).toEqual([
      "the plugin's edit tools are not the descriptor's",
    ]);
    const slower = {
      ...section,
      body: (stable: string) => section.body(stable).replace("timeout: 10000,", "timeout: 30000,"),
    };
    expect(disagreements(HOSTS.opencode as HostModule, { ...opencode, sections: [slower] })).toEqual([
      "the plugin's spawn bound is not the descriptor's 10 s",
    ]);
  });

  test("Kilo's plugin spawning OpenCode's host (the same module, another first argument)", async () => {
    const { opencodePluginBody } = await import("../src/install/clients/opencode-plugin.ts");
    const kilo = clientNamed("kilo");
    const asOpencode = { ...kilo.sections![0]!, body: (stable: string) => opencodePluginBody(stable) };
    expect(disagreements(HOSTS.kilo as HostModule, { ...kilo, sections: [asOpencode] })).toEqual([
      "the plugin does not spawn `kilo <event>`",
    ]);
  });

  test("Pi's extension guarding fewer tools, or sending another server's results, than the descriptor says", () => {
    const pi = clientNamed("pi");
    const section = pi.sections![0]!;
    const planted = (from: string, to: string) => ({
      ...pi,
      sections: [{ ...section, body: (stable: string) => section.body(stable).replace(from, to) }],
    });
    expect(disagreements(HOSTS.pi as HostModule, planted("/^(write|edit)$/", "/^(write)$/"))).toEqual([
      "the plugin's edit tools are not the descriptor's",
    ]);
    expect(disagreements(HOSTS.pi as HostModule, planted("/^velesdb[-_]memory$/", "/^velesdb-memory$/"))).toEqual([
      "the plugin's after-tools are not the descriptor's",
    ]);
    expect(disagreements(HOSTS.pi as HostModule, planted('=== "bash"', '=== "shell"'))).toEqual([
      "the plugin never tells bash apart, the output the hook compresses",
    ]);
  });

  test("a matcher wider or narrower than what the hook reads", () => {
    const withPost = (base: InstallerClient, matcher: string): InstallerClient => ({
      ...base,
      registry: {
        ...base.registry!,
        rows: base.registry!.rows.map((row) => (row.argvEvent === "post-tool-use" ? { ...row, matcher } : row)),
      },
    });
    // A plugin name with an underscore, which src/core/recall.ts does not read.
    expect(disagreements(claude, withPost(client, "^(Bash|mcp__(plugin_.+_)?velesdb[-_]memory__.+)$"))).toEqual(
      ["velesdb-memory", "velesdb_memory"].flatMap((server) =>
        [...RECALL_TOOL_NAMES, "store"].map(
          (tool) =>
            `post-tool-use: the matcher lets through mcp__plugin_my_vm_${server}__${tool}, which the hook does not read`,
        ),
      ),
    );
    // The server spelled with `_` dropped, though the hook reads it.
    expect(disagreements(claude, withPost(client, "^(Bash|mcp__(plugin_[^_]+_)?velesdb-memory__.+)$"))).toContain(
      "post-tool-use: the matcher keeps out mcp__velesdb_memory__recall, a recall the hook reads",
    );
    // Codex matches the recalls only: a matcher taking every tool lets `store` through.
    expect(
      disagreements(HOSTS.codex as HostModule, withPost(clientNamed("codex"), "^(Bash|mcp__velesdb[-_]memory__.+)$")),
    ).toEqual([
      "post-tool-use: the matcher lets through mcp__velesdb-memory__store, which is no recall",
      "post-tool-use: the matcher lets through mcp__velesdb_memory__store, which is no recall",
    ]);
  });

  test("a hook module that lists an edit tool or a wire name of its own", () => {
    const source = hostSource("claude.ts");
    expect(restated(source.replace("CLAUDE.shellTool", '"Bash"'), HOSTS.claude.descriptor)).toEqual([
      "the hook module spells Bash itself",
    ]);
    const planted = `${source}\nconst EDIT_TOOLS = new Set(["Edit", "Write"]); // a second list\nconst STOP = "Stop";\n`;
    expect(restated(planted, HOSTS.claude.descriptor)).toEqual([
      "the hook module spells Stop itself",
      "the hook module spells Edit itself",
      "the hook module spells Write itself",
    ]);
    // Positive control of the comment rule: a name in a comment is no list.
    expect(
      restated(`${source}\n// Edit, "Write" and NotebookEdit name their target\n`, HOSTS.claude.descriptor),
    ).toEqual([]);
  });

  test("CodeBuddy's hook reading another descriptor's tool names than its installer", () => {
    const codebuddy = HOSTS.codebuddy as HostModule;
    const profile = { ...codebuddy.profile, mcpTool: HOSTS.droid.profile.mcpTool };
    expect(disagreements({ ...codebuddy, profile }, clientNamed("codebuddy"))).toContain(
      "the hook does not read velesdb-memory___recall as the recall recall",
    );
  });
});
