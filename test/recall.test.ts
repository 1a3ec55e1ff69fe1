// docs/contract.md §6.2, §4.3, §4.4: which PostToolUse payloads count as a successful velesdb-memory recall.
// A wrong "yes" unlocks an edit, a wrong "no" costs one more recall, so each negative row sits
// next to a positive control that takes the same path and succeeds: the negative fails for the
// reason it names, not because the path can never succeed.
import { describe, expect, test } from "bun:test";
import { loadPayload } from "./support/hook-runner.ts";
import {
  bareVelesdbToolName,
  classifyRecall,
  isVelesdbRecallToolName,
  mcpToolName,
  type RecallResponseForm,
  type RecallScope,
} from "../src/core/recall.ts";

// The three captured payloads (research/payloads/…), reduced to the fields the rule reads.
// claude/PostToolUse.mcp.json — Claude Code 2.1.328: a bare content array.
const CLAUDE = {
  tool_name: "mcp__velesdb-memory__recall_fused",
  tool_input: { query: "auth flow", project: "p" },
  tool_response: [{ type: "text", text: 'MCP_recall_fused_RESULT {"query":"auth flow","project":"p"}' }],
} as const;
// codex/PostToolUse.mcp__velesdb_memory__recall_fused.json — codex-cli 0.169.0: `{content, isError}`.
const CODEX = {
  tool_name: "mcp__velesdb_memory__recall_fused",
  tool_input: { query: "prior patterns", filter: { project: "demo" } },
  tool_response: { content: [{ type: "text", text: "[]" }], isError: false },
} as const;
// dsh/PostToolUse.mcp.json — DeepSeek-harness Codex bridge: `{command}` input, plain-text response.
const DSH = {
  tool_name: "mcp__velesdb-memory__recall_fused",
  tool_input: { command: "" },
  tool_response: "[]",
} as const;

const RECALL = "mcp__velesdb-memory__recall";
// velesdb-memory answers a recall with JSON text: an array of hits (or an object holding them).
const HITS = '[{"id_str":"7","text":"one memory"}]';
const TEXT_BLOCK = [{ type: "text", text: HITS }];
const CODEX_OK = { content: [{ type: "text", text: HITS }], isError: false };

type Row = readonly [
  label: string,
  toolName: unknown,
  toolInput: unknown,
  toolResponse: unknown,
  form: RecallResponseForm,
  successful: boolean,
];

describe("classifyRecall: the captured payloads", () => {
  const rows: Row[] = [
    // The captured text came from the capture's mock server, not velesdb-memory: it is free
    // text, so it is not a recall result (docs/decisions.md#the-learning-loop); the same array with JSON text is.
    [
      "Claude content array, mock server's free text",
      CLAUDE.tool_name,
      CLAUDE.tool_input,
      CLAUDE.tool_response,
      "structured",
      false,
    ],
    [
      "Claude content array, JSON text",
      CLAUDE.tool_name,
      CLAUDE.tool_input,
      [{ type: "text", text: "[]" }],
      "structured",
      true,
    ],
    [
      "Codex {content, isError:false} with text []",
      CODEX.tool_name,
      CODEX.tool_input,
      CODEX.tool_response,
      "structured",
      true,
    ],
    ["dsh plain text []", DSH.tool_name, DSH.tool_input, DSH.tool_response, "text", true],
  ];
  test.each(rows)("%s", (_label, name, input, response, form, successful) => {
    expect(classifyRecall(name, input, response, form).successful).toBe(successful);
  });

  // velesdb-memory's real answer (the test double's, test/e2e/velesdb-memory-wire.json; 0.17.0
  // answers recall_fused byte for byte as 0.12.0 did) as each host handed it to the hook,
  // recorded through the recall matrix (docs/how-it-works.md#what-counts-as-a-recall-per-host-measured).
  const velesdb = (host: string) => loadPayload(host, "post-tool-use.recall-fused").tool_response;
  const answerText = velesdb("dsh") as string;
  const realRows: Row[] = [
    [
      "Claude: a bare JSON string (structuredContent re-serialised)",
      CLAUDE.tool_name,
      {},
      velesdb("claude"),
      "structured",
      true,
    ],
    [
      "Claude: the content array of a text-only server",
      CLAUDE.tool_name,
      {},
      [{ type: "text", text: answerText }],
      "structured",
      true,
    ],
    [
      "Claude: prose in the content array",
      CLAUDE.tool_name,
      {},
      [{ type: "text", text: "Found 1 memory: parser.txt holds the grammar." }],
      "structured",
      false,
    ],
    ["Codex: {content, structuredContent, isError:false}", CODEX.tool_name, {}, velesdb("codex"), "structured", true],
    [
      "Codex: {content, isError:false} of a text-only server",
      CODEX.tool_name,
      {},
      { content: [{ type: "text", text: answerText }], isError: false },
      "structured",
      true,
    ],
    [
      "Codex: rmcp's isError for bad arguments",
      CODEX.tool_name,
      {},
      { content: [{ type: "text", text: "failed to deserialize parameters: missing field `query`" }], isError: true },
      "structured",
      false,
    ],
    ["dsh: the text of velesdb-memory's block", DSH.tool_name, {}, answerText, "text", true],
    [
      "dsh: a JSON-RPC error as the MCP SDKs word it",
      DSH.tool_name,
      {},
      "MCP error -32602: metadata key 'content' is reserved",
      "text",
      false,
    ],
  ];
  test.each(realRows)("velesdb-memory's real answer, %s", (_label, name, input, response, form, successful) => {
    expect(classifyRecall(name, input, response, form).successful).toBe(successful);
  });

  test("scopes of the captured payloads", () => {
    // Claude's top-level `project` is an argument of the tool, not a filter: docs/contract.md §6.2 reads
    // only filter.project and memory_scope.project.
    expect(classifyRecall(CLAUDE.tool_name, CLAUDE.tool_input, CLAUDE.tool_response, "structured").scope).toEqual({
      present: false,
    });
    expect(classifyRecall(CODEX.tool_name, CODEX.tool_input, CODEX.tool_response, "structured").scope).toEqual({
      present: true,
      project: "demo",
    });
    expect(classifyRecall(DSH.tool_name, DSH.tool_input, DSH.tool_response, "text").scope).toEqual({ present: false });
  });
});

describe("classifyRecall: tool names", () => {
  const rows: Row[] = [
    // Every recall tool, in both server spellings.
    ...["recall", "recall_fused", "recall_where", "entity", "why"].flatMap((tool): Row[] => [
      [`${tool} (velesdb-memory)`, `mcp__velesdb-memory__${tool}`, {}, TEXT_BLOCK, "structured", true],
      [`${tool} (velesdb_memory)`, `mcp__velesdb_memory__${tool}`, {}, CODEX_OK, "structured", true],
    ]),
    // Plugin form: the plugin name has no underscore (the Claude matcher's own shape).
    ["plugin form, hyphen", "mcp__plugin_veles_velesdb-memory__recall", {}, TEXT_BLOCK, "structured", true],
    ["plugin form, underscore", "mcp__plugin_veles_velesdb_memory__recall_fused", {}, TEXT_BLOCK, "structured", true],
    [
      "plugin form, plugin name with a hyphen",
      "mcp__plugin_velesdb-tools_velesdb-memory__why",
      {},
      TEXT_BLOCK,
      "structured",
      true,
    ],
    [
      "plugin form, plugin name with an underscore",
      "mcp__plugin_my_tools_velesdb-memory__recall",
      {},
      TEXT_BLOCK,
      "structured",
      false,
    ],
    ["plugin form, empty plugin name", "mcp__plugin__velesdb-memory__recall", {}, TEXT_BLOCK, "structured", false],
    // Other velesdb-memory tools are not recalls.
    ["save_working_context", "mcp__velesdb-memory__save_working_context", {}, TEXT_BLOCK, "structured", false],
    ["load_working_context", "mcp__velesdb_memory__load_working_context", {}, CODEX_OK, "structured", false],
    ["a recall tool name with a suffix", "mcp__velesdb-memory__recall_fused2", {}, TEXT_BLOCK, "structured", false],
    ["a recall tool name in another case", "mcp__velesdb-memory__Recall", {}, TEXT_BLOCK, "structured", false],
    // Other servers, and near misses of ours.
    ["another server's recall", "mcp__other-memory__recall", {}, TEXT_BLOCK, "structured", false],
    ["server name with a suffix", "mcp__velesdb-memory-dev__recall", {}, TEXT_BLOCK, "structured", false],
    ["server name with a prefix", "mcp__my-velesdb-memory__recall", {}, TEXT_BLOCK, "structured", false],
    ["server spelled with a space", "mcp__velesdb memory__recall", {}, TEXT_BLOCK, "structured", false],
    ["single underscore separators", "mcp_velesdb-memory_recall", {}, TEXT_BLOCK, "structured", false],
    ["bare tool name", "recall", {}, TEXT_BLOCK, "structured", false],
    ["no tool after the server", "mcp__velesdb-memory__", {}, TEXT_BLOCK, "structured", false],
    ["a newline inside the name", "mcp__velesdb-memory__recall\n", {}, TEXT_BLOCK, "structured", false],
    ["tool_name missing", undefined, {}, TEXT_BLOCK, "structured", false],
    ["tool_name a number", 7, {}, TEXT_BLOCK, "structured", false],
    ["tool_name an array", [RECALL], {}, TEXT_BLOCK, "structured", false],
  ];
  test.each(rows)("%s", (_label, name, input, response, form, successful) => {
    expect(classifyRecall(name, input, response, form).successful).toBe(successful);
  });
});

describe("classifyRecall: compile_context counts only with a memory_scope", () => {
  const name = "mcp__velesdb-memory__compile_context";
  type ScopedRow = readonly [
    label: string,
    toolName: string,
    toolInput: unknown,
    toolResponse: unknown,
    form: RecallResponseForm,
    successful: boolean,
    why: RegExp,
  ];
  const rows: ScopedRow[] = [
    [
      "memory_scope object",
      name,
      { memory_scope: { project: "demo" } },
      TEXT_BLOCK,
      "structured",
      true,
      /1 text block/,
    ],
    ["memory_scope empty object", name, { memory_scope: {} }, TEXT_BLOCK, "structured", true, /1 text block/],
    ["memory_scope a string", name, { memory_scope: "demo" }, CODEX_OK, "structured", true, /1 text block/],
    [
      "underscore server, dsh text",
      "mcp__velesdb_memory__compile_context",
      { memory_scope: { project: "demo" } },
      '{"context":"x"}',
      "text",
      true,
      /JSON object/,
    ],
    ["memory_scope null", name, { memory_scope: null }, TEXT_BLOCK, "structured", false, /without memory_scope/],
    ["memory_scope missing", name, { text: "compile this" }, TEXT_BLOCK, "structured", false, /without memory_scope/],
    [
      "only a filter, no memory_scope",
      name,
      { filter: { project: "demo" } },
      TEXT_BLOCK,
      "structured",
      false,
      /without memory_scope/,
    ],
    ["tool_input missing", name, undefined, TEXT_BLOCK, "structured", false, /without memory_scope/],
    ["tool_input an array", name, [{ memory_scope: {} }], TEXT_BLOCK, "structured", false, /without memory_scope/],
    ["tool_input a string", name, "memory_scope", TEXT_BLOCK, "structured", false, /without memory_scope/],
    [
      "scoped, but the response failed",
      name,
      { memory_scope: {} },
      { content: TEXT_BLOCK, isError: true },
      "structured",
      false,
      /isError is true/,
    ],
  ];
  test.each(rows)("%s", (_label, toolName, input, response, form, successful, why) => {
    const verdict = classifyRecall(toolName, input, response, form);
    expect(verdict.successful).toBe(successful);
    expect(verdict.why).toMatch(why);
  });
});

describe("classifyRecall: structured responses (Claude, Codex)", () => {
  type ResponseRow = readonly [label: string, response: unknown, successful: boolean, why: RegExp];
  const rows: ResponseRow[] = [
    // Claude: a content array.
    ["one text block of hits", [{ type: "text", text: HITS }], true, /1 text block/],
    ["text block reading [] (ran, found nothing)", [{ type: "text", text: "[]" }], true, /1 text block/],
    ["text block holding a JSON object", [{ type: "text", text: '{"results":[]}' }], true, /1 text block/],
    [
      "two text blocks",
      [
        { type: "text", text: "[]" },
        { type: "text", text: HITS },
      ],
      true,
      /2 text blocks/,
    ],
    [
      "a text block after an image block",
      [
        { type: "image", data: "…" },
        { type: "text", text: "[]" },
      ],
      true,
      /1 text block/,
    ],
    [
      "an empty block beside a full one",
      [
        { type: "text", text: "" },
        { type: "text", text: "[]" },
      ],
      true,
      /1 text block/,
    ],
    // docs/decisions.md#the-learning-loop: only text that parses as a recall result counts.
    ["text block of free text", [{ type: "text", text: "a memory" }], false, /text block 1: the text is not JSON/],
    ["text block reading 'nothing found'", [{ type: "text", text: "nothing found" }], false, /not JSON/],
    ["text block reading ok", [{ type: "text", text: "ok" }], false, /not JSON/],
    ["text block parsing as {error}", [{ type: "text", text: '{"error":"backend down"}' }], false, /error key/],
    [
      "a result block beside an error block",
      [
        { type: "text", text: "[]" },
        { type: "text", text: '{"error":"partial"}' },
      ],
      false,
      /text block 2: .*error key/,
    ],
    [
      "a result block beside free text",
      [
        { type: "text", text: "[]" },
        { type: "text", text: "Error: timed out" },
      ],
      false,
      /text block 2: .*not JSON/,
    ],
    ["text block parsing as a JSON string", [{ type: "text", text: '"ok"' }], false, /not an array or object/],
    ["empty array", [], false, /content array is empty/],
    ["only an image block", [{ type: "image", data: "…" }], false, /no non-empty text block/],
    ["text block with empty text", [{ type: "text", text: "" }], false, /no non-empty text block/],
    ["text block with blank text", [{ type: "text", text: " \n\t" }], false, /no non-empty text block/],
    ["text block without text", [{ type: "text" }], false, /no non-empty text block/],
    ["text block whose text is not a string", [{ type: "text", text: ["a"] }], false, /no non-empty text block/],
    ["text that is not in a text-typed block", [{ type: "resource", text: "a" }], false, /no non-empty text block/],
    ["array of strings, not blocks", ["a memory"], false, /no non-empty text block/],
    ["array of nulls", [null, null], false, /no non-empty text block/],

    // Codex: {content, isError}.
    ["isError false with text", { content: [{ type: "text", text: "[]" }], isError: false }, true, /1 text block/],
    ["no isError flag with text", { content: [{ type: "text", text: "[]" }] }, true, /1 text block/],
    ["isError null with text", { content: [{ type: "text", text: "[]" }], isError: null }, true, /1 text block/],
    [
      "extra fields ignored",
      { content: [{ type: "text", text: "[]" }], isError: false, structuredContent: { hits: [] }, _meta: {} },
      true,
      /1 text block/,
    ],
    ["isError false, free text", { content: [{ type: "text", text: "ok" }], isError: false }, false, /not JSON/],
    [
      "isError false, text parsing as {error}",
      { content: [{ type: "text", text: '{"error":{"code":-32000}}' }], isError: false },
      false,
      /error key/,
    ],
    ["isError true", { content: [{ type: "text", text: "a" }], isError: true }, false, /isError is true/],
    ["is_error true", { content: [{ type: "text", text: "a" }], is_error: true }, false, /is_error is true/],
    ["isError a string", { content: [{ type: "text", text: "a" }], isError: "true" }, false, /isError is not false/],
    ["is_error 1", { content: [{ type: "text", text: "a" }], is_error: 1 }, false, /is_error is not false/],
    ["error field", { content: [{ type: "text", text: "a" }], error: "backend down" }, false, /error field/],
    [
      "error field null still counts as an error",
      { content: [{ type: "text", text: "a" }], isError: false, error: null },
      false,
      /error field/,
    ],
    ["error field alone", { error: { code: -32000, message: "boom" } }, false, /error field/],
    ["empty object", {}, false, /no content array/],
    ["content not an array", { content: "a memory", isError: false }, false, /no content array/],
    ["empty content array", { content: [], isError: false }, false, /content array is empty/],
    [
      "content with only empty text",
      { content: [{ type: "text", text: "" }], isError: false },
      false,
      /no non-empty text block/,
    ],
    [
      "content with only non-text blocks",
      { content: [{ type: "image", data: "…" }], isError: false },
      false,
      /no non-empty text block/,
    ],

    // Claude Code 2.1.328–2.1.332 hands a server that answers with structuredContent (rmcp
    // Json<T>: velesdb-memory's recall tools) to the hook as a bare JSON string, the serialised
    // structuredContent (docs/how-it-works.md#what-counts-as-a-recall-per-host-measured). Such a
    // string counts exactly as a text host's would; a bare
    // string that is not JSON ("ok", an error message) never counts (docs/decisions.md#the-learning-loop).
    [
      "bare string: velesdb-memory recall_fused",
      '{"memories":[{"id":7,"id_str":"7","score":0.91,"content":"a"}],"now":"2026-12-01T00:00:00Z"}',
      true,
      /a bare string: a JSON object/,
    ],
    ["bare string: no memories", '{"memories":[]}', true, /a bare string: a JSON object/],
    ["bare string: pretty-printed", '{\n  "memories": []\n}', true, /a bare string: a JSON object/],
    ["bare string: JSON array", "[]", true, /a bare string: a JSON array/],
    [
      "bare string: JSON with an error key",
      '{"error":"backend down"}',
      false,
      /a bare string: the JSON has an error key/,
    ],
    ["bare string: JSON string", '"ok"', false, /a bare string: the text is JSON but not an array or object/],
    ["bare string: JSON number", "42", false, /a bare string: the text is JSON but not an array or object/],
    ["bare string: free text", "a memory", false, /a bare string: the text is not JSON/],
    ["bare string: ok", "ok", false, /a bare string: the text is not JSON/],
    [
      "bare string: an error message",
      "MCP error -32603: memory store unavailable",
      false,
      /a bare string: the text is not JSON/,
    ],
    ["bare empty string", "", false, /a bare string: the text response is empty/],
    ["bare blank string", " \n", false, /a bare string: the text response is empty/],

    // Neither array, object nor string.
    ["null", null, false, /not a content array or object/],
    ["undefined", undefined, false, /not a content array or object/],
    ["number", 0, false, /not a content array or object/],
    ["boolean", true, false, /not a content array or object/],
  ];
  test.each(rows)("%s", (_label, response, successful, why) => {
    const verdict = classifyRecall(RECALL, {}, response, "structured");
    expect(verdict.successful).toBe(successful);
    expect(verdict.why).toMatch(why);
    expect(verdict.why).toStartWith("recall: ");
  });
});

describe("classifyRecall: text responses (dsh, Windsurf mcp_result)", () => {
  type ResponseRow = readonly [label: string, response: unknown, successful: boolean, why: RegExp];
  const rows: ResponseRow[] = [
    ["JSON empty array", "[]", true, /JSON array/],
    ["JSON array of hits", '[{"id":1,"text":"a"}]', true, /JSON array/],
    ["JSON array padded with whitespace", "\n  [ ]  \n", true, /JSON array/],
    ["JSON object without error", '{"results":[],"count":0}', true, /JSON object/],
    ["JSON empty object", "{}", true, /JSON object/],
    ["JSON object with a nested error key", '{"results":[{"error":"x"}]}', true, /JSON object/],
    ["JSON object with an error key", '{"error":"backend down"}', false, /error key/],
    ["JSON object with error null", '{"results":[],"error":null}', false, /error key/],
    ["free text", "nothing found", false, /not JSON/],
    ["an MCP error message", "MCP error -32000: backend down", false, /not JSON/],
    ["truncated JSON", '[{"id":1', false, /not JSON/],
    ["JSON string", '"ok"', false, /not an array or object/],
    ["JSON number", "42", false, /not an array or object/],
    ["JSON null", "null", false, /not an array or object/],
    ["JSON true", "true", false, /not an array or object/],
    ["empty string", "", false, /empty/],
    ["blank string", " \n ", false, /empty/],
    ["a content array object instead of text", { content: [{ type: "text", text: "[]" }] }, false, /not text/],
    ["an array instead of text", [{ type: "text", text: "[]" }], false, /not text/],
    ["null", null, false, /not text/],
    ["NUL byte inside a JSON string", '["a\\u0000b"]', true, /JSON array/],
    ["raw NUL byte", "[]\u0000", false, /not JSON/],
  ];
  test.each(rows)("%s", (_label, response, successful, why) => {
    const verdict = classifyRecall(RECALL, {}, response, "text");
    expect(verdict.successful).toBe(successful);
    expect(verdict.why).toMatch(why);
  });

  test("a 5 MB JSON array is accepted, a 5 MB prose answer is not", () => {
    const hits = JSON.stringify(Array.from({ length: 50_000 }, (_, index) => ({ id: index, text: "x".repeat(80) })));
    expect(classifyRecall(RECALL, {}, hits, "text").successful).toBe(true);
    expect(classifyRecall(RECALL, {}, "x".repeat(5_000_000), "text").successful).toBe(false);
  });
});

describe("classifyRecall: scope", () => {
  type ScopeRow = readonly [label: string, toolInput: unknown, scope: RecallScope];
  const rows: ScopeRow[] = [
    ["filter.project", { filter: { project: "demo" } }, { present: true, project: "demo" }],
    ["memory_scope.project", { memory_scope: { project: "demo" } }, { present: true, project: "demo" }],
    [
      "both, agreeing",
      { filter: { project: "demo" }, memory_scope: { project: "demo" } },
      { present: true, project: "demo" },
    ],
    [
      "both, disagreeing: no project can match",
      { filter: { project: "a" }, memory_scope: { project: "b" } },
      { present: true, project: undefined },
    ],
    [
      "one valid, one empty: no project can match",
      { filter: { project: "a" }, memory_scope: { project: "" } },
      { present: true, project: undefined },
    ],
    ["filter.project empty", { filter: { project: "" } }, { present: true, project: undefined }],
    ["filter.project null", { filter: { project: null } }, { present: true, project: undefined }],
    ["filter.project a number", { filter: { project: 7 } }, { present: true, project: undefined }],
    ["filter.project an array", { filter: { project: ["demo"] } }, { present: true, project: undefined }],
    [
      "memory_scope.project an object",
      { memory_scope: { project: { name: "demo" } } },
      { present: true, project: undefined },
    ],
    ["filter without project", { filter: { kind: "decision" } }, { present: false }],
    ["filter not an object", { filter: "project=demo" }, { present: false }],
    ["filter an array holding a project", { filter: [{ project: "demo" }] }, { present: false }],
    ["memory_scope a string", { memory_scope: "demo" }, { present: false }],
    ["top-level project is a tool argument, not a scope", { project: "demo" }, { present: false }],
    ["no tool_input", undefined, { present: false }],
    ["tool_input a string", "filter.project=demo", { present: false }],
    [
      "project name with spaces kept as is",
      { filter: { project: " my project " } },
      { present: true, project: " my project " },
    ],
  ];
  test.each(rows)("%s", (_label, input, scope) => {
    expect(classifyRecall(RECALL, input, TEXT_BLOCK, "structured").scope).toEqual(scope);
  });

  test("the scope is reported for a failed recall too", () => {
    const verdict = classifyRecall(RECALL, { filter: { project: "demo" } }, [], "structured");
    expect(verdict.successful).toBe(false);
    expect(verdict.scope).toEqual({ present: true, project: "demo" });
  });
});

describe("classifyRecall never throws", () => {
  const hostile: ReadonlyArray<readonly [string, unknown]> = [
    [
      "a getter that throws",
      Object.defineProperty({}, "content", {
        get: () => {
          throw new Error("boom");
        },
        enumerable: true,
      }),
    ],
    [
      "a proxy that throws on every read",
      new Proxy(
        {},
        {
          get: () => {
            throw new Error("boom");
          },
          has: () => {
            throw new Error("boom");
          },
          getOwnPropertyDescriptor: () => {
            throw new Error("boom");
          },
        },
      ),
    ],
    ["a symbol", Symbol("x")],
    ["a function", () => "[]"],
    ["a bigint", 10n],
  ];
  test.each(hostile)("%s as tool_response and tool_input", (_label, value) => {
    for (const form of ["structured", "text", "html" as RecallResponseForm] as const) {
      const asResponse = classifyRecall(RECALL, {}, value, form);
      expect(asResponse.successful).toBe(false);
      expect(() => classifyRecall(RECALL, value, TEXT_BLOCK, form)).not.toThrow();
    }
  });

  test("an unknown response form is not evidence; the same response in a known form is", () => {
    expect(classifyRecall(RECALL, {}, TEXT_BLOCK, "html" as RecallResponseForm)).toMatchObject({
      successful: false,
      why: "recall: unknown response form",
    });
    expect(classifyRecall(RECALL, {}, TEXT_BLOCK, "structured").successful).toBe(true);
  });
});

describe("tool-name helpers", () => {
  const rows: ReadonlyArray<readonly [string, unknown, string | undefined, boolean]> = [
    ["dash server", "mcp__velesdb-memory__recall_fused", "recall_fused", true],
    ["underscore server", "mcp__velesdb_memory__why", "why", true],
    ["plugin form", "mcp__plugin_veles_velesdb-memory__entity", "entity", true],
    [
      "compile_context is a candidate (its input decides)",
      "mcp__velesdb-memory__compile_context",
      "compile_context",
      true,
    ],
    ["a non-recall tool of ours", "mcp__velesdb-memory__save_working_context", "save_working_context", false],
    ["another server", "mcp__github__search", undefined, false],
    ["Bash", "Bash", undefined, false],
    ["not a string", 42, undefined, false],
  ];
  test.each(rows)("%s", (_label, name, bare, isRecall) => {
    expect(bareVelesdbToolName(name)).toBe(bare);
    expect(isVelesdbRecallToolName(name as string)).toBe(isRecall);
  });

  test("mcpToolName joins Windsurf's server and tool fields into a name the rule reads", () => {
    expect(mcpToolName("velesdb-memory", "recall")).toBe("mcp__velesdb-memory__recall");
    expect(mcpToolName("velesdb_memory", "recall_fused")).toBe("mcp__velesdb_memory__recall_fused");
    expect(isVelesdbRecallToolName(mcpToolName("velesdb-memory", "recall") ?? "")).toBe(true);
    expect(isVelesdbRecallToolName(mcpToolName("other", "recall") ?? "")).toBe(false);
    expect(mcpToolName("", "recall")).toBeUndefined();
    expect(mcpToolName("velesdb-memory", "")).toBeUndefined();
    expect(mcpToolName(undefined, "recall")).toBeUndefined();
    expect(mcpToolName("velesdb-memory", 3)).toBeUndefined();
  });
});
