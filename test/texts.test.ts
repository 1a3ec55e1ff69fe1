// Model-facing texts (SPEC §3.5) as data with tests: what each must name, and what it must
// no longer say (the second kind of check is the one that catches a revert).
import { describe, expect, test } from "bun:test";
import * as os from "node:os";
import * as texts from "../src/core/texts.ts";

const slot = { project: "veles", session: "rolling" };
const odd = { project: 'we"ird\\name', session: "s\nlot" };

const ALL_TEXTS: ReadonlyArray<readonly [string, string]> = [
  ["load guidance", texts.loadGuidance(slot)],
  ["load guidance after compaction", texts.loadGuidance(slot, { transcriptPath: "/t/x.jsonl", trigger: "auto" })],
  ["save guidance", texts.saveGuidance(slot)],
  ["summariser instructions", texts.summariserInstructions(slot, "/t/x.jsonl", true)],
  ["state unavailable", texts.stateUnavailableNotice(slot, "storage: state directory is a symlink")],
];

describe("every text", () => {
  test.each(ALL_TEXTS)("%s never claims a null return and bakes in no home path", (_label, text) => {
    expect(text.toLowerCase()).not.toContain("null");
    expect(text).not.toContain(os.homedir());
    expect(text).not.toMatch(/\/(Users|home)\/[a-z]/);
  });
});

describe("load guidance", () => {
  const text = texts.loadGuidance(slot);
  test.each([
    ["the exact load call", 'load_working_context(project="veles", session="rolling")'],
    ["the return shape", "{found, working, other_sessions}"],
    ["what working holds", "working holds the saved state"],
    ["what found: false means", "found: false means nothing is saved under that exact project and session pair"],
    ["other_sessions, filled on hits too", "(it is filled on hits too)"],
    ["the mistyped-session hint", "mistyped session id"],
    ["the feedback loop", "feedback(id, true|false)"],
    ["id_str", "id_str"],
  ])("names %s", (_label, fragment) => expect(text).toContain(fragment));

  test("identities are quoted as JSON strings so odd names stay one argument", () => {
    expect(texts.loadCall(odd)).toBe('load_working_context(project="we\\"ird\\\\name", session="s\\nlot")');
    expect(texts.saveCall(odd)).toBe('save_working_context(project="we\\"ird\\\\name", session="s\\nlot")');
  });

  test("the compaction note appears only when compaction happened", () => {
    expect(text).not.toContain("compacted");
    const after = texts.loadGuidance(slot, { transcriptPath: "/t/x.jsonl", trigger: "manual" });
    expect(after).toContain("compacted (manual)");
    expect(after).toContain('save_working_context(project="veles", session="rolling")');
    expect(after).toContain('compile_transcript on the transcript file "/t/x.jsonl"');
    expect(texts.loadGuidance(slot, { trigger: "bogus" })).not.toContain("(bogus)");
  });

  test("stays far under Codex's ~10 000-character context cap", () => {
    expect(texts.loadGuidance(slot, { transcriptPath: "/t/x.jsonl", trigger: "auto" }).length).toBeLessThan(2500);
  });

  // Codex and the DeepSeek bridge keep a head of the context (9 000 characters): the call
  // must open the text, so no compaction note or transcript path can push it out (issue 12.12).
  test.each([
    ["load guidance", texts.loadGuidance(slot)],
    ["after compaction, with a long transcript path", texts.loadGuidance(slot, { transcriptPath: `/t/${"x".repeat(20_000)}`, trigger: "auto" })],
    ["the Windsurf prompt reminder", texts.windsurfPromptReminder(slot)],
  ])("%s opens with the load call", (_label, text) => {
    expect(text.startsWith('load_working_context(project="veles", session="rolling")')).toBe(true);
  });
});

describe("save guidance and summariser instructions", () => {
  test("Stop names the save call, what to save, and the feedback loop", () => {
    const text = texts.saveGuidance(slot);
    for (const fragment of ['save_working_context(project="veles", session="rolling")', "goal", "decisions", "verified", "pending", "feedback(id, true|false)"]) {
      expect(text).toContain(fragment);
    }
  });

  test("PreCompact keeps the essentials verbatim and ends with the save + compile_transcript line", () => {
    const text = texts.summariserInstructions(slot, "/t/x.jsonl");
    for (const fragment of ["verbatim", "goal", "constraints", "verified facts", "decisions", "exact values", "file paths", "pending actions"]) {
      expect(text).toContain(fragment);
    }
    expect(text).toContain('save_working_context(project="veles", session="rolling")');
    expect(text).toContain('compile_transcript on "/t/x.jsonl"');
    expect(text).not.toContain("take precedence");
    expect(texts.summariserInstructions(slot, undefined, true)).toContain("take precedence");
  });
});
