// fast-check arbitraries for hook payloads. Three families, weighted towards the first:
// - shaped: a real payload of the entry's host (fixtures/payloads), placed in the sandbox
//   (cwd, edit targets, Bash output, recall responses drawn from the cases the rules branch on),
//   then mutated field by field: deleted, retyped, made huge, unicode, NUL, deeply nested;
// - json: any JSON text (objects with arbitrary keys, arrays, scalars);
// - bytes: what a broken pipe or another program might send: random bytes, a payload cut
//   short, a BOM, UTF-16, two objects back to back, trailing garbage.
// Big values stay as small markers in the generated case (@HUGE…@, {"@DEEP@":n}) and are
// expanded only when the case is encoded, so a failing case prints in a few lines.
import fc from "fast-check";
import * as fs from "node:fs";
import * as path from "node:path";
import { FIXTURES, loadPayload } from "./hook-runner.ts";
import type { Entry } from "./fuzz-entries.ts";
import { SANDBOX_TOKEN } from "./fuzz-sandbox.ts";

export type ProcessCwd = "repo" | "plain";

export type FuzzCase =
  | { readonly form: "object"; readonly payload: unknown; readonly processCwd: ProcessCwd }
  | { readonly form: "text"; readonly text: string; readonly processCwd: ProcessCwd }
  | { readonly form: "bytes"; readonly bytes: readonly number[]; readonly processCwd: ProcessCwd };

/** The host's saved copy of a large Bash output, created in the sandbox when a payload names it. */
export const PERSISTED_OUTPUT = `${SANDBOX_TOKEN}/host/tool-results/persisted-output.txt`;

const SB = SANDBOX_TOKEN;
const CWDS = [
  `${SB}/ws/repo`,
  `${SB}/ws/repo/src`,
  `${SB}/ws/plain`,
  `${SB}/ws/broken`,
  `${SB}/ws/repo/missing/deeper`,
  "src",
  ".",
  "../plain",
];
const TARGETS = [
  `${SB}/ws/repo/src/main.ts`,
  `${SB}/ws/repo/new/dir/file.ts`,
  `${SB}/ws/repo/.velesdb-hooks.json`,
  `${SB}/ws/plain/notes.md`,
  `${SB}/ws/broken/x.ts`,
  "src/relative.ts",
  "../repo/src/main.ts",
  `${SB}/ws/repo/src/../../plain/escape.ts`,
  `${SB}/ws/repo/src/main.ts\u0000tail`,
];
const SESSIONS = ["s-fuzz", "", "unknown-session", "sess\nnewline", "../../etc", "ü-セッション"];

// ---------------------------------------------------------------------------------------------
// Templates: the real payloads, with their /e2e paths moved into the sandbox.

const templateCache = new Map<string, Record<string, unknown>[]>();

/** templates(entry) → the fixture payloads of this host and event. */
export function templates(entry: Entry): Record<string, unknown>[] {
  const cached = templateCache.get(entry.id);
  if (cached) return cached;
  const dir = path.join(FIXTURES, "payloads", entry.dialect);
  const files = fs
    .readdirSync(dir)
    .filter((f) => f === `${entry.event}.json` || (f.startsWith(`${entry.event}.`) && f.endsWith(".json")));
  if (files.length === 0) throw new Error(`no fixture payload for ${entry.id}`);
  const loaded = files
    .sort()
    .map((f) => intoSandbox(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))) as Record<string, unknown>);
  templateCache.set(entry.id, loaded);
  return loaded;
}

function intoSandbox(value: unknown): unknown {
  if (typeof value === "string") return value.startsWith("/e2e/") || value === "/e2e" ? SB + value.slice(4) : value;
  if (Array.isArray(value)) return value.map(intoSandbox);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, intoSandbox(v)]));
  return value;
}

// ---------------------------------------------------------------------------------------------
// Values that do not belong where they are put.

const hugeString = fc
  .record({
    size: fc.constantFrom(70_000, 1_100_000, 3_000_000),
    unit: fc.constantFrom("x", "é", "𝄞", "\u0000", "\n", "\\", '"', "\ud800"),
  })
  .map(({ size, unit }) => `@HUGE:${size}:${unit.codePointAt(0)}@`);
// Deep enough to overflow a recursive serialiser (JSON.stringify gives up near 10^4–10^5 levels).
const deepNest = fc
  .record({
    depth: fc.oneof(fc.integer({ min: 10, max: 3000 }), fc.integer({ min: 50_000, max: 150_000 })),
    array: fc.boolean(),
  })
  .map(({ depth, array }) => ({ "@DEEP@": depth, array }));
const nulString = fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`);
const oddStrings = fc.constantFrom(
  "",
  " ",
  "\n",
  "\r\n",
  "../../..",
  "/",
  ".",
  SB,
  `${SB}/ws/repo`,
  "__proto__",
  "constructor",
  "true",
  "null",
  "{}",
  "\u2028",
  "\ufeff",
  "\udc00",
);
const keyArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    "__proto__",
    "constructor",
    "toString",
    "cwd",
    "session_id",
    "tool_name",
    "tool_input",
    "tool_response",
    "hook_event_name",
    "isError",
    "error",
    "content",
  ),
);

export const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 2, arbitrary: nulString },
  { weight: 3, arbitrary: oddStrings },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepNest },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [null], [{ type: "text", text: "[]" }]) },
);

// ---------------------------------------------------------------------------------------------
// Placement: the fields each rule branches on, drawn from the cases that matter.

const bashOutput = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom("ok\n", "", "1\n2\n3\n") },
  {
    weight: 5,
    arbitrary: fc
      .record({
        line: fc.string({ unit: "binary", minLength: 1, maxLength: 80 }),
        lines: fc.integer({ min: 10, max: 900 }),
      })
      .map(({ line, lines }) => Array.from({ length: lines }, (_, i) => `${i} ${line}`).join("\n")),
  },
  { weight: 1, arbitrary: fc.constantFrom(70_000, 300_000).map((size) => `@HUGE:${size}:${"a".codePointAt(0)}@`) },
);

const bashResponse = fc
  .record({
    stdout: bashOutput,
    stderr: fc.constantFrom("", "notice: something\n"),
    interrupted: fc.boolean(),
    isImage: fc.constantFrom(false, false, false, true),
    persisted: fc.constantFrom(false, false, false, true),
    extra: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), {
      nil: undefined,
    }),
  })
  .map(({ persisted, extra, ...fields }) => ({
    ...fields,
    noOutputExpected: false,
    ...(persisted ? { persistedOutputPath: PERSISTED_OUTPUT, persistedOutputSize: 40_000 } : {}),
    ...extra,
  }));

const recallToolNames = fc.constantFrom(
  "mcp__velesdb-memory__recall_fused",
  "mcp__velesdb_memory__recall",
  "mcp__velesdb-memory__recall_where",
  "mcp__plugin_vm_velesdb-memory__why",
  "mcp__velesdb_memory__entity",
  "mcp__velesdb-memory__compile_context",
  "mcp__velesdb-memory__save_working_context",
  "mcp__other__recall_fused",
);
const recallInput = fc.oneof(
  fc.constant({ query: "prior patterns" }),
  fc.constantFrom("fuzz-guarded", "other", "", 5).map((project) => ({ query: "q", filter: { project } })),
  fc.constantFrom("fuzz-guarded", "other").map((project) => ({ corpus: "x", memory_scope: { project } })),
);
/** What the host handed the hook for velesdb-memory's real recall answer (the recorded fixture). */
const realRecall = (host: string, name = "post-tool-use.recall-fused"): unknown =>
  loadPayload(host, name).tool_response;
const structuredResponses = fc.constantFrom<unknown>(
  realRecall("claude"),
  realRecall("codex"),
  [{ type: "text", text: "[]" }],
  [{ type: "text", text: "  " }],
  [],
  {},
  { content: [{ type: "text", text: "[]" }], isError: false },
  { content: [{ type: "text", text: "boom" }], isError: true },
  { content: [{ type: "text", text: "x" }], is_error: "yes" },
  { error: "no store" },
  "plain text",
  "",
);
// Qwen's PostToolUse `tool_response`: Gemini-style parts under llmContent (measured on 0.24.4).
const qwenResponses = fc.constantFrom<unknown>(
  realRecall("qwen", "post-tool-use.recall"),
  { llmContent: [{ text: "[]" }], returnDisplay: "[]" },
  { llmContent: [{ text: " " }], returnDisplay: "" },
  { llmContent: [], returnDisplay: "" },
  { llmContent: "[]", returnDisplay: "[]" },
  { llmContent: [{ text: "x" }], error: { message: "boom" } },
  { llmContent: [{ inlineData: { mimeType: "image/png", data: "" } }] },
  { returnDisplay: "[]" },
  [{ type: "text", text: "[]" }],
  "[]",
  null,
);
const textResponses = fc.constantFrom<unknown>(
  realRecall("dsh"),
  "[]",
  '{"results":[]}',
  '{"error":"x"}',
  "nothing found",
  "",
  "  ",
  "[",
  7,
  null,
);

function claudeEditInput(tool: string, target: string | undefined): Record<string, unknown> {
  if (target === undefined) return {};
  return tool === "NotebookEdit"
    ? { notebook_path: target, new_source: "x" }
    : { file_path: target, content: "x\n", old_string: "a", new_string: "b" };
}

function qwenEditInput(tool: string, target: string | undefined): Record<string, unknown> {
  if (target === undefined) return {};
  return tool === "notebook_edit"
    ? { notebook_path: target, new_source: "x" }
    : { file_path: target, content: "x\n", old_string: "a", new_string: "b" };
}

const patchText = fc
  .record({
    targets: fc.array(fc.constantFrom(...TARGETS), { minLength: 0, maxLength: 3 }),
    ops: fc.array(fc.constantFrom("Add", "Update", "Delete"), { minLength: 3, maxLength: 3 }),
    move: fc.option(fc.constantFrom(...TARGETS), { nil: undefined }),
    heredoc: fc.constantFrom("", "<<'EOF'", "apply_patch <<EOF"),
    crlf: fc.boolean(),
  })
  .map(({ targets, ops, move, heredoc, crlf }) => {
    const lines = ["*** Begin Patch"];
    targets.forEach((t, i) => {
      lines.push(`*** ${ops[i]} File: ${t}`);
      if (i === 0 && move !== undefined && ops[0] === "Update") lines.push(`*** Move to: ${move}`);
      lines.push("@@", "-a", "+b");
    });
    lines.push("*** End Patch");
    const body = heredoc ? [heredoc, ...lines, "EOF"] : lines;
    return body.join(crlf ? "\r\n" : "\n");
  });

/** placement(entry) → the fields to lay over a template: cwd, tool, target, response, flags. */
function placement(entry: Entry): fc.Arbitrary<Record<string, unknown>> {
  const cwd = fc.constantFrom(...CWDS);
  const target = fc.option(fc.constantFrom(...TARGETS), { nil: undefined, freq: 6 });
  const session = fc.option(fc.constantFrom(...SESSIONS), { nil: undefined, freq: 4 });
  const withSession = (fields: fc.Arbitrary<Record<string, unknown>>, key = "session_id") =>
    fc
      .tuple(fields, session)
      .map(([f, s]) => (s === undefined ? { ...f, [`@DROP@${key}`]: true } : { ...f, [key]: s }));
  switch (`${entry.dialect}/${entry.wireName}`) {
    case "claude/PreToolUse":
      return withSession(
        fc
          .record({ cwd, tool: fc.constantFrom("Edit", "Write", "NotebookEdit", "Bash", "Read", "MultiEdit"), target })
          .map(({ cwd, tool, target }) => ({
            cwd,
            tool_name: tool,
            tool_input: claudeEditInput(tool, target),
          })),
      );
    case "codex/PreToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: fc.constantFrom("apply_patch", "apply_patch", "Edit", "Write", "Bash"),
            target,
            patch: patchText,
          })
          .map(({ cwd, tool, target, patch }) => ({
            cwd,
            tool_name: tool,
            tool_input:
              tool === "apply_patch" ? { command: patch } : tool === "Bash" ? { command: "ls" } : { file_path: target },
          })),
      );
    case "gemini/BeforeTool":
      return withSession(
        fc
          .record({ cwd, tool: fc.constantFrom("write_file", "replace", "run_shell_command", "read_file"), target })
          .map(({ cwd, tool, target }) => ({
            cwd,
            tool_name: tool,
            tool_input:
              target === undefined
                ? {}
                : { file_path: target, content: "x\n", old_string: "a", new_string: "b", instruction: "edit" },
          })),
      );
    case "gemini/AfterTool":
      return withSession(
        fc
          .record({
            cwd,
            server: fc.constantFrom("velesdb-memory", "velesdb_memory", "other"),
            tool: fc.constantFrom("recall_fused", "recall", "compile_context", "save_working_context"),
            input: recallInput,
            text: textResponses,
            error: fc.boolean(),
          })
          .map(({ cwd, server, tool, input, text, error }) => ({
            cwd,
            tool_name: `mcp_${server}_${tool}`,
            tool_input: input,
            tool_response: error
              ? { llmContent: String(text), returnDisplay: "Error", error: { message: "x", type: "mcp_tool_error" } }
              : {
                  llmContent: [{ text: `<untrusted_context>\n${String(text)}\n</untrusted_context>` }],
                  returnDisplay: String(text),
                },
            mcp_context: { server_name: server, tool_name: tool },
          })),
      );
    case "qwen/PreToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: fc.constantFrom(
              "edit",
              "write_file",
              "notebook_edit",
              "run_shell_command",
              "Write",
              "mcp__velesdb-memory__recall",
            ),
            target,
          })
          .map(({ cwd, tool, target }) => ({ cwd, tool_name: tool, tool_input: qwenEditInput(tool, target) })),
      );
    case "dsh/PreToolUse":
      return withSession(
        fc
          .record({ cwd, tool: fc.constantFrom("edit", "write", "str_replace_editor", "bash", "Edit") })
          .map(({ cwd, tool }) => ({ cwd, tool_name: tool, tool_input: { command: "" } })),
      );
    case "windsurf/pre_write_code":
      return fc
        .record({ target, trajectory: fc.option(fc.constantFrom(...SESSIONS), { nil: undefined }) })
        .map(({ target, trajectory }) => ({
          tool_info:
            target === undefined ? { edits: [] } : { file_path: target, edits: [{ old_string: "a", new_string: "b" }] },
          ...(trajectory === undefined ? { "@DROP@trajectory_id": true } : { trajectory_id: trajectory }),
        }));
    case "claude/PostToolUse":
      return withSession(
        fc.oneof(
          fc
            .record({ cwd, response: bashResponse, tool: fc.constantFrom("Bash", "Bash", "Bash", "Read") })
            .map(({ cwd, response, tool }) => ({
              cwd,
              tool_name: tool,
              tool_input: { command: "cargo build", description: "build" },
              tool_response: response,
            })),
          fc
            .record({ cwd, tool: recallToolNames, input: recallInput, response: structuredResponses })
            .map(({ cwd, tool, input, response }) => ({
              cwd,
              tool_name: tool,
              tool_input: input,
              tool_response: response,
            })),
        ),
      );
    case "codex/PostToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: recallToolNames.map((t) => t.replace("velesdb-memory", "velesdb_memory")),
            input: recallInput,
            response: structuredResponses,
          })
          .map(({ cwd, tool, input, response }) => ({
            cwd,
            tool_name: tool,
            tool_input: input,
            tool_response: response,
          })),
      );
    case "qwen/PostToolUse":
      return withSession(
        fc
          .record({ cwd, tool: recallToolNames, input: recallInput, response: qwenResponses })
          .map(({ cwd, tool, input, response }) => ({
            cwd,
            tool_name: tool,
            tool_input: input,
            tool_response: response,
          })),
      );
    case "dsh/PostToolUse":
      return withSession(
        fc
          .record({ cwd, tool: recallToolNames, input: recallInput, response: textResponses })
          .map(({ cwd, tool, input, response }) => ({
            cwd,
            tool_name: tool,
            tool_input: input,
            tool_response: response,
          })),
      );
    case "windsurf/post_mcp_tool_use":
      return fc
        .record({
          server: fc.constantFrom("velesdb-memory", "velesdb_memory", "other", ""),
          tool: fc.constantFrom("recall_fused", "recall", "compile_context", "save_working_context"),
          input: recallInput,
          response: textResponses,
        })
        .map(({ server, tool, input, response }) => ({
          tool_info: { mcp_server_name: server, mcp_tool_name: tool, mcp_tool_arguments: input, mcp_result: response },
        }));
    case "copilot/preToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: fc.constantFrom("edit", "create", "apply_patch", "apply_patch", "bash", "Write"),
            target,
            patch: patchText,
          })
          .map(({ cwd, tool, target, patch }) => ({
            cwd,
            toolName: tool,
            toolArgs:
              tool === "apply_patch"
                ? patch
                : tool === "bash"
                  ? { command: "ls" }
                  : target === undefined
                    ? {}
                    : { path: target, file_text: "x\n" },
          })),
        "sessionId",
      );
    case "copilot/postToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: recallToolNames.map((t) => t.replace(/^mcp__(.*)__/, "$1-")),
            input: recallInput,
            resultType: fc.constantFrom("success", "success", "failure", "denied", 3),
            text: textResponses,
          })
          .map(({ cwd, tool, input, resultType, text }) => ({
            cwd,
            toolName: tool,
            toolArgs: input,
            toolResult: { resultType, textResultForLlm: text },
          })),
        "sessionId",
      ).chain((recallPayload) =>
        fc.oneof(
          fc.constant(recallPayload),
          fc.record({ response: bashResponse, exit: fc.constantFrom(0, 1, 127) }).map(({ response, exit }) => ({
            ...recallPayload,
            toolName: "bash",
            toolArgs: { command: "cargo build", description: "build" },
            toolResult: {
              resultType: "success",
              textResultForLlm: `${isObjectLike(response) && typeof response.stdout === "string" ? response.stdout.replace(/\n$/, "") : ""}\n<shellId: 0 completed with exit code ${exit}>`,
            },
          })),
        ),
      );
    case "codebuddy/PreToolUse":
      return withSession(
        fc
          .record({ cwd, tool: fc.constantFrom("Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Read"), target })
          .map(({ cwd, tool, target }) => ({
            cwd,
            tool_name: tool,
            tool_input: claudeEditInput(tool, target),
          })),
      );
    case "codebuddy/PostToolUse":
      // CodeBuddy hands the MCP content array, with no error flag even for a failed call.
      return withSession(
        fc
          .record({ cwd, tool: recallToolNames, input: recallInput, response: structuredResponses })
          .map(({ cwd, tool, input, response }) => ({
            cwd,
            tool_name: tool,
            tool_input: input,
            tool_response: response,
          })),
      );
    case "droid/PreToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: fc.constantFrom("Create", "Edit", "MultiEdit", "Execute", "edit", "velesdb-memory___recall_fused"),
            target,
          })
          .map(({ cwd, tool, target }) => ({
            cwd,
            tool_name: tool,
            tool_input:
              tool === "Execute"
                ? { command: "ls", riskLevel: "low", riskLevelReason: "read only" }
                : target === undefined
                  ? {}
                  : { file_path: target, content: "x\n" },
          })),
      );
    case "droid/PostToolUse":
      return withSession(
        fc
          .record({
            cwd,
            tool: recallToolNames.map((t) => t.replace(/^mcp__(.*)__/, "$1___")),
            input: recallInput,
            response: textResponses,
          })
          .map(({ cwd, tool, input, response }) => ({
            cwd,
            tool_name: tool,
            tool_input: input,
            tool_response: response,
          })),
      );
    case "opencode/tool.execute.before":
      return withSession(
        fc
          .record({
            cwd,
            tool: fc.constantFrom("write", "edit", "patch", "multiedit", "apply_patch", "bash", "Write"),
            target,
            patch: patchText,
          })
          .map(({ cwd, tool, target, patch }) => ({
            cwd,
            tool_name: tool,
            tool_input:
              tool === "apply_patch"
                ? { patchText: patch }
                : tool === "bash"
                  ? { command: "ls" }
                  : target === undefined
                    ? {}
                    : { filePath: target, content: "x\n" },
          })),
      );
    case "opencode/tool.execute.after":
      return withSession(
        fc.oneof(
          fc
            .record({
              cwd,
              tool: recallToolNames.map((t) => t.replace(/^mcp__(.*)__/, "$1_")),
              input: recallInput,
              response: structuredResponses,
            })
            .map(({ cwd, tool, input, response }) => ({
              cwd,
              tool_name: tool,
              tool_input: input,
              tool_response: response,
            })),
          fc.record({ cwd, response: bashResponse }).map(({ cwd, response }) => ({
            cwd,
            tool_name: "bash",
            tool_input: { command: "cargo build", description: "build" },
            tool_response: {
              title: "cargo build",
              output: isObjectLike(response) && typeof response.stdout === "string" ? response.stdout : response,
              metadata: { exit: 0, truncated: false },
            },
          })),
        ),
      );
    case "pi/tool_call":
      return withSession(
        fc
          .record({ cwd, tool: fc.constantFrom("write", "edit", "bash", "read", "Write"), target })
          .map(({ cwd, tool, target }) => ({
            cwd,
            tool_name: tool,
            tool_input:
              tool === "bash" ? { command: "ls" } : target === undefined ? {} : { path: target, content: "x\n" },
          })),
      );
    case "pi/tool_result":
      return withSession(
        fc.oneof(
          fc
            .record({
              cwd,
              tool: recallToolNames,
              input: recallInput,
              response: structuredResponses,
              isError: fc.constantFrom(false, true),
            })
            .map(({ cwd, tool, input, response, isError }) => {
              const [, server, name] = /^mcp__(.*)__(.+)$/.exec(tool) ?? [];
              return {
                cwd,
                tool_name: "mcp",
                tool_input: { tool: `${server}_${name}`, args: JSON.stringify(input) },
                tool_response: { server, tool: name, mcpResult: response, isError },
              };
            }),
          fc.record({ cwd, response: bashResponse }).map(({ cwd, response }) => ({
            cwd,
            tool_name: "bash",
            tool_input: { command: "cargo build" },
            tool_response: {
              content: [
                {
                  type: "text",
                  text: isObjectLike(response) && typeof response.stdout === "string" ? response.stdout : response,
                },
              ],
              isError: false,
              truncated: false,
            },
          })),
        ),
      );
    case "pi/turn_end":
    case "opencode/session.idle":
      return withSession(fc.record({ cwd, stop_hook_active: fc.constantFrom(false, true, "true", 1, null) }));
    case "pi/before_agent_start":
    case "opencode/experimental.chat.system.transform":
      return withSession(fc.record({ cwd, source: fc.constantFrom("startup", "compact", 9) }));
    case "opencode/experimental.session.compacting":
      return withSession(fc.record({ cwd }));
    case "copilot/agentStop":
      return withSession(
        fc.record({ cwd, stop_hook_active: fc.constantFrom(false, true, "true", 1, null) }),
        "sessionId",
      );
    case "copilot/sessionStart":
      return withSession(fc.record({ cwd, source: fc.constantFrom("new", "resume", "startup", 9) }), "sessionId");
    case "claude/Stop":
    case "codebuddy/Stop":
    case "droid/Stop":
    case "codex/Stop":
    case "dsh/Stop":
    case "gemini/AfterAgent":
    case "qwen/Stop":
      return withSession(fc.record({ cwd, stop_hook_active: fc.constantFrom(false, true, "true", 1, null) }));
    case "claude/PreCompact":
    case "qwen/PreCompact":
      return withSession(
        fc.record({
          cwd,
          trigger: fc.constantFrom("auto", "manual", "other", 3),
          custom_instructions: fc.constantFrom(null, "", "keep the API names", 5),
        }),
      );
    case "claude/SessionStart":
    case "codebuddy/SessionStart":
    case "droid/SessionStart":
    case "codex/SessionStart":
    case "dsh/SessionStart":
    case "gemini/SessionStart":
    case "qwen/SessionStart":
      return withSession(
        fc.record({ cwd, source: fc.constantFrom("startup", "resume", "clear", "compact", "fork", 9) }),
      );
    case "windsurf/pre_user_prompt":
      return fc.record({ trajectory_id: fc.constantFrom(...SESSIONS) });
    default:
      throw new Error(`fuzz-payloads: no placement for ${entry.id}; add one`);
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations: walk to one field (by index over every field down to depth 3) and break it.

type Mutation =
  | { readonly pick: number; readonly op: "delete" }
  | { readonly pick: number; readonly op: "set"; readonly value: unknown }
  | { readonly pick: number; readonly op: "add"; readonly key: string; readonly value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ pick: fc.nat(), op: fc.constant("delete" as const) }),
  fc.record({ pick: fc.nat(), op: fc.constant("set" as const), value: weirdValue }),
  fc.record({ pick: fc.nat(), op: fc.constant("add" as const), key: keyArb, value: weirdValue }),
);

type Slot = { readonly holder: Record<string, unknown> | unknown[]; readonly key: string | number };

function slots(value: unknown, depth = 0, out: Slot[] = []): Slot[] {
  // A deep-nesting marker is one value: mutating inside it would only break the marker.
  if (depth > 3 || value === null || typeof value !== "object" || Object.hasOwn(value, "@DEEP@")) return out;
  if (Array.isArray(value)) {
    value.slice(0, 3).forEach((item, i) => {
      out.push({ holder: value, key: i });
      slots(item, depth + 1, out);
    });
  } else {
    for (const key of Object.keys(value)) {
      out.push({ holder: value as Record<string, unknown>, key });
      slots((value as Record<string, unknown>)[key], depth + 1, out);
    }
  }
  return out;
}

function setOwn(holder: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  Object.defineProperty(holder, key, { value, enumerable: true, writable: true, configurable: true });
}

function applyMutation(payload: Record<string, unknown>, m: Mutation): void {
  const all = slots(payload);
  if (m.op === "add") {
    const containers: Array<Record<string, unknown>> = [
      payload,
      ...all
        .map((s) => (s.holder as Record<string, unknown>)[s.key as string])
        .filter((v): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v)),
    ];
    setOwn(containers[m.pick % containers.length]!, m.key, structuredClone(m.value));
    return;
  }
  if (all.length === 0) return;
  const slot = all[m.pick % all.length]!;
  if (m.op === "delete") {
    if (Array.isArray(slot.holder)) slot.holder.splice(slot.key as number, 1);
    else delete slot.holder[slot.key as string];
  } else {
    setOwn(slot.holder, slot.key, structuredClone(m.value));
  }
}

/** shapedPayload(entry) → a template, placed in the sandbox, with up to four mutations. */
export function shapedPayload(entry: Entry): fc.Arbitrary<unknown> {
  return fc
    .record({
      template: fc.constantFrom(...templates(entry)),
      place: placement(entry),
      mutations: fc.array(mutation, { maxLength: 4 }),
    })
    .map(({ template, place, mutations }) => {
      const payload = structuredClone(template);
      for (const [key, value] of Object.entries(place)) {
        if (key.startsWith("@DROP@")) delete payload[key.slice(6)];
        else payload[key] = value;
      }
      const mutated = structuredClone(payload);
      for (const m of mutations) applyMutation(mutated, m);
      return mutated;
    });
}

// ---------------------------------------------------------------------------------------------
// Whole inputs that are not a payload at all.

const jsonText = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

function brokenText(entry: Entry): fc.Arbitrary<string> {
  const template = fc.constantFrom(...templates(entry)).map((t) => JSON.stringify(t));
  return fc.oneof(
    fc.tuple(template, fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(1, t.length))),
    template.map((t) => `\ufeff${t}`),
    template.map((t) => `${t}${t}`),
    fc.tuple(template, fc.string({ maxLength: 10 })).map(([t, s]) => `${t}\n${s}x`),
    template.map((t) => t.replace(/"/, '"\u0000')),
    fc.integer({ min: 1000, max: 200_000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
    fc.integer({ min: 1000, max: 200_000 }).map((n) => `{"a":${'{"a":'.repeat(n)}1${"}".repeat(n)}}`),
  );
}

const rawBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }).map((b) => Array.from(b)),
  fc.constantFrom(
    [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00],
    [0xef, 0xbb, 0xbf, 0x7b, 0x7d],
    [0x00],
    [0xc0, 0x80],
    [0xed, 0xa0, 0x80],
  ),
);

/** fuzzCase(entry) → one generated stdin with the process cwd to run it from. */
export function fuzzCase(entry: Entry): fc.Arbitrary<FuzzCase> {
  const processCwd = fc.constantFrom<ProcessCwd>("repo", "plain");
  return fc.oneof(
    {
      weight: 14,
      arbitrary: fc.record({ form: fc.constant("object" as const), payload: shapedPayload(entry), processCwd }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        form: fc.constant("object" as const),
        payload: jsonText.map((t) => JSON.parse(t) as unknown),
        processCwd,
      }),
    },
    { weight: 2, arbitrary: fc.record({ form: fc.constant("text" as const), text: brokenText(entry), processCwd }) },
    { weight: 1, arbitrary: fc.record({ form: fc.constant("bytes" as const), bytes: rawBytes, processCwd }) },
  );
}

// ---------------------------------------------------------------------------------------------
// Encoding: markers expanded, the sandbox root filled in.

/** encodeCase(c, root) → the stdin bytes the hook receives. */
export function encodeCase(c: FuzzCase, root: string): Uint8Array {
  if (c.form === "bytes") return Uint8Array.from(c.bytes);
  const text = c.form === "text" ? c.text : expandMarkers(JSON.stringify(c.payload) ?? "null");
  return new TextEncoder().encode(text.split(SANDBOX_TOKEN).join(root));
}

function expandMarkers(json: string): string {
  return json
    .replace(/"@HUGE:(\d+):(\d+)@"/g, (_m, size: string, code: string) => {
      const unit = code === "55296" ? "\\ud800" : JSON.stringify(String.fromCodePoint(Number(code))).slice(1, -1);
      return `"${unit.repeat(Math.ceil(Number(size) / Math.max(1, String.fromCodePoint(Number(code)).length)))}"`;
    })
    .replace(/\{"@DEEP@":(\d+),"array":(true|false)\}/g, (_m, depth: string, array: string) => {
      const n = Math.min(Number(depth), 200_000);
      return array === "true" ? `${"[".repeat(n)}1${"]".repeat(n)}` : `${'{"d":'.repeat(n)}1${"}".repeat(n)}`;
    });
}

/** describeCase(c) → a short line for a report: form, cwd and the first bytes. */
export function describeCase(c: FuzzCase): string {
  const head =
    c.form === "bytes"
      ? `bytes[${c.bytes.length}]`
      : c.form === "text"
        ? JSON.stringify(c.text.slice(0, 160))
        : JSON.stringify(c.payload)?.slice(0, 300);
  return `${c.form} from ws/${c.processCwd}: ${head}`;
}

function isObjectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
