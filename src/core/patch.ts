// Codex patch targets (docs/contract.md §6.4): the files an `apply_patch` call would touch, read from the
// patch text in `tool_input.command`. The guard decides policy per target, so the one failure
// this parser must not have is a missed target: a missed file in an opted-in repository is an
// edit that skips the recall check. Where the text is malformed we therefore read *more*, never
// less: a surplus target costs at most one needless refusal, which one recall clears.
//
// Facts taken from the Codex parser (openai/codex, codex-rs/apply-patch/src/parser.rs): the text
// is trimmed, lines split on LF with a trailing CR dropped, Begin/End markers and hunk headers
// are compared after trimming the line, and a header path is the rest of the trimmed line.
// Where we read more than Codex would, on purpose:
// - a patch missing a marker still yields its headers (Codex refuses to apply it, but reading
//   nothing would send the guard to the cwd, which may be another repository);
// - an update's context line that quotes a header (" *** Delete File: x") counts as a target,
//   because headers are matched on the trimmed line as docs/contract.md §6.4 says.

const BEGIN_PATCH = "*** Begin Patch";
const END_PATCH = "*** End Patch";
const FILE_HEADERS = ["*** Add File: ", "*** Update File: ", "*** Delete File: "] as const;
const UPDATE_HEADER = "*** Update File: ";
const MOVE_TO = "*** Move to: ";

// `<<EOF`, `<<'EOF'`, `<<"EOF"`, optionally after one command word (`apply_patch <<'EOF'`), the
// way models wrap a patch for a shell. Any word delimiter is accepted, not only EOF: the wrapper
// line can never be a hunk header, so recognising more of them cannot hide a target.
const HEREDOC_OPENER = /^(?:[\w./-]+[ \t]+)?<<[ \t]*(?:'([\w.-]+)'|"([\w.-]+)"|([\w.-]+))$/;

/**
 * parsePatchTargets("*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n…") → ["a.ts", "b.ts"].
 * Paths come back as written, absolute or relative (the caller resolves them against the payload
 * cwd), in order of first appearance, without duplicates. [] means "no parseable target": the
 * caller then evaluates the cwd. Any input, including a non-string at runtime, returns an array.
 */
export function parsePatchTargets(command: string): string[] {
  if (typeof command !== "string") return [];
  const lines = unwrapHeredoc(command.trim().split(/\r?\n/));
  const { start, end } = patchBody(lines);

  const targets: string[] = [];
  const seen = new Set<string>();
  const add = (target: string): void => {
    if (seen.has(target)) return;
    seen.add(target);
    targets.push(target);
  };

  for (let index = start; index < end; index++) {
    const line = (lines[index] ?? "").trim();
    const header = FILE_HEADERS.find((prefix) => line.startsWith(prefix));
    if (header === undefined) continue;
    // The line is trimmed, so the path has no trailing whitespace; inner and leading spaces stay,
    // as Codex keeps them when it creates the file.
    add(line.slice(header.length));
    if (header !== UPDATE_HEADER || index + 1 >= end) continue;
    // A rename writes its destination too. Codex only honours the Move line directly after the
    // Update header; we also accept it indented (trimmed), which can only add a target.
    const next = (lines[index + 1] ?? "").trim();
    if (next.startsWith(MOVE_TO)) {
      add(next.slice(MOVE_TO.length));
      index++;
    }
  }
  return targets;
}

/**
 * unwrapHeredoc(["apply_patch <<'EOF'", …, "EOF"]) → the lines between the wrapper lines.
 * An opener whose closing delimiter is missing still loses its first line: the rest is scanned.
 */
function unwrapHeredoc(lines: string[]): string[] {
  const opener = HEREDOC_OPENER.exec((lines[0] ?? "").trim());
  if (opener === null) return lines;
  const delimiter = opener[1] ?? opener[2] ?? opener[3] ?? "";
  const closed = lines.length >= 2 && (lines[lines.length - 1] ?? "").trim() === delimiter;
  return lines.slice(1, closed ? -1 : undefined);
}

/**
 * patchBody(lines) → the index range [start, end) whose lines may hold hunk headers.
 * With both markers: the lines after the first Begin and before the last End that follows it,
 * so text around the patch (a shell line, a stray heredoc delimiter) is ignored. With a marker
 * missing, that side stays open: a truncated or marker-less patch still yields its headers,
 * because a guard that returned [] here would fall back to the cwd and could miss the real file.
 */
function patchBody(lines: readonly string[]): { start: number; end: number } {
  const begin = lines.findIndex((line) => line.trim() === BEGIN_PATCH);
  const start = begin + 1; // 0 when there is no Begin marker
  let end = lines.length;
  for (let index = lines.length - 1; index >= start; index--) {
    if ((lines[index] ?? "").trim() === END_PATCH) {
      end = index;
      break;
    }
  }
  return { start, end };
}
