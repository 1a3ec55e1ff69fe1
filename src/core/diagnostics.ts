// Problems found beneath the rule that decides the answer — a `.velesdb-hooks.json` skipped
// or ignored during the walk up — still owe the user their stderr line, but the rule that
// asked for the identity may not be the one that can say so (the guard resolves several).
// They are collected here, once each, and joined with the decision's own note: one line.
import { joinNotes, type Decision } from "./decision.ts";

const reported = new Set<string>();

/** reportProblem("… is owned by another user") → shown once on this run's stderr line. */
export function reportProblem(problem: string): void {
  reported.add(problem);
}

/** withReportedProblems(decision) → the decision whose note also names every reported problem. */
export function withReportedProblems(decision: Decision): Decision {
  if (reported.size === 0) return decision;
  const note = joinNotes(decision.note, ...reported);
  reported.clear();
  return { ...decision, note };
}
