// Every `velesdb-hooks <host> <event>` entry, read from the host table itself (so an event added
// tomorrow is fuzzed tomorrow), with what its answer may look like (docs/contract.md §3.4, §4) and the exit
// codes it may use. The fuzzer, the stress test and the fault tests all judge answers here.
import { HOSTS } from "../../src/hosts/index.ts";
import type { HostModule } from "../../src/hosts/host.ts";

export type HostName = keyof typeof HOSTS;

/** What a hook of this entry is for; the failure table (failure-table.ts) has one column per class. */
export type HookClass = "lifecycle" | "precompact" | "stop" | "guard" | "posttooluse";

export interface Entry {
  readonly host: HostName;
  /**
   * The host whose payloads and answers this one shares: itself, or the host it is a fork of
   * (Kilo Code speaks OpenCode's plugin wire, src/hosts/kilo.ts). Payloads, judges and
   * replacement checks read it; the binary is still run as `host`.
   */
  readonly dialect: HostName;
  readonly event: string;
  readonly wireName: string;
  /** `claude/stop`: the label used in test names, seeds and failure files. */
  readonly id: string;
  readonly hookClass: HookClass;
  /** True when the payload names its event in hook_event_name (Windsurf's does not). */
  readonly payloadNamesEvent: boolean;
}

const CLASS_OF_WIRE_NAME: Readonly<Record<string, HookClass>> = {
  SessionStart: "lifecycle",
  pre_user_prompt: "lifecycle",
  PreCompact: "precompact",
  Stop: "stop",
  PreToolUse: "guard",
  pre_write_code: "guard",
  PostToolUse: "posttooluse",
  post_mcp_tool_use: "posttooluse",
  // Gemini CLI
  AfterAgent: "stop",
  BeforeTool: "guard",
  AfterTool: "posttooluse",
  // GitHub Copilot CLI (camelCase events)
  sessionStart: "lifecycle",
  agentStop: "stop",
  preToolUse: "guard",
  postToolUse: "posttooluse",
  // OpenCode (the plugin's hooks and bus event)
  "experimental.chat.system.transform": "lifecycle",
  "experimental.session.compacting": "precompact",
  "session.idle": "stop",
  "tool.execute.before": "guard",
  "tool.execute.after": "posttooluse",
  // Pi (the extension's events)
  before_agent_start: "lifecycle",
  turn_end: "stop",
  tool_call: "guard",
  tool_result: "posttooluse",
};

const DIALECT_OF: Readonly<Record<string, HostName>> = { kilo: "opencode" };

/** ENTRIES → every host × event of the binary, in the order --help lists them. */
export const ENTRIES: readonly Entry[] = Object.entries(HOSTS as Record<string, HostModule>).flatMap(([host, module]) =>
  Object.entries(module.events).map(([event, { wireName }]) => {
    const hookClass = CLASS_OF_WIRE_NAME[wireName];
    if (hookClass === undefined)
      throw new Error(`fuzz-entries: no hook class for ${host} ${event} (${wireName}); add it above`);
    return {
      host: host as HostName,
      dialect: (DIALECT_OF[host] ?? host) as HostName,
      event,
      wireName,
      id: `${host}/${event}`,
      hookClass,
      payloadNamesEvent: module.payloadNamesEvent,
    };
  }),
);

export function entryById(id: string): Entry {
  const entry = ENTRIES.find((e) => e.id === id);
  if (!entry) throw new Error(`unknown entry ${id}; entries are ${ENTRIES.map((e) => e.id).join(", ")}`);
  return entry;
}

/** The answer as the tests classify it: one neutral kind per host spelling. */
export type AnswerKind = "pass" | "context" | "continue" | "deny" | "replace" | "instructions";

export interface Judged {
  readonly kind: AnswerKind;
  /** The model-facing text (context, continuation, deny reason, instructions), when there is one. */
  readonly text?: string;
  /** PostToolUse replacement: the tool_response the model would see instead. */
  readonly replacement?: Record<string, unknown>;
  /** A pass's line for the user (Claude's systemMessage), when there is one. */
  readonly userMessage?: string;
}

export interface RawAnswer {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * judgeAnswer(entry, raw) → the answer's kind, or a list of contract violations (docs/contract.md §3.4, §4):
 * exit code in the entry's allowed set, stdout empty or exactly one compact JSON object of the
 * host's shape (or the host's plain-text form), stderr at most one `velesdb-hooks:` line, no
 * stack trace, no "internal error" (a rule that threw).
 */
export function judgeAnswer(
  entry: Entry,
  raw: RawAnswer,
): { ok: true; answer: Judged } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const windsurfDeny = entry.dialect === "windsurf" && entry.wireName === "pre_write_code" && raw.exitCode === 2;
  const allowedExit = entry.dialect === "windsurf" && entry.wireName === "pre_write_code" ? [0, 2] : [0];
  if (!allowedExit.includes(raw.exitCode))
    problems.push(`exit code ${raw.exitCode} is not in {${allowedExit.join(",")}}`);
  problems.push(...stderrProblems(raw.stderr, windsurfDeny));
  if (problems.length > 0) return { ok: false, problems };
  const judged =
    entry.dialect === "windsurf"
      ? judgeWindsurf(entry, raw, windsurfDeny)
      : entry.dialect === "copilot"
        ? judgeCopilot(entry, raw.stdout)
        : entry.dialect === "opencode" || entry.dialect === "pi"
          ? judgeOpencode(entry, raw.stdout)
          : (entry.dialect === "droid" || entry.dialect === "codebuddy") && raw.stdout === ""
            ? { kind: "pass" as const }
            : judgeJsonHost(entry, raw.stdout);
  return typeof judged === "string" ? { ok: false, problems: [judged] } : { ok: true, answer: judged };
}

const STACK_TRACE = [
  /^\s+at \S.*(:\d+:\d+\)?|\(native\)|\[native code\])$/m,
  /^\s*\d+ \| /m,
  /^(Uncaught |error: |panic|Bun v\d|oh no: Bun)/m,
  /Segmentation fault|core dumped/,
];

export function stackTraceIn(text: string): string | undefined {
  return STACK_TRACE.find((pattern) => pattern.test(text))?.source;
}

function stderrProblems(stderr: string, windsurfDeny: boolean): string[] {
  if (windsurfDeny) {
    // Cascade shows this stderr to the agent as the reason: text, never a trace.
    if (stderr.trim() === "") return ["windsurf refusal (exit 2) with an empty reason on stderr"];
    const trace = stackTraceIn(stderr);
    return trace ? [`stack trace on stderr (${trace})`] : [];
  }
  if (stderr === "") return [];
  if (!/^velesdb-hooks: [^\n]*\n$/.test(stderr))
    return [`stderr is not one "velesdb-hooks:" line: ${JSON.stringify(stderr.slice(0, 300))}`];
  if (stderr.startsWith("velesdb-hooks: internal error")) return [`a rule threw: ${stderr.slice(0, 300).trim()}`];
  return [];
}

function judgeWindsurf(entry: Entry, raw: RawAnswer, deny: boolean): Judged | string {
  if (deny) return raw.stdout === "" ? { kind: "deny", text: raw.stderr } : "windsurf refusal printed on stdout";
  if (raw.stdout === "") return { kind: "pass" };
  if (entry.wireName !== "pre_user_prompt")
    return `windsurf ${entry.wireName} printed on stdout: ${JSON.stringify(raw.stdout.slice(0, 200))}`;
  if (!raw.stdout.endsWith("\n") || !raw.stdout.includes("load_working_context("))
    return "windsurf reminder is not the load guidance";
  return { kind: "context", text: raw.stdout };
}

/** Copilot reads top-level fields: additionalContext, decision+reason, permissionDecision+reason. */
function judgeCopilot(entry: Entry, stdout: string): Judged | string {
  const value = oneCompactObject(stdout);
  if (typeof value === "string") return value;
  const keys = Object.keys(value).sort().join(",");
  if (keys === "") return { kind: "pass" };
  if (entry.wireName === "sessionStart" && keys === "additionalContext" && nonEmpty(value.additionalContext))
    return { kind: "context", text: value.additionalContext as string };
  if (
    entry.wireName === "agentStop" &&
    keys === "decision,reason" &&
    value.decision === "block" &&
    nonEmpty(value.reason)
  )
    return { kind: "continue", text: value.reason as string };
  if (
    entry.wireName === "preToolUse" &&
    keys === "permissionDecision,permissionDecisionReason" &&
    value.permissionDecision === "deny" &&
    nonEmpty(value.permissionDecisionReason)
  ) {
    return { kind: "deny", text: value.permissionDecisionReason as string };
  }
  if (
    entry.wireName === "postToolUse" &&
    keys === "modifiedResult" &&
    isObject(value.modifiedResult) &&
    nonEmpty(value.modifiedResult.textResultForLlm)
  ) {
    return { kind: "replace", replacement: value.modifiedResult };
  }
  return `copilot ${entry.wireName} answer has the wrong shape: ${stdout.slice(0, 200)}`;
}

/** OpenCode's plugin reads one key per hook: system, context, prompt, deny, output (src/hosts/opencode.ts). */
function judgeOpencode(entry: Entry, stdout: string): Judged | string {
  const value = oneCompactObject(stdout);
  if (typeof value === "string") return value;
  const keys = Object.keys(value).sort().join(",");
  if (keys === "") return { kind: "pass" };
  const field = { lifecycle: "system", precompact: "context", stop: "prompt", guard: "deny", posttooluse: "output" }[
    entry.hookClass
  ];
  if (keys !== field || !nonEmpty(value[field]))
    return `opencode ${entry.wireName} answer has the wrong shape: ${stdout.slice(0, 200)}`;
  const text = value[field] as string;
  const kind = (
    {
      lifecycle: "context",
      precompact: "instructions",
      stop: "continue",
      guard: "deny",
      posttooluse: "replace",
    } as const
  )[entry.hookClass];
  return kind === "replace" ? { kind, replacement: { output: text } } : { kind, text };
}

/** oneCompactObject(stdout) → the one compact JSON object on one line, or what is wrong with it. */
function oneCompactObject(stdout: string): Record<string, unknown> | string {
  if (stdout === "") return "no answer on stdout";
  if (!stdout.endsWith("\n") || stdout.indexOf("\n") !== stdout.length - 1)
    return `stdout is not exactly one line: ${JSON.stringify(stdout.slice(0, 200))}`;
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return `stdout is not JSON: ${JSON.stringify(stdout.slice(0, 200))}`;
  }
  if (!isObject(value)) return "stdout is JSON but not an object";
  if (JSON.stringify(value) !== stdout.slice(0, -1)) return "stdout is not compact JSON";
  return value;
}

function judgeJsonHost(entry: Entry, stdout: string): Judged | string {
  if (entry.wireName === "PreCompact" && entry.dialect !== "qwen") {
    // Claude appends PreCompact stdout to the summariser prompt: text or nothing, never JSON.
    if (stdout === "") return { kind: "pass" };
    if (!stdout.endsWith("\n") || !stdout.includes("save_working_context("))
      return `PreCompact stdout is not the instructions: ${JSON.stringify(stdout.slice(0, 200))}`;
    if (stdout.trimStart().startsWith("{")) return "PreCompact stdout is JSON (the summariser would read it literally)";
    return { kind: "instructions", text: stdout };
  }
  const value = oneCompactObject(stdout);
  if (typeof value === "string") return value;
  const keys = Object.keys(value);
  if (keys.length === 0) return { kind: "pass" };
  if (entry.dialect === "gemini") return judgeGemini(entry, value, keys);
  // Claude shows systemMessage to the user only: with nothing else, the answer is a pass.
  if (entry.dialect === "claude" && keys.join(",") === "systemMessage") {
    const message = value.systemMessage;
    return typeof message === "string" && message.trim() !== "" && !message.includes("\n")
      ? { kind: "pass", userMessage: message }
      : "systemMessage is not one non-empty line";
  }
  // CodeBuddy's documented Stop form: {continue:false, reason}.
  if (entry.wireName === "Stop" && entry.dialect === "codebuddy") {
    if (keys.sort().join(",") !== "continue,reason" || value.continue !== false || !nonEmpty(value.reason))
      return `codebuddy Stop answer has the wrong shape: ${stdout.slice(0, 200)}`;
    return { kind: "continue", text: value.reason as string };
  }
  const codexDialect = entry.dialect === "codex" || entry.dialect === "dsh";
  if (entry.wireName === "Stop" && (codexDialect || entry.dialect === "qwen" || entry.dialect === "droid")) {
    // Codex rejects hookSpecificOutput on Stop: only {decision:"block", reason}.
    if (keys.sort().join(",") !== "decision,reason" || value.decision !== "block" || !nonEmpty(value.reason))
      return `codex Stop answer has the wrong shape: ${stdout.slice(0, 200)}`;
    return { kind: "continue", text: value.reason as string };
  }
  if (keys.join(",") !== "hookSpecificOutput" || !isObject(value.hookSpecificOutput))
    return `unexpected answer keys ${keys.join(",")}`;
  const specific = value.hookSpecificOutput;
  if (specific.hookEventName !== entry.wireName)
    return `hookEventName ${JSON.stringify(specific.hookEventName)} is not ${entry.wireName}`;
  const fields = Object.keys(specific)
    .filter((k) => k !== "hookEventName")
    .sort()
    .join(",");
  switch (entry.wireName) {
    case "SessionStart": {
      if (fields !== "additionalContext" || !nonEmpty(specific.additionalContext))
        return `SessionStart answer has the wrong shape: ${fields}`;
      const text = specific.additionalContext as string;
      if (codexDialect && text.length > 10_000)
        return `SessionStart context of ${text.length} characters is above Codex's cap`;
      return { kind: "context", text };
    }
    case "PreCompact":
      // Qwen appends PreCompact additionalContext to its compression prompt (measured on 0.24.4).
      if (fields !== "additionalContext" || !nonEmpty(specific.additionalContext))
        return `PreCompact answer has the wrong shape: ${fields}`;
      if (!(specific.additionalContext as string).includes("save_working_context("))
        return "PreCompact context is not the instructions";
      return { kind: "instructions", text: specific.additionalContext as string };
    case "Stop":
      if (fields !== "additionalContext" || !nonEmpty(specific.additionalContext))
        return `Stop answer has the wrong shape: ${fields}`;
      return { kind: "continue", text: specific.additionalContext as string };
    case "PreToolUse":
      if (
        fields !== "permissionDecision,permissionDecisionReason" ||
        specific.permissionDecision !== "deny" ||
        !nonEmpty(specific.permissionDecisionReason)
      ) {
        return `PreToolUse answer has the wrong shape: ${stdout.slice(0, 200)}`;
      }
      return { kind: "deny", text: specific.permissionDecisionReason as string };
    case "PostToolUse": {
      if (entry.dialect !== "claude") return `${entry.id} answered something other than {}`;
      if (fields !== "updatedToolOutput" || !isObject(specific.updatedToolOutput))
        return `PostToolUse answer has the wrong shape: ${fields}`;
      const out = specific.updatedToolOutput;
      // A string or partial object is silently ignored by Claude (docs/contract.md §4.1): the full Bash shape.
      if (
        typeof out.stdout !== "string" ||
        typeof out.stderr !== "string" ||
        typeof out.interrupted !== "boolean" ||
        out.isImage !== false
      ) {
        return "updatedToolOutput does not have the full Bash shape";
      }
      if ("persistedOutputPath" in out || "persistedOutputSize" in out)
        return "updatedToolOutput still names the persisted output";
      return { kind: "replace", replacement: out };
    }
    default:
      return `no shape known for ${entry.id}`;
  }
}

/** Gemini reads only top-level `decision:"deny"` + `reason` for refusals and Stop continuations. */
function judgeGemini(entry: Entry, value: Record<string, unknown>, keys: string[]): Judged | string {
  const denyShape = keys.sort().join(",") === "decision,reason" && value.decision === "deny" && nonEmpty(value.reason);
  if (entry.wireName === "BeforeTool" || entry.wireName === "AfterAgent") {
    if (!denyShape)
      return `gemini ${entry.wireName} answer has the wrong shape: ${JSON.stringify(value).slice(0, 200)}`;
    return { kind: entry.wireName === "BeforeTool" ? "deny" : "continue", text: value.reason as string };
  }
  const specific = value.hookSpecificOutput;
  if (entry.wireName !== "SessionStart" || keys.join(",") !== "hookSpecificOutput" || !isObject(specific))
    return `${entry.id} answered something other than {}`;
  if (
    specific.hookEventName !== "SessionStart" ||
    !nonEmpty(specific.additionalContext) ||
    Object.keys(specific).length !== 2
  )
    return "gemini SessionStart answer has the wrong shape";
  return { kind: "context", text: specific.additionalContext as string };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function nonEmpty(value: unknown): boolean {
  return typeof value === "string" && value.trim() !== "";
}
