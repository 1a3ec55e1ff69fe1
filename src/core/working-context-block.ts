// The working context as the model reads it when a hook loaded it (docs/working-context.md
// "Loaded by the hook"): a block chosen to fit a character budget, never cut blindly. Peers that
// inject memory ran into hosts' caps — Claude Code hands a hook value over 10 000 characters to
// the model as a 2 KB preview, silently (claude-mem#3802), and Codex spills one over 2 500 tokens
// to a file (docs/working-context.md#the-budget) — and a velesdb-memory state may be up to
// 1 MiB (velesdb-memory 0.17.0 src/context/memory_bridge.rs). So whole items are chosen in the
// order a resuming agent needs them (the goal, the constraints in force, what is still to do, the
// latest decisions, then facts, hypotheses and evidence), an item that does not fit is left out
// and counted, and the block ends by saying what was left out and which call returns it all.
import { escapeForReader } from "./texts.ts";

/** velesdb-memory 0.17.0 WorkingContext (src/context/model.rs), as loaded: every field optional on the wire. */
export interface WorkingState {
  readonly goal?: unknown;
  readonly active_constraints?: unknown;
  readonly verified_facts?: unknown;
  readonly open_hypotheses?: unknown;
  readonly decisions?: unknown;
  readonly exact_evidence?: unknown;
  readonly pending_actions?: unknown;
}

export interface RenderedState {
  /** The chosen lines, in the order a reader takes them (heading lines included). */
  readonly text: string;
  /** How many items of the state are in `text`, and how many there were. */
  readonly shown: number;
  readonly total: number;
  /** "3 verified facts, 1 open hypothesis": what was left out, by kind; "" when nothing was. */
  readonly leftOut: string;
}

/** A goal longer than this share of the budget is shown cut, so the rest of the state can still come. */
const GOAL_SHARE = 0.4;

interface Section {
  readonly heading: string;
  readonly one: string;
  readonly many: string;
  readonly items: readonly string[];
  /** Newest last on the wire: take from the end when the budget is short. */
  readonly newestFirst: boolean;
}

/**
 * renderWorkingState(state, budget) → the state's items that fit in `budget` characters, whole,
 * chosen section by section in priority order; inside a section the newest items of the lists
 * that grow over time (decisions, pending actions) are preferred. Every item is one line with
 * control, bidi and line-separator characters escaped (escapeForReader): a stored text cannot
 * forge a line of the block or of the host's wrapper.
 */
export function renderWorkingState(state: WorkingState, budget: number): RenderedState {
  const sections: Section[] = [
    section("Constraints in force", "constraint", "constraints", facts(state.active_constraints), false),
    section("Pending actions", "pending action", "pending actions", strings(state.pending_actions), true),
    section("Decisions (velesdb-memory decision records)", "decision", "decisions", decisions(state.decisions), true),
    section("Verified facts", "verified fact", "verified facts", facts(state.verified_facts), false),
    section("Open hypotheses", "open hypothesis", "open hypotheses", facts(state.open_hypotheses), false),
    section("Evidence handles", "evidence handle", "evidence handles", evidence(state.exact_evidence), false),
  ];
  const lines: string[] = [];
  let used = 0;
  let shown = 0;
  let total = 0;
  const left: string[] = [];
  const goal = typeof state.goal === "string" ? oneLine(state.goal) : "";
  if (goal !== "") {
    total += 1;
    const room = Math.floor(budget * GOAL_SHARE);
    const line = goal.length <= room ? `Goal: ${goal}` : `Goal (first ${room} characters): ${cutAt(goal, room)}…`;
    if (line.length + 1 <= budget) {
      lines.push(line);
      used += line.length + 1;
      shown += 1;
    } else left.push("the goal");
  }
  for (const s of sections) {
    total += s.items.length;
    if (s.items.length === 0) continue;
    const heading = `${s.heading}:`;
    const order = s.items.map((_, i) => (s.newestFirst ? s.items.length - 1 - i : i));
    const chosen = new Set<number>();
    let sectionUsed = heading.length + 1;
    for (const i of order) {
      const cost = s.items[i]!.length + 3; // "- " and the newline
      if (used + sectionUsed + cost > budget) continue;
      chosen.add(i);
      sectionUsed += cost;
    }
    if (chosen.size > 0) {
      lines.push(heading);
      for (let i = 0; i < s.items.length; i++) if (chosen.has(i)) lines.push(`- ${s.items[i]}`);
      used += sectionUsed;
      shown += chosen.size;
    }
    const missing = s.items.length - chosen.size;
    if (missing > 0) left.push(`${missing} ${missing === 1 ? s.one : s.many}`);
  }
  return { text: lines.join("\n"), shown, total, leftOut: left.join(", ") };
}

function section(heading: string, one: string, many: string, items: string[], newestFirst: boolean): Section {
  return { heading, one, many, items, newestFirst };
}

/** Facts are {text, source?}; a bare string is taken as its text. */
function facts(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const item of value) {
    const text =
      typeof item === "string"
        ? item
        : typeof item === "object" && item !== null && typeof (item as { text?: unknown }).text === "string"
          ? (item as { text: string }).text
          : undefined;
    if (text !== undefined && text.trim() !== "") out.push(oneLine(text));
  }
  return out;
}

function strings(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === "string" && v.trim() !== "").map(oneLine);
}

/** Decisions are pointers {fragment_id, rule_id} into velesdb-memory's compile decisions, not prose. */
function decisions(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null) continue;
    const { fragment_id, rule_id } = item as { fragment_id?: unknown; rule_id?: unknown };
    if (typeof rule_id !== "string" || (typeof fragment_id !== "string" && typeof fragment_id !== "number")) continue;
    out.push(oneLine(`rule ${rule_id} on fragment ${String(fragment_id)}`));
  }
  return out;
}

/** Evidence is a SourceReference {fragment_id, handle?}: the handle is what retrieve_context_source takes. */
function evidence(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null) continue;
    const { handle, fragment_id } = item as { handle?: unknown; fragment_id?: unknown };
    if (typeof handle === "string" && handle !== "") out.push(oneLine(handle));
    else if (typeof fragment_id === "string" || typeof fragment_id === "number")
      out.push(oneLine(`fragment ${String(fragment_id)}`));
  }
  return out;
}

/** One line: runs of white space (newlines included) folded to one space, controls escaped. */
function oneLine(text: string): string {
  return escapeForReader(text.replace(/\s+/g, " ").trim());
}

/** cutAt(text, n) → at most n UTF-16 units, never half of a surrogate pair. */
function cutAt(text: string, n: number): string {
  const cut = text.slice(0, Math.max(0, n));
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}
