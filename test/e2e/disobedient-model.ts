// A scripted model that never calls a memory tool, for memory-without-model.e2e.test.ts
// (docs/working-context.md#loaded-by-the-hook): it does the task it was given and
// ignores every hook text — the load SessionStart names, the save the Stop continuation asks
// for. What comes back to a later session then comes back through the hooks alone (SessionStart
// loading the state, Stop saving the compiled transcript), never through a call of this model.
// - First, when the chore has a command: it runs it once with the host's shell tool (Claude Code
//   `Bash`, Codex `exec_command`), as a session that does real work does.
// - Then, and for every later request (the Stop continuation included): the same text answer.
//   It never repeats what its context holds, so whatever a later session gets of an earlier one
//   came from the hooks' own load and save, not from this model restating it.
// It reads requests through obedient-model.ts's views, and asserts nothing itself: the suite
// checks the requests (no memory tool call in any of them).
import { codexText, text, type ClaudeReply, type CodexReply, type LoggedRequest } from "./mock-llm.ts";
import { claudeView, codexView } from "./obedient-model.ts";

export interface Chore {
  /** A shell command the session runs before it answers; none: it answers at once. */
  readonly command?: string;
  /** Its answer, to the task and to every hook text alike. */
  readonly answer: string;
}

/** The shell tools the hosts offer: a call of one of them is the chore's command. */
const SHELL = new Set(["Bash", "exec_command"]);

/** claudeDisobedient(chore) → a reply function for mock-llm's Claude turns. */
export function claudeDisobedient(chore: Chore): (req: LoggedRequest) => ClaudeReply {
  return (req) => {
    const ran = claudeView(req).history.some((c) => SHELL.has(c.tool));
    if (chore.command !== undefined && !ran)
      return {
        blocks: [{ type: "tool_use", name: "Bash", input: { command: chore.command, description: "the task's step" } }],
      };
    return text(chore.answer);
  };
}

/** codexDisobedient(chore) → a reply function for mock-llm's Codex turns. */
export function codexDisobedient(chore: Chore): (req: LoggedRequest) => CodexReply {
  return (req) => {
    const ran = codexView(req).history.some((c) => SHELL.has(c.tool));
    if (chore.command !== undefined && !ran)
      return {
        items: [
          {
            type: "function_call",
            name: "exec_command",
            arguments: JSON.stringify({ cmd: chore.command }),
            call_id: "chore-1",
          },
        ],
      };
    return codexText(chore.answer);
  };
}
