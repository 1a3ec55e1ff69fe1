// Types of what fake-velesdb-memory.mjs exports (the velesdb-memory double), for the TS suites.
export declare const MODES: readonly string[];
/** answerLine(mode, message) → the double's one JSON-RPC response line, or undefined for a notification. */
export declare function answerLine(
  mode: string,
  message: { id?: unknown; method?: string; params?: any },
  session?: { protocolVersion?: string; stateless?: boolean },
): string | undefined;
/** toolCallLine(mode, id, name, args) → the double's answer to one tools/call, as one JSON-RPC line. */
export declare function toolCallLine(
  mode: string,
  id: unknown,
  name: string,
  args: unknown,
  stateless?: boolean,
): string;
/** modeSequence("is-error,text-only") → the recall calls' modes in order and the mode the rest of the server answers in; throws on a bad list. */
export declare function modeSequence(arg: string): { modes: string[]; server: string };
/** modeOf(sequence, message, session) → the mode that answers `message` (a recall call takes the next mode of the list). */
export declare function modeOf(
  sequence: { modes: readonly string[]; server: string },
  message: { id?: unknown; method?: string; params?: any },
  session: { recalls?: number },
): string;
