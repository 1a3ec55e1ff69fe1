// The quoting rules behind Codex entries (docs/contract.md §4.2). Codex runs `command` through the session
// shell, so the binary path must reach it as one literal word whatever the home directory is
// called: a path with a space, a quote or a `$` that is not quoted this way runs something
// else, or nothing, and the hook silently never fires.

/** posixQuote("/a b/it's") → `'/a b/it'\''s'`: one word for sh, bash and zsh, nothing expanded. */
export function posixQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * powershellQuote("C:\\x\\velesdb-hooks.exe") → `"C:\x\velesdb-hooks.exe"` with PowerShell's
 * own escapes (a backtick before `` ` ``, `$` and `"`), for Codex's `commandWindows`.
 */
export function powershellQuote(word: string): string {
  return `"${word.replace(/[`$"]/g, (c) => `\`${c}`)}"`;
}

/**
 * powershellCall("C:\\a b\\it's.exe") → `& 'C:\a b\it''s.exe'`: PowerShell's call operator
 * on a single-quoted path (nothing inside is expanded; a quote is doubled). A quoted path
 * alone would be a string, not a command, in PowerShell. For Gemini CLI on Windows, which
 * runs hook commands with `powershell -Command`.
 */
export function powershellCall(path: string): string {
  return `& '${path.replaceAll("'", "''")}'`;
}

/** powershellCallProgram(`& 'C:\x.exe' gemini stop`) → "C:\x.exe"; undefined for any other form. */
export function powershellCallProgram(command: string): string | undefined {
  const call = /^\s*&\s*'((?:[^']|'')*)'(?:\s|$)/.exec(command);
  return call ? call[1]!.replaceAll("''", "'") : undefined;
}

/**
 * firstShellWord(`'/a b/x' codex stop`) → "/a b/x": the program a POSIX shell would run, for
 * quoting done with '…', "…" or backslashes. Enough to recognise our own entries; anything it
 * cannot read (an unterminated quote) yields undefined, i.e. "not ours".
 */
export function firstShellWord(command: string): string | undefined {
  let i = 0;
  while (i < command.length && /\s/.test(command[i]!)) i++;
  let word = "";
  let started = false;
  while (i < command.length) {
    const c = command[i]!;
    if (/\s/.test(c)) break;
    started = true;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += command.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= command.length) return undefined;
        const d = command[i]!;
        if (d === '"') break;
        if (d === "\\" && i + 1 < command.length && '"\\$`\n'.includes(command[i + 1]!)) {
          word += command[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === "\\") {
      if (i + 1 >= command.length) return undefined;
      word += command[i + 1];
      i += 2;
    } else {
      word += c;
      i++;
    }
  }
  return started ? word : undefined;
}
