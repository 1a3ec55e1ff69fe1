// Host transcripts → compile_transcript's JSONL (src/core/transcript.ts, docs/working-context.md#transcripts-per-host), on the files
// the real hosts wrote (fixtures/transcripts/, scripts/capture-transcripts.ts): each converts to
// the conversation of the scripted session (test/support/transcript-session.ts) and nothing
// else; the JSONL passes the real velesdb-memory 0.17.0 as `jsonl`, one segment per turn, where
// the raw file does not; bad files (torn, huge, binary, linked, a FIFO) never throw.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  compileTranscriptInput,
  cutUtf8,
  MAX_TRANSCRIPT_TURNS,
  MAX_TURN_BYTES,
  readTranscriptTail,
  TOOL_RESULT_MAX_BYTES,
  TRANSCRIPT_FORMAT_OF_HOST,
  transcriptTurns,
  withLastAssistantMessage,
  type TranscriptFormat,
  type TranscriptTurn,
} from "../src/core/transcript.ts";
import { describeWithReal, RealServer } from "./support/real-velesdb-memory.ts";
import {
  ANSWER_AFTER_COMPACT,
  ASSISTANT_FINAL,
  ASSISTANT_FIRST,
  CONTINUATION,
  NOTE_TEXT,
  PROMPT,
  PROMPT_AFTER_COMPACT,
  SUMMARY,
  THINKING,
  TOOL_COMMAND,
} from "./support/transcript-session.ts";

const FIXTURES = path.resolve(import.meta.dir, "..", "fixtures", "transcripts");
type Host = keyof typeof TRANSCRIPT_FORMAT_OF_HOST;
const FORMATS = [...new Set(Object.values(TRANSCRIPT_FORMAT_OF_HOST))] as TranscriptFormat[];

/** One expected turn: its role and its exact content, or a pattern where the host adds run-dependent text (ids, pids). */
type Expected = readonly [TranscriptTurn["role"], string | RegExp];

const toolResult = (tool: string): Expected => ["tool", new RegExp(`^${tool} result: [\\s\\S]*${NOTE_TEXT}`)];
/** Our Stop reason, where the host records it as a plain user message (Gemini CLI, Factory Droid, Copilot CLI). */
const stopReason: Expected = ["user", /^Before this session ends, /];

/** The session each fixture must give: prompt, first text, tool call and result, answer, then what followed. */
const CASES: readonly { readonly host: Host; readonly file: string; readonly turns: readonly Expected[] }[] = [
  {
    // At the last Stop the continuation's answer was not in the file yet (see withLastAssistantMessage).
    host: "claude",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `Bash: ${TOOL_COMMAND}`],
      ["tool", `Bash result: ${NOTE_TEXT}`],
      ["assistant", ASSISTANT_FINAL],
    ],
  },
  {
    host: "claude",
    file: "precompact.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `Bash: ${TOOL_COMMAND}`],
      ["tool", `Bash result: ${NOTE_TEXT}`],
      ["assistant", ASSISTANT_FINAL],
      ["assistant", CONTINUATION],
    ],
  },
  {
    // After compact_boundary: the summary, then the next prompt (its answer not yet written at Stop).
    host: "claude",
    file: "after-compact.jsonl",
    turns: [
      ["user", new RegExp(`^This session is being continued[\\s\\S]*${SUMMARY}`)],
      ["user", PROMPT_AFTER_COMPACT],
    ],
  },
  {
    host: "codex",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `exec_command: ${TOOL_COMMAND}`],
      toolResult("exec_command"),
      ["assistant", ASSISTANT_FINAL],
      ["assistant", CONTINUATION],
    ],
  },
  {
    // `compacted` replaced the history with the prompt and the summary; the answer came after it.
    host: "codex",
    file: "after-compact.jsonl",
    turns: [
      ["user", PROMPT],
      ["user", new RegExp(`^Another language model started to solve this problem[\\s\\S]*${SUMMARY}$`)],
      ["assistant", ASSISTANT_FINAL],
      ["assistant", CONTINUATION],
    ],
  },
  {
    host: "gemini",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `run_shell_command: ${TOOL_COMMAND}`],
      toolResult("run_shell_command"),
      ["assistant", ASSISTANT_FINAL],
      stopReason,
      ["assistant", CONTINUATION],
    ],
  },
  {
    host: "qwen",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `run_shell_command: ${TOOL_COMMAND}`],
      toolResult("run_shell_command"),
      ["assistant", ASSISTANT_FINAL],
      ["assistant", CONTINUATION],
    ],
  },
  {
    host: "droid",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `Execute: ${TOOL_COMMAND}`],
      toolResult("Execute"),
      ["assistant", ASSISTANT_FINAL],
      stopReason,
      ["assistant", CONTINUATION],
    ],
  },
  {
    host: "codebuddy",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `Bash: ${TOOL_COMMAND}`],
      toolResult("Bash"),
      ["assistant", ASSISTANT_FINAL],
      ["assistant", CONTINUATION],
    ],
  },
  {
    // The agentStop of the resumed run: the file held the first run only.
    host: "copilot",
    file: "stop.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `bash: ${TOOL_COMMAND}`],
      toolResult("bash"),
      ["assistant", ASSISTANT_FINAL],
      stopReason,
      ["assistant", CONTINUATION],
    ],
  },
  {
    host: "copilot",
    file: "end.jsonl",
    turns: [
      ["user", PROMPT],
      ["assistant", ASSISTANT_FIRST],
      ["tool", `bash: ${TOOL_COMMAND}`],
      toolResult("bash"),
      ["assistant", ASSISTANT_FINAL],
      stopReason,
      ["assistant", CONTINUATION],
      ["user", PROMPT_AFTER_COMPACT],
      ["assistant", ANSWER_AFTER_COMPACT],
    ],
  },
];

const fixtureText = (host: string, file: string): string => fs.readFileSync(path.join(FIXTURES, host, file), "utf8");
const turnsOf = (host: Host, file: string): TranscriptTurn[] =>
  transcriptTurns(TRANSCRIPT_FORMAT_OF_HOST[host], fixtureText(host, file));

/** Text the host puts around the conversation: none of it may become a turn. */
const PREAMBLES = [
  "<environment_context>", // Codex
  "<skills_instructions>", // Codex developer message
  "<session_context>", // Gemini CLI
  "<hook_context>", // Gemini CLI: our SessionStart context before the prompt
  "<system-reminder>", // Claude Code, Factory Droid
  "<hook_prompt", // Codex: our Stop reason
  "<local-command", // Claude Code: /compact's caveat and output
  "You are", // system prompts (Copilot's system.message, Claude's prompt snapshot)
  "load_working_context", // our SessionStart context, wherever a host records it
];

describe("each real transcript converts to its session", () => {
  test("every fixture file has a case, and every host one file at least", () => {
    const files = Object.keys(TRANSCRIPT_FORMAT_OF_HOST).flatMap((host) =>
      fs
        .readdirSync(path.join(FIXTURES, host))
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => `${host}/${f}`),
    );
    expect(CASES.map((c) => `${c.host}/${c.file}`).sort()).toEqual(files.sort());
  });

  test.each(CASES.map((c) => [`${c.host}/${c.file}`, c] as const))("%s", (_label, c) => {
    const turns = turnsOf(c.host, c.file);
    expect(turns.map((t) => t.role)).toEqual(c.turns.map(([role]) => role));
    c.turns.forEach(([, content], i) => {
      if (typeof content === "string") expect(turns[i]!.content).toBe(content);
      else expect(turns[i]!.content).toMatch(content);
    });
    const all = JSON.stringify(turns);
    expect(all).not.toContain(THINKING.slice(0, 30));
    for (const preamble of PREAMBLES) expect(all).not.toContain(preamble);
  });

  // Positive control for the checks above: the raw files do hold the reasoning and the preambles.
  test("the raw files hold the reasoning the conversion drops", () => {
    for (const c of CASES) {
      const raw = fixtureText(c.host, c.file);
      if (c.file === "after-compact.jsonl" && c.host === "claude") continue; // its thinking is before the boundary
      expect(raw).toContain(THINKING);
    }
    expect(fixtureText("codex", "stop.jsonl")).toContain("<environment_context>");
    expect(fixtureText("gemini", "stop.jsonl")).toContain("<hook_context>");
    expect(fixtureText("droid", "stop.jsonl")).toContain("<system-reminder>");
  });

  test("every format reads every other format's file without throwing, and finds no conversation in binary", () => {
    const garbage = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7919 + 13) % 256)).toString("latin1");
    for (const format of FORMATS) {
      for (const c of CASES) expect(() => transcriptTurns(format, fixtureText(c.host, c.file))).not.toThrow();
      expect(transcriptTurns(format, garbage)).toEqual([]);
      expect(transcriptTurns(format, "")).toEqual([]);
      expect(transcriptTurns(format, '{}\n[]\nnull\n{"type":\n')).toEqual([]);
      expect(transcriptTurns(format, undefined as unknown as string)).toEqual([]);
    }
  });

  test("a torn last line is skipped and the lines before it still count, at every cut", () => {
    for (const c of CASES) {
      const text = fixtureText(c.host, c.file);
      const whole = turnsOf(c.host, c.file).length;
      const lines = text.split("\n").filter((l) => l !== "");
      const lastLine = lines.at(-1)!;
      const before = text.slice(0, text.lastIndexOf(lastLine));
      const turnsBefore = transcriptTurns(TRANSCRIPT_FORMAT_OF_HOST[c.host], before).length;
      for (let cut = 1; cut < lastLine.length; cut += Math.max(1, Math.floor(lastLine.length / 40))) {
        const turns = transcriptTurns(TRANSCRIPT_FORMAT_OF_HOST[c.host], before + lastLine.slice(0, cut));
        expect(turns.length).toBe(turnsBefore);
      }
      expect(turnsBefore).toBeLessThanOrEqual(whole);
    }
  });
});

// Records the captures hold in one variant only, changed one field at a time from a real line.
describe("record variants, each made from a captured line", () => {
  const linesOf = (host: string, file: string) =>
    fixtureText(host, file)
      .split("\n")
      .filter((l) => l !== "");

  test("Gemini CLI: $rewindTo drops that message and every later one; an unknown id drops them all", () => {
    const lines = linesOf("gemini", "stop.jsonl");
    const finalAnswer = lines
      .map((l) => JSON.parse(l))
      .find((r) => r.type === "gemini" && r.content === ASSISTANT_FINAL);
    const rewound = transcriptTurns(
      "gemini-jsonl",
      [...lines, JSON.stringify({ $rewindTo: finalAnswer.id })].join("\n"),
    );
    expect(rewound.at(-1)!.content).toMatch(/^run_shell_command result: /);
    expect(rewound.map((t) => t.content)).not.toContain(ASSISTANT_FINAL);
    expect(transcriptTurns("gemini-jsonl", [...lines, JSON.stringify({ $rewindTo: "no-such-id" })].join("\n"))).toEqual(
      [],
    );
  });

  test("Claude Code: a side-chain record (a subagent's) is not the session's conversation", () => {
    const prompt = linesOf("claude", "stop.jsonl")
      .map((l) => JSON.parse(l))
      .find((r) => r.type === "user" && r.message?.content === PROMPT);
    expect(prompt.isSidechain).toBe(false);
    expect(transcriptTurns("claude-jsonl", JSON.stringify(prompt))).toEqual([{ role: "user", content: PROMPT }]);
    expect(transcriptTurns("claude-jsonl", JSON.stringify({ ...prompt, isSidechain: true }))).toEqual([]);
  });

  test("Factory Droid: a hook record (visibility user_only) is never a turn, whatever it holds", () => {
    const lines = linesOf("droid", "stop.jsonl");
    const hook = JSON.parse(lines.find((l) => l.includes('"user_only"'))!);
    hook.message.content = [{ type: "text", text: "shown to the user only" }];
    expect(transcriptTurns("droid-jsonl", JSON.stringify(hook))).toEqual([]);
    delete hook.message.visibility; // positive control: the same record, visible, is a turn
    expect(transcriptTurns("droid-jsonl", JSON.stringify(hook))).toEqual([
      { role: "user", content: "shown to the user only" },
    ]);
  });

  test("Codex: a `compacted` record without replacement_history keeps its summary message", () => {
    const line = linesOf("codex", "after-compact.jsonl").find((l) => l.includes('"type":"compacted"'))!;
    const record = JSON.parse(line);
    delete record.payload.replacement_history;
    const turns = transcriptTurns(
      "codex-rollout",
      [linesOf("codex", "stop.jsonl").join("\n"), JSON.stringify(record)].join("\n"),
    );
    expect(turns).toHaveLength(1);
    expect(turns[0]!.role).toBe("user");
    expect(turns[0]!.content).toEndWith(SUMMARY);
  });
});

describe("the transcript that lags behind the Stop payload", () => {
  test("Claude's last Stop: the continuation's answer is only in last_assistant_message, and is appended", () => {
    const turns = turnsOf("claude", "stop.jsonl");
    expect(turns.at(-1)).toEqual({ role: "assistant", content: ASSISTANT_FINAL });
    expect(withLastAssistantMessage(turns, CONTINUATION).at(-1)).toEqual({ role: "assistant", content: CONTINUATION });
    expect(withLastAssistantMessage(turns, CONTINUATION)).toHaveLength(turns.length + 1);
  });

  test("a transcript already ending with that answer, or no answer, is left as it is", () => {
    const turns = turnsOf("claude", "stop.jsonl");
    expect(withLastAssistantMessage(turns, `${ASSISTANT_FINAL}\n`)).toEqual(turns);
    for (const none of [undefined, null, "", "   ", 42, { text: "x" }])
      expect(withLastAssistantMessage(turns, none)).toEqual(turns);
  });

  test("after a compaction the prompt has no answer in the file yet: it is appended after the prompt", () => {
    const turns = withLastAssistantMessage(turnsOf("claude", "after-compact.jsonl"), ANSWER_AFTER_COMPACT);
    expect(turns.slice(-2)).toEqual([
      { role: "user", content: PROMPT_AFTER_COMPACT },
      { role: "assistant", content: ANSWER_AFTER_COMPACT },
    ]);
  });
});

describe("compileTranscriptInput", () => {
  const turn = (role: TranscriptTurn["role"], content: string): TranscriptTurn => ({ role, content });
  const parsedLines = (jsonl: string) => jsonl.split("\n").map((line) => JSON.parse(line));

  test("every line is exactly {role, content}, both strings, for every fixture", () => {
    for (const c of CASES) {
      const jsonl = compileTranscriptInput(turnsOf(c.host, c.file), 1 << 20);
      const lines = parsedLines(jsonl);
      expect(lines).toHaveLength(c.turns.length);
      for (const line of lines) {
        expect(Object.keys(line)).toEqual(["role", "content"]);
        expect(typeof line.role).toBe("string");
        expect(typeof line.content).toBe("string");
      }
    }
  });

  test("keeps the newest whole turns that fit, oldest first, within maxBytes", () => {
    const turns = Array.from({ length: 10 }, (_, i) =>
      turn(i % 2 ? "assistant" : "user", `turn ${i} ${"é".repeat(20)}`),
    );
    // The last three lines and their two newlines, in bytes (é is two).
    const lastThree = Buffer.byteLength(
      turns
        .slice(7)
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const jsonl = compileTranscriptInput(turns, lastThree);
    expect(parsedLines(jsonl).map((l) => l.content)).toEqual(turns.slice(7).map((t) => t.content));
    expect(Buffer.byteLength(jsonl)).toBe(lastThree);
    // One byte less and only two fit: whole turns, never a part of one.
    expect(parsedLines(compileTranscriptInput(turns, lastThree - 1)).map((l) => l.content)).toEqual(
      turns.slice(8).map((t) => t.content),
    );
  });

  test("a turn longer than the per-turn cap is cut at a UTF-8 boundary, with a marker", () => {
    const long = `${"日本語".repeat(4000)}END`; // 36 003 bytes, three bytes a character
    const jsonl = compileTranscriptInput([turn("user", "before"), turn("assistant", long)], 1 << 20);
    const [first, second] = parsedLines(jsonl);
    expect(first.content).toBe("before");
    expect(Buffer.byteLength(JSON.stringify(second))).toBeLessThanOrEqual(MAX_TURN_BYTES);
    expect(second.content).toMatch(/^(日本語)+(日本|日)? \[…\d+ bytes cut\]$/);
    expect(second.content).not.toContain("\uFFFD");
    expect(second.content).not.toContain("END");
  });

  test("the newest turn alone over maxBytes is cut to fit; escapes count (control characters take six bytes)", () => {
    const controls = "\u0001".repeat(5000);
    const jsonl = compileTranscriptInput([turn("tool", controls)], 2000);
    expect(Buffer.byteLength(jsonl)).toBeLessThanOrEqual(2000);
    expect(parsedLines(jsonl)[0].content).toMatch(/^\u0001+ \[…\d+ bytes cut\]$/);
  });

  test("at most MAX_TRANSCRIPT_TURNS turns, the newest; empty turns and a useless budget give nothing", () => {
    const many = Array.from({ length: MAX_TRANSCRIPT_TURNS + 5 }, (_, i) => turn("user", `t${i}`));
    const lines = parsedLines(compileTranscriptInput(many, 1 << 20));
    expect(lines).toHaveLength(MAX_TRANSCRIPT_TURNS);
    expect(lines.at(-1).content).toBe(`t${MAX_TRANSCRIPT_TURNS + 4}`);
    expect(lines[0].content).toBe("t5");
    expect(compileTranscriptInput([turn("user", "")], 1000)).toBe("");
    // A bound too small for any line (10 bytes), or no usable bound at all.
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 10])
      expect(compileTranscriptInput([turn("user", "hello there, a turn")], bad)).toBe("");
  });

  test("cutUtf8 keeps text that fits; a cut one is a prefix, whole characters only, never over the bound", () => {
    expect(cutUtf8("short", 10)).toBe("short");
    const text = "a🙂日é".repeat(40); // 1-, 4-, 3- and 2-byte characters
    for (let max = 0; max <= 220; max++) {
      const cut = cutUtf8(text, max);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(max);
      expect(cut).not.toContain("\uFFFD");
      if (cut !== "") expect(text.startsWith(cut.replace(/ \[…\d+ bytes cut\]$/, ""))).toBe(true);
    }
  });

  test("a tool result is its first TOOL_RESULT_MAX_BYTES", () => {
    const output = "x".repeat(TOOL_RESULT_MAX_BYTES * 3);
    const record = { type: "function_call_result", name: "Bash", callId: "c", output: { type: "text", text: output } };
    const [result] = transcriptTurns("codebuddy-jsonl", JSON.stringify(record));
    expect(Buffer.byteLength(result!.content)).toBeLessThanOrEqual(TOOL_RESULT_MAX_BYTES);
    expect(result!.content).toMatch(/^Bash result: x+ \[…\d+ bytes cut\]$/);
  });
});

describeWithReal("the real velesdb-memory 0.17.0 reads the JSONL as one segment per turn", () => {
  let server: RealServer;
  beforeAll(async () => {
    server = await RealServer.start();
  });
  afterAll(() => server?.stop());

  const compile = async (transcript: string) => {
    const answer = await server.tool("compile_transcript", {
      query: "what do the notes say",
      transcript,
      token_budget: 4000,
    });
    return answer;
  };
  const segmentationOf = (answer: Awaited<ReturnType<typeof compile>>) =>
    answer.result?.structuredContent?.segmentation as
      | { format_detected: string; segments: { role?: string; turn: number }[]; merged_segments: number }
      | undefined;

  test.each(CASES.map((c) => [`${c.host}/${c.file}`, c] as const))("%s", async (_label, c) => {
    const turns = turnsOf(c.host, c.file);
    const answer = await compile(compileTranscriptInput(turns, 1 << 20));
    expect(answer.error).toBeUndefined();
    expect(answer.result?.isError).not.toBe(true);
    const segmentation = segmentationOf(answer)!;
    expect(segmentation.format_detected).toBe("jsonl");
    expect(segmentation.segments).toHaveLength(turns.length);
    expect(segmentation.segments.map((s) => s.role)).toEqual(turns.map((t) => t.role));
    expect(segmentation.merged_segments).toBe(0);
  });

  // Negative control: the file as the host wrote it is not compile_transcript's JSONL.
  test.each(CASES.map((c) => [`${c.host}/${c.file}`, c] as const))("raw %s is not jsonl", async (_label, c) => {
    const segmentation = segmentationOf(await compile(fixtureText(c.host, c.file)))!;
    expect(segmentation.format_detected).toBe("plain");
    // No plain-text marker at a line start either: the whole file is turns of no role.
    expect(segmentation.segments.every((s) => s.role === undefined)).toBe(true);
  });

  test("MAX_TRANSCRIPT_TURNS is the server's cap: one more turn is refused, the cut input passes", async () => {
    const many = Array.from({ length: MAX_TRANSCRIPT_TURNS + 1 }, (_, i) => ({ role: "user", content: `t${i}` }));
    const refused = await compile(many.map((t) => JSON.stringify(t)).join("\n"));
    expect(refused.error?.message ?? JSON.stringify(refused.result)).toContain("1024");
    const kept = segmentationOf(await compile(compileTranscriptInput(many as TranscriptTurn[], 1 << 20)))!;
    expect(kept.format_detected).toBe("jsonl");
    expect(kept.segments).toHaveLength(MAX_TRANSCRIPT_TURNS);
  }, 60_000); // the server compiles 1 024 fragments: ≈2.3 s here

  test("a cut turn (multibyte text, control characters) still reads as jsonl", async () => {
    const turns: TranscriptTurn[] = [
      { role: "user", content: "日本語".repeat(10_000) },
      { role: "tool", content: '\u0001\u001f"\\'.repeat(10_000) },
    ];
    const jsonl = compileTranscriptInput(turns, 2 * MAX_TURN_BYTES + 1);
    expect(jsonl.split("\n")).toHaveLength(2);
    const segmentation = segmentationOf(await compile(jsonl))!;
    expect(segmentation.format_detected).toBe("jsonl");
    expect(segmentation.segments).toHaveLength(2);
  });
});

describe("readTranscriptTail", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-transcript-"));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string | Buffer): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content);
    return p;
  };

  test("a fixture read whole converts as read directly", () => {
    const p = path.join(FIXTURES, "codex", "stop.jsonl");
    const tail = readTranscriptTail(p, 1 << 20);
    expect(tail).toEqual({ ok: true, text: fixtureText("codex", "stop.jsonl"), truncated: false });
  });

  test("a 50 MB file: only its last maxBytes are read, from a line boundary", () => {
    const p = path.join(dir, "big.jsonl");
    const line = (i: number) =>
      `${JSON.stringify({ type: "user", message: { role: "user", content: `prompt ${i}` } })}\n`;
    const fd = fs.openSync(p, "w");
    const block = Buffer.from(Array.from({ length: 1000 }, (_, i) => line(i)).join(""));
    let written = 0;
    while (written < 50 * 1024 * 1024) written += fs.writeSync(fd, block);
    fs.writeSync(fd, line(999_999));
    fs.closeSync(fd);
    const tail = readTranscriptTail(p, 64 * 1024);
    if (!tail.ok) throw new Error(tail.problem);
    expect(tail.truncated).toBe(true);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(64 * 1024);
    expect(tail.text.startsWith('{"type":"user"')).toBe(true);
    const turns = transcriptTurns("claude-jsonl", tail.text);
    expect(turns.at(-1)).toEqual({ role: "user", content: "prompt 999999" });
    expect(turns.length).toBeGreaterThan(1000);
  });

  test("a sparse file claiming 50 MB costs only the bound", () => {
    const p = path.join(dir, "sparse.jsonl");
    const fd = fs.openSync(p, "w");
    fs.ftruncateSync(fd, 50 * 1024 * 1024);
    fs.writeSync(
      fd,
      `\n${JSON.stringify({ type: "user", message: { role: "user", content: "after the hole" } })}\n`,
      50 * 1024 * 1024,
    );
    fs.closeSync(fd);
    const tail = readTranscriptTail(p, 4096);
    if (!tail.ok) throw new Error(tail.problem);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(4096);
    expect(transcriptTurns("claude-jsonl", tail.text)).toEqual([{ role: "user", content: "after the hole" }]);
  });

  test("a tail that starts inside a line drops that line; one line longer than the bound gives nothing", () => {
    const p = file("cut.jsonl", `${"a".repeat(100)}\nsecond\nthird\n`);
    expect(readTranscriptTail(p, 20)).toEqual({ ok: true, text: "second\nthird\n", truncated: true });
    // 13 bytes are exactly the last two lines: the byte before them is a newline, so "second" is whole.
    expect(readTranscriptTail(p, 13)).toEqual({ ok: true, text: "second\nthird\n", truncated: true });
    expect(readTranscriptTail(p, 12)).toEqual({ ok: true, text: "third\n", truncated: true });
    expect(readTranscriptTail(file("one.jsonl", "x".repeat(500)), 100)).toEqual({
      ok: true,
      text: "",
      truncated: true,
    });
  });

  test("binary garbage reads without throwing and holds no turn", () => {
    const bytes = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 2654435761) % 256));
    const tail = readTranscriptTail(file("garbage.bin", bytes), 32 * 1024);
    if (!tail.ok) throw new Error(tail.problem);
    for (const format of FORMATS) expect(transcriptTurns(format, tail.text)).toEqual([]);
  });

  test("a symlink is refused, never followed (its target, read directly, is fine)", () => {
    const target = file("target.jsonl", fixtureText("qwen", "stop.jsonl"));
    const link = path.join(dir, "link.jsonl");
    fs.symlinkSync(target, link);
    expect(readTranscriptTail(link, 1 << 20)).toEqual({ ok: false, code: "ELOOP", problem: "is a symlink" });
    expect(readTranscriptTail(target, 1 << 20).ok).toBe(true);
  });

  test("a FIFO, a directory, an absent file, a bad path or bound: one reason, no throw, no hang", () => {
    const fifo = path.join(dir, "fifo");
    Bun.spawnSync(["mkfifo", fifo]);
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
    expect(readTranscriptTail(fifo, 1024)).toEqual({ ok: false, code: undefined, problem: "is not a regular file" });
    expect(readTranscriptTail(dir, 1024)).toEqual({ ok: false, code: undefined, problem: "is not a regular file" });
    expect(readTranscriptTail(path.join(dir, "absent"), 1024)).toMatchObject({ ok: false, code: "ENOENT" });
    for (const bad of ["", "a\0b", undefined as unknown as string, 7 as unknown as string])
      expect(readTranscriptTail(bad, 1024)).toMatchObject({ ok: false });
    const p = file("small.jsonl", "line\n");
    for (const bound of [0, -5, Number.NaN])
      expect(readTranscriptTail(p, bound)).toEqual({ ok: true, text: "", truncated: true });
  });

  const isRoot = process.getuid?.() === 0;
  test.skipIf(!isRoot && process.env.CI !== "true")("another user's file is refused (run as root to place one)", () => {
    if (!isRoot) throw new Error("needs root to chown a file to another user (CI=true may not skip this)");
    const p = file("foreign.jsonl", "line\n");
    fs.chownSync(p, 65534, 65534);
    expect(readTranscriptTail(p, 1024)).toEqual({ ok: false, code: undefined, problem: "is owned by another user" });
  });
});
