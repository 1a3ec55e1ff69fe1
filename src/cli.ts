// Entry point: `velesdb-hooks <host> <event>` or an installer command. No rule lives here:
// argv is matched against the host table, the rule runs, the host encodes, and this file
// writes the one answer and exits. The installer is imported lazily with a literal path, so
// a hook never evaluates TOML/JSONC code it does not use (`bun build --compile` bundles it,
// but evaluation waits for the import).
import { diagnosticLine, pass, type HookAnswer } from "./core/decision.ts";
import { withReportedProblems } from "./core/diagnostics.ts";
import { createHookInput } from "./core/hook-input.ts";
import { stdoutIsDiscarded, writeFully } from "./core/output.ts";
import { payloadSessionId, readPayloadFromStdin, stringField } from "./core/payload.ts";
import { noteDecision, noteHook, noteStat } from "./core/stats-note.ts";
import { appendHookRecord } from "./core/stats-record.ts";
import { HOST_LOADERS } from "./hosts/loaders.ts";
import type { HookEvent, HostModule } from "./hosts/host.ts";
import { VERSION } from "./version.ts";

const EXIT_USAGE = 64;
/** An installer command that threw: the installer's one failure code. */
const EXIT_INTERNAL_ERROR = 1;
const INSTALLER_COMMANDS = new Set(["install", "uninstall", "check", "doctor"]);
const MCP_COMMAND = "mcp";
const STATS_COMMAND = "stats";

/**
 * The --help text, built only when asked for. Every list in it is read from its table (the
 * hosts and their events from src/hosts/index.ts, the clients from the installer's table), so
 * a host or client added later appears by itself; the client table comes with the installer's
 * lazy import, so no hook evaluates it.
 */
export async function usage(): Promise<string> {
  const { clientChoices } = await import("./install/index.ts");
  const { HOSTS } = await import("./hosts/index.ts");
  return `velesdb-hooks ${VERSION}
Hooks that make coding agents use their velesdb-memory MCP server.

Usage:
  velesdb-hooks <host> <event>                  run one hook: payload on stdin, answer on stdout
  velesdb-hooks install   [--client C] [--config PATH] [--dry-run] [--mcp | --mcp-url URL]
  velesdb-hooks uninstall [--client C] [--config PATH] [--dry-run]
  velesdb-hooks check     [--client C] [--config PATH] [--strict]
  velesdb-hooks doctor    [--client C] [--config PATH]
  velesdb-hooks stats     [--days N] [--project P] [--json] [--reset]
                                                what the hooks did, per project and day (docs/stats.md)
  (C: ${clientChoices()})
  --mcp: also register velesdb-memory (found via VELESDB_MEMORY_BIN or PATH) in each agent,
         through \`velesdb-hooks mcp\`, so every session shares the one server a store allows;
         --mcp-url URL: register a running daemon instead (reached over TCP, which
         velesdb-memory does not authenticate). A server you configured is kept as it is;
         uninstall removes only the one install added; check fails without a server.
  velesdb-hooks mcp --server PATH                the shared velesdb-memory MCP server (stdio) install --mcp wires
  velesdb-hooks --version | --help

Hosts and events:
${Object.entries(HOSTS as Record<string, HostModule>)
  .map(
    ([name, host], _i, all) =>
      `  ${name.padEnd(Math.max(...all.map(([n]) => n.length)))} ${Object.keys(host.events).join(", ")}`,
  )
  .join("\n")}
`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [first, second] = argv;
  if (first === "--version" || first === "-V")
    return writeAnswer({ stdout: `velesdb-hooks ${VERSION}\n`, stderr: "", exitCode: 0 });
  if (first === "--help" || first === "-h" || first === "help")
    return writeAnswer({ stdout: await usage(), stderr: "", exitCode: 0 });
  // The bare name is someone at a terminal, not a host (hosts always pass host and event):
  // the whole usage serves them better than `unknown host ""`. Still exit 64, stdout empty.
  if (first === undefined) return writeAnswer({ stdout: "", stderr: await usage(), exitCode: EXIT_USAGE });
  // The shared-memory front (src/mcp/front.ts): a long-lived MCP server, never a hook, so its
  // code is evaluated only here.
  if (first === MCP_COMMAND) {
    const front = await import("./mcp/front.ts");
    return front.runMcpCommand(argv.slice(1));
  }
  if (first === STATS_COMMAND) return (await import("./stats/command.ts")).runStatsCommand(argv.slice(1));
  if (INSTALLER_COMMANDS.has(first)) {
    const installer = await import("./install/index.ts");
    return installer.runInstallerCommand(first, argv.slice(1));
  }
  // hasOwn: `toString` or `constructor` must be an unknown host, not Object.prototype's.
  const host = Object.hasOwn(HOST_LOADERS, first) ? await HOST_LOADERS[first]!() : undefined;
  if (!host) {
    return usageError(
      `unknown host ${JSON.stringify(first)}; hosts are ${Object.keys(HOST_LOADERS).join(", ")} (see --help)`,
    );
  }
  const event = second !== undefined && Object.hasOwn(host.events, second) ? host.events[second] : undefined;
  if (!event) {
    return usageError(
      `unknown event ${JSON.stringify(second ?? "")} for ${first}; events are ${Object.keys(host.events).join(", ")}`,
      host.usageExitCode,
    );
  }
  if (argv.length > 2)
    return usageError(`unexpected argument ${JSON.stringify(argv[2])} after ${first} ${second}`, host.usageExitCode);
  const exitCode = writeAnswer(await runHook(host, second!, event));
  // One stats record per hook call, once its answer is out (src/core/stats-record.ts).
  appendHookRecord(process.env);
  return exitCode;
}

/** runHook(host, "stop", event) → the host's answer; a rule that throws yields its event's failure answer. */
export async function runHook(
  registered: HostModule,
  eventName: string,
  registeredEvent: HookEvent,
): Promise<HookAnswer> {
  const reading = readPayloadFromStdin(registeredEvent.bytesField);
  // Another host may run this host's hooks with its own payloads (Cursor runs Claude Code's):
  // it gets its own rules and answer shapes, never answers spelled for a host it is not.
  const host = (await registered.callerOf?.(reading.payload, process.env)) ?? registered;
  const event = host.events[eventName] ?? registeredEvent;
  noteHook(host.profile.name, event.wireName, payloadSessionId(reading.payload, host.profile.sessionIdField));
  // Nothing was parsed, so no rule can know what the host asked: every hook passes.
  if (reading.oversized) return host.encode(event.wireName, pass(reading.problem));
  const input = createHookInput(reading.payload, reading.problem, host.profile, process.env);
  const sentEvent = host.payloadNamesEvent ? stringField(reading.payload, "hook_event_name") : undefined;
  if (sentEvent !== undefined && sentEvent !== event.wireName) {
    // Registered under the wrong event: our answer would be spelled for another event, and
    // some hosts turn a misread answer into model-visible text. Pass, and say so.
    return host.encode(
      event.wireName,
      pass(`registered for ${sentEvent}, but this is the ${event.wireName} hook; passing`),
    );
  }
  try {
    return host.encode(event.wireName, noteDecision(withReportedProblems(await event.run(input))));
  } catch (error) {
    // The event's own failure policy decides (src/hosts/*.ts, beside the event).
    const reason = error instanceof Error ? error.message : String(error);
    const { failureDecision } = await import("./core/failure.ts");
    return host.encode(event.wireName, noteDecision(await failureDecision(event.failure, input, reason), "error"));
  }
}

function usageError(message: string, exitCode: 1 | 64 = EXIT_USAGE): number {
  return writeAnswer({ stdout: "", stderr: diagnosticLine(message), exitCode });
}

/**
 * writeAnswer(answer) → its exit code, after stdout and stderr were written. A host ignores a
 * cut JSON answer, so when stdout fails and the answer has an exit-code form (a deny), that
 * form is given instead: otherwise the refused edit would go through
 * (docs/decisions.md#hook-input-and-answers). A stdout on
 * /dev/null counts as failed: nobody can read a deny written there.
 */
function writeAnswer(answer: HookAnswer): number {
  const fallback = answer.ifStdoutFails;
  if (fallback === undefined) {
    if (!writeFully(1, answer.stdout)) noteStat("answerLost", true);
  } else if (stdoutIsDiscarded() || !writeFully(1, answer.stdout)) return writeAnswer(fallback);
  writeFully(2, answer.stderr);
  return answer.exitCode;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    writeFully(2, diagnosticLine(`internal error: ${error instanceof Error ? error.message : String(error)}`));
    // A command that failed must say so to a script (install.sh once read a stack overflow as
    // a successful install, docs/decisions.md#installer-second-trial-from-outside; `stats` once
    // printed only "internal error: Invalid Date" and exited 0, docs/hardening.md §4.7); a hook
    // that got here passes, its host's way of carrying on.
    const command = process.argv[2] ?? "";
    process.exit(
      INSTALLER_COMMANDS.has(command) || command === MCP_COMMAND || command === STATS_COMMAND ? EXIT_INTERNAL_ERROR : 0,
    );
  },
);
