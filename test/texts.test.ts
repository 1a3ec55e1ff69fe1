// Model-facing texts (docs/contract.md §3.5) as data with tests: what each must name, and what it must
// no longer say (the second kind of check is the one that catches a revert).
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as texts from "../src/core/texts.ts";

const slot = { project: "veles", session: "rolling" };
const odd = { project: 'we"ird\\name', session: "s\nlot" };

const ALL_TEXTS: ReadonlyArray<readonly [string, string]> = [
  ["load guidance", texts.loadGuidance(slot)],
  ["load guidance after compaction", texts.loadGuidance(slot, { transcriptPath: "/t/x.jsonl", trigger: "auto" })],
  ["save guidance", texts.saveGuidance(slot)],
  ["summariser instructions", texts.summariserInstructions(slot, "/t/x.jsonl", true)],
  [
    "state unavailable",
    texts.stateUnavailableNotice(slot, {
      access: "use",
      cause: "linked",
      path: "/s",
      problem: "state directory /s is a symlink",
      stateDir: "/s",
    }),
  ],
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
    [
      "other_sessions, most recent first, filled on hits too",
      "other_sessions lists the project's other saved slots, most recent first (filled on hits too)",
    ],
    [
      "what found: false leads to (each session saves its own slot)",
      "each session of this repository saves its own, so with found: false the same call on the first one or two of them",
    ],
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
  // must open the text, so no compaction note or transcript path can push it out
  // (docs/decisions.md#hook-input-and-answers).
  test.each([
    ["load guidance", texts.loadGuidance(slot)],
    [
      "after compaction, with a long transcript path",
      texts.loadGuidance(slot, { transcriptPath: `/t/${"x".repeat(20_000)}`, trigger: "auto" }),
    ],
    ["the Windsurf prompt reminder", texts.windsurfPromptReminder(slot)],
  ])("%s opens with the load call", (_label, text) => {
    expect(text.startsWith('load_working_context(project="veles", session="rolling")')).toBe(true);
  });
});

describe("save guidance and summariser instructions", () => {
  test("Stop names the save call, what to save, and the feedback loop", () => {
    const text = texts.saveGuidance(slot);
    for (const fragment of [
      'save_working_context(project="veles", session="rolling")',
      "goal",
      "decisions",
      "verified",
      "pending",
      "feedback(id, true|false)",
    ]) {
      expect(text).toContain(fragment);
    }
  });

  test("PreCompact keeps the essentials verbatim and ends with the save + compile_transcript line", () => {
    const text = texts.summariserInstructions(slot, "/t/x.jsonl");
    for (const fragment of [
      "verbatim",
      "goal",
      "constraints",
      "verified facts",
      "decisions",
      "exact values",
      "file paths",
      "pending actions",
    ]) {
      expect(text).toContain(fragment);
    }
    expect(text).toContain('save_working_context(project="veles", session="rolling")');
    expect(text).toContain('compile_transcript on "/t/x.jsonl"');
    expect(text).not.toContain("take precedence");
    expect(texts.summariserInstructions(slot, undefined, true)).toContain("take precedence");
  });
});

describe("learning checkpoint (docs/decisions.md#the-learning-loop)", () => {
  const targets = [
    { ...slot, root: "/w/veles" },
    { project: "other", session: "s2", root: "/w/other" },
  ];
  const text = texts.learningCheckpoint(targets);
  const stageLines = text.split("\n").filter((line) => /^\d\. /.test(line));

  test("four numbered stages, in the order recall, decision, causality, feedback", () => {
    expect(stageLines.map((line) => line.slice(0, line.indexOf(":")))).toEqual([
      "1. Recall",
      "2. Decision",
      "3. Causality",
      "4. Feedback",
    ]);
  });

  test.each([
    [0, ["recall_fused"]],
    [1, ["remember", "reason"]],
    [2, ["relate", "cause", "root cause", "why"]],
    [3, ["feedback(id, true|false)", "id_str"]],
  ] as const)("stage %d names its velesdb-memory tool", (index, fragments) => {
    for (const fragment of fragments) expect(stageLines[index]).toContain(fragment);
  });

  test("then the save call of every listed project, after the four stages", () => {
    const lastStage = text.indexOf("4. Feedback");
    for (const target of targets) {
      expect(text.indexOf(texts.saveCall(target))).toBeGreaterThan(lastStage);
    }
    expect(text).toContain(JSON.stringify(targets));
  });

  test("the model no longer has to guess the tool (the old wording is gone)", () => {
    expect(text).not.toContain("stored in velesdb-memory");
    expect(text).not.toContain("related to what caused it");
  });

  test("a warning is appended last, and only when given", () => {
    expect(text).not.toContain("Warning:");
    const warned = texts.learningCheckpoint(targets, texts.stuckQueueWarning("/s/dirty", 2));
    expect(warned.split("\n").at(-1)).toBe(
      `Warning: the edit queue at "/s/dirty" could not be emptied (2 record(s) left) and needs inspection; this checkpoint lists every repository anyway.`,
    );
  });
});

describe("every model-facing sentence lives here (docs/contract.md §3.5)", () => {
  test("a refusal with no reason still reads as ours", () => {
    expect(texts.fallbackRefusal()).toBe("velesdb-hooks refused this edit.");
  });

  // A full sentence in a string literal anywhere else in the hook code is model-facing text
  // that escaped review: rules and encoders take their words from this module.
  test("no string literal outside texts.ts ends a sentence", () => {
    const dir = path.join(import.meta.dir, "..", "src");
    // Recursive: the host descriptors (hosts/descriptors/) are hook code too.
    const files = [
      "cli.ts",
      ...["core", "hosts"].flatMap((sub) =>
        fs
          .readdirSync(path.join(dir, sub), { recursive: true, encoding: "utf8" })
          .filter((name) => name.endsWith(".ts"))
          .map((name) => path.join(sub, name)),
      ),
    ];
    const sentence = /["`][A-Za-z][^"`]*( [a-z]+){2,}[^"`]*\.["`]/;
    const found = files
      .filter((file) => file !== path.join("core", "texts.ts"))
      .flatMap((file) =>
        fs
          .readFileSync(path.join(dir, file), "utf8")
          .split("\n")
          .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && sentence.test(line))
          .map((line) => `${file}: ${line.trim()}`),
      );
    expect(found).toEqual([]);
  });
});

describe("state failure texts (docs/decisions.md#the-learning-loop)", () => {
  const written = {
    access: "write",
    cause: "storage",
    path: "/s/stop-x",
    problem: "/s/stop-x cannot be written (EROFS)",
    stateDir: "/s",
  } as const;
  const read = {
    access: "read",
    cause: "malformed",
    path: "/s/m",
    problem: "is not a regular file",
    stateDir: "/s",
  } as const;
  const unusable = {
    access: "use",
    cause: "linked",
    path: "/s",
    problem: "state directory /s is a symlink",
    stateDir: "/s",
  } as const;
  // dsh: the workspace walk blames a component above the state directory
  // (docs/decisions.md#state-of-the-deepseek-harness).
  const component = {
    access: "use",
    cause: "linked",
    path: "/ws/.velesdb-hooks/state",
    problem: "state directory /ws/.velesdb-hooks is a symlink",
    stateDir: "/ws/.velesdb-hooks/state",
  } as const;

  test.each([
    [written, 'write failed: storage: "/s/stop-x" cannot be written (EROFS)'],
    [read, 'read failed: malformed: "/s/m" is not a regular file'],
    [unusable, 'unusable: linked: state directory "/s" is a symlink'],
    [component, 'unusable: linked: state directory "/ws/.velesdb-hooks" is a symlink'],
  ] as const)("the detail says which access failed and names the path once: %j", (failure, detail) => {
    expect(texts.stateFailureDetail(failure)).toBe(detail);
  });

  test.each([
    ["stateUnavailableNotice", texts.stateUnavailableNotice(slot, unusable)],
    ["checkpointStateNotice", texts.checkpointStateNotice(slot, written)],
  ])("%s says truthfully that it repeats until the directory is repaired", (_label, text) => {
    expect(text).not.toContain("does not repeat");
    expect(text).toContain('until the state directory "/s" is repaired');
    expect(text).toContain('save_working_context(project="veles", session="rolling")');
  });

  test("the checkpoint notice says write or read as it was", () => {
    expect(texts.checkpointStateNotice(slot, written)).toContain(
      "cannot write this session's learning checkpoint state",
    );
    expect(texts.checkpointStateNotice(slot, read)).toContain("cannot read this session's learning checkpoint state");
  });

  test("the user line is one line naming the directory", () => {
    const line = texts.stateUnavailableUserLine(unusable);
    expect(line).not.toContain("\n");
    expect(line).toContain('state directory "/s" is repaired');
  });
});

describe("our Stop continuations as hosts record them (isOurContinuation)", () => {
  const slot = { project: "p", session: "rolling/s" };
  test("each continuation is recognised bare and behind a host's own words", () => {
    for (const text of [
      texts.saveGuidance(slot),
      texts.learningCheckpoint([{ project: "p", session: "rolling/s", root: "/r" }]),
    ]) {
      expect(texts.isOurContinuation(text)).toBe(true);
      // CodeBuddy Code 2.117.0 writes "<user_query>Stop hook: " before it.
      expect(texts.isOurContinuation(`<user_query>Stop hook: ${text}</user_query>`)).toBe(true);
    }
  });
  test("positive control: a user's own request is not one, nor a quote far into it", () => {
    expect(texts.isOurContinuation("continue the grammar work")).toBe(false);
    expect(texts.isOurContinuation(`${"x".repeat(300)} Before this session ends, save`)).toBe(false);
  });
});
