// The failure table: what each kind of hook answers when something goes wrong (the rules of
// docs/contract.md §10, plus the faults the suite injects on top of them, docs/failure-modes.md). It is data on
// purpose: test/faults.test.ts injects every row's fault and checks every cell's `expect`
// against the compiled binary, and scripts/failure-table.ts renders the same rows into
// docs/failure-modes.md, where test/faults.test.ts also checks the block is exactly what this
// file renders. The
// documented behaviour therefore cannot drift from the tested one.

export type Column = "lifecycle" | "precompact" | "stop" | "guard" | "posttooluse";

export const COLUMNS: ReadonlyArray<readonly [Column, string]> = [
  ["lifecycle", "Lifecycle (SessionStart, Windsurf prompt)"],
  ["precompact", "PreCompact (Claude)"],
  ["stop", "Stop"],
  ["guard", "Guard (PreToolUse, pre_write_code)"],
  ["posttooluse", "PostToolUse (recall evidence, Bash compression)"],
];

/**
 * What the fault tests check for a cell:
 * - guidance: the load guidance (defaults where needed), exit 0;
 * - instructions: the summariser instructions, exit 0;
 * - stop-generic: the save reminder once, then a pass;
 * - stop-unavailable: outside opted-in repositories a pass with one stderr line (Claude: and a
 *   systemMessage line); in the opted-in repository a continuation saying state is unavailable
 *   until the directory is repaired, only when the Stop is not already a continuation; the
 *   continuation Stop passes; dsh passes at once;
 * - stop-checkpoint: the checkpoint of the records that are still there, then a pass;
 * - refuse-if-opted-in: an edit in the opted-in repository is refused, one elsewhere passes;
 * - refuse-to-queue: with a recall recorded before the fault, an edit in the opted-in repository
 *   is still refused where it must be queued for the Stop checkpoint (Claude, Codex, dsh) and
 *   passes on Windsurf, which has no Stop and keeps no queue; one elsewhere passes;
 * - pass: the host's neutral answer; for PostToolUse the tool result untouched, nothing archived;
 * - as-usual: what a healthy setup answers (PostToolUse: a large Bash result compressed);
 * - usage: exit 64, nothing on stdout, one line on stderr.
 * Every row also checks that nothing outside the state directory changed and that the session
 * can still end.
 */
export type Expect =
  | "guidance"
  | "instructions"
  | "stop-generic"
  | "stop-unavailable"
  | "stop-checkpoint"
  | "refuse-if-opted-in"
  | "refuse-to-queue"
  | "pass"
  | "as-usual"
  | "usage";

export interface Cell {
  readonly expect: Expect;
  /** The wording on docs/failure-modes.md. */
  readonly text: string;
}

export interface FailureRow {
  readonly id: string;
  readonly situation: string;
  /** Where the rule comes from. */
  readonly source: "docs/contract.md §10" | "docs/failure-modes.md";
  /** null: the situation cannot reach this hook (shown as "—", still checked to answer normally where the test can). */
  readonly cells: Readonly<Record<Column, Cell | null>>;
}

const UNAFFECTED = null;

// docs/decisions.md#the-learning-loop: a continuation at every turn's first Stop costs a paid model
// turn each time, so only
// an opted-in repository (whose checkpoints are lost) is told, and truthfully.
const STOP_UNAVAILABLE =
  'not opted in: pass, with one stderr line naming the directory and whether reading or writing failed (Claude: also one `systemMessage` line for the user); opted in: continue with "state unavailable", saying it repeats at each turn until the directory is repaired (never on a continuation Stop; dsh: pass)';

export const FAILURE_TABLE: readonly FailureRow[] = [
  {
    id: "stdin-not-json",
    situation: "stdin is not JSON, or not a JSON object (empty, bytes, an array)",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: { expect: "guidance", text: "treated as `{}`: guidance with defaults (cwd = the process cwd)" },
      precompact: { expect: "instructions", text: "instructions with defaults" },
      stop: { expect: "stop-generic", text: "treated as `{}` (session `unknown-session`): the save reminder once" },
      guard: {
        expect: "pass",
        text: "no tool name, so not a covered tool: pass (Windsurf's pre_write_code is itself the edit: its workspace's policy decides)",
      },
      posttooluse: { expect: "pass", text: "pass `{}`" },
    },
  },
  {
    id: "state-unsafe",
    situation: "state directory unsafe or linked (a symlink, not 0700, another owner)",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: { expect: "guidance", text: "guidance (no marker needed)" },
      precompact: { expect: "instructions", text: "instructions, no marker" },
      stop: { expect: "stop-unavailable", text: STOP_UNAVAILABLE },
      guard: { expect: "refuse-if-opted-in", text: "refuse in opted-in repositories, pass elsewhere" },
      posttooluse: { expect: "pass", text: "pass (compression off; recall not recorded)" },
    },
  },
  {
    id: "config-malformed",
    situation: "`.velesdb-hooks.json` missing or malformed",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: { expect: "guidance", text: "defaults, never blocks" },
      precompact: { expect: "instructions", text: "defaults" },
      stop: { expect: "stop-generic", text: "the generic save reminder once" },
      guard: { expect: "pass", text: "not opted in: pass" },
      posttooluse: { expect: "as-usual", text: "unaffected" },
    },
  },
  {
    id: "compiler-missing",
    situation: "compiler missing (`VELESDB_MEMORY_BIN` names nothing)",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: UNAFFECTED,
      precompact: UNAFFECTED,
      stop: UNAFFECTED,
      guard: UNAFFECTED,
      posttooluse: { expect: "pass", text: "pass, original untouched" },
    },
  },
  {
    id: "compiler-hangs",
    situation: "compiler hangs (a velesdb-memory without compile-stdin)",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: UNAFFECTED,
      precompact: UNAFFECTED,
      stop: UNAFFECTED,
      guard: UNAFFECTED,
      posttooluse: { expect: "pass", text: "pass after the probe's deadline, its process group killed" },
    },
  },
  {
    id: "compiler-killed",
    situation: "compiler killed by a signal in the middle of its answer",
    source: "docs/failure-modes.md",
    cells: {
      lifecycle: UNAFFECTED,
      precompact: UNAFFECTED,
      stop: UNAFFECTED,
      guard: UNAFFECTED,
      posttooluse: { expect: "pass", text: "pass, original untouched, nothing archived" },
    },
  },
  {
    id: "compiler-floods",
    situation: "compiler prints 50 MB",
    source: "docs/failure-modes.md",
    cells: {
      lifecycle: UNAFFECTED,
      precompact: UNAFFECTED,
      stop: UNAFFECTED,
      guard: UNAFFECTED,
      posttooluse: { expect: "pass", text: "stopped at the 16 MB cap: pass, original untouched" },
    },
  },
  {
    id: "compiler-bad-answer",
    situation: "compiler answers bad JSON or a risk that is not low/medium/high",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: UNAFFECTED,
      precompact: UNAFFECTED,
      stop: UNAFFECTED,
      guard: UNAFFECTED,
      posttooluse: { expect: "pass", text: "pass, original untouched (fail closed on the risk)" },
    },
  },
  {
    id: "state-disk-full",
    situation: "state directory on a full filesystem",
    source: "docs/failure-modes.md",
    cells: {
      lifecycle: { expect: "guidance", text: "guidance" },
      precompact: { expect: "instructions", text: "instructions (the trigger marker is not kept)" },
      stop: { expect: "stop-unavailable", text: STOP_UNAVAILABLE },
      guard: {
        expect: "refuse-to-queue",
        text: "refuse in opted-in repositories, even after a recall: the edit cannot be queued for the checkpoint (Windsurf keeps no queue: a recall made earlier still unlocks); pass elsewhere",
      },
      posttooluse: { expect: "pass", text: "pass: no archive can be written, so nothing is replaced" },
    },
  },
  {
    id: "state-read-only",
    situation: "state directory on a read-only mount",
    source: "docs/failure-modes.md",
    cells: {
      lifecycle: { expect: "guidance", text: "guidance" },
      precompact: { expect: "instructions", text: "instructions" },
      stop: { expect: "stop-unavailable", text: STOP_UNAVAILABLE },
      guard: {
        expect: "refuse-to-queue",
        text: "as on a full filesystem: refuse in opted-in repositories (Windsurf: an earlier recall still unlocks), pass elsewhere",
      },
      posttooluse: { expect: "pass", text: "pass (compression off; recall not recorded)" },
    },
  },
  {
    id: "record-vanishes",
    situation: "a record vanishes between listing and reading (a concurrent hook consumed it)",
    source: "docs/failure-modes.md",
    cells: {
      lifecycle: UNAFFECTED,
      precompact: UNAFFECTED,
      stop: {
        expect: "stop-checkpoint",
        text: "the vanished record counts as consumed: the checkpoint names the records still there, never a malformed-state notice",
      },
      guard: UNAFFECTED,
      posttooluse: { expect: "pass", text: "pass; the recall is bound from the records still there" },
    },
  },
  {
    id: "unknown-entry",
    situation: "unknown host or event",
    source: "docs/contract.md §10",
    cells: {
      lifecycle: { expect: "usage", text: "exit 64" },
      precompact: { expect: "usage", text: "exit 64" },
      stop: { expect: "usage", text: "exit 64" },
      guard: { expect: "usage", text: "exit 64" },
      posttooluse: { expect: "usage", text: "exit 64" },
    },
  },
];

export const TABLE_BEGIN = "<!-- failure-table:begin -->";
export const TABLE_END = "<!-- failure-table:end -->";

/** renderFailureTable() → the docs/failure-modes.md block between the markers (markers excluded). */
export function renderFailureTable(): string {
  const escapePipes = (text: string) => text.replace(/\|/g, "\\|");
  const header = `| Situation | ${COLUMNS.map(([, title]) => title).join(" | ")} |`;
  const rule = `|${" --- |".repeat(COLUMNS.length + 1)}`;
  const rows = FAILURE_TABLE.map(
    (row) =>
      `| ${escapePipes(row.situation)} | ${COLUMNS.map(([col]) => escapePipes(row.cells[col]?.text ?? "—")).join(" | ")} |`,
  );
  return [
    "<!-- Generated from test/support/failure-table.ts by `bun scripts/failure-table.ts`; test/faults.test.ts injects each row and fails when this block differs. -->",
    "",
    "Every row is a fault the test suite injects into the compiled binary (`test/faults.test.ts`);",
    "each answer below is checked, together with two things that hold for every row: nothing",
    "outside the state directory changes, and the session can still end (no Stop loop).",
    "",
    header,
    rule,
    ...rows,
    "",
    "Whatever the row, a hook never prints a stack trace, never exits 1, and prints at most one",
    "answer (one exception: Gemini CLI denies the tool on exit 64, so a `gemini` usage error exits 1,",
    "which Gemini shows as a warning). The guard is a guardrail, not a sandbox: hosts let a tool run when a hook times out or",
    "crashes, so it stays fast and local. `test/fuzz.test.ts` feeds every hook 208 generated",
    "payloads per run (`bun run fuzz` and a nightly workflow for tens of thousands) and checks the",
    "same promises on each answer.",
  ].join("\n");
}
