// compile-stdin's token estimate, the formula of velesdb-memory 0.17.0's HeuristicEstimator
// (src/context/estimator.rs): per whitespace-separated word, an ASCII digit costs 1 token, a
// CJK character 5/6, anything else 3/10, the word's cost rounded up; each newline half a token.
// The same formula here lets a view be sized to the budget before compile-stdin prices it
// (compress-shape.ts), and the footer count what the model is spared (compress.ts; the bench
// counts its corpus with it, scripts/bench/compress-corpus.ts). Apart from the shaping because
// it is a model of velesdb-memory's estimator, and changes only when that one does.

/** ASCII whitespace but the newline (a range never holds one), as the estimator splits words. */
const isSpace = (code: number): boolean => code === 32 || code === 9 || code === 13 || code === 11 || code === 12;

/** rangeThirtieths(text, from, to) → the word cost of text[from, to) in thirtieths of a token (no newline in it). */
export function rangeThirtieths(text: string, from: number, to: number): number {
  let total = 0;
  let word = 0;
  for (let k = from; k < to; k++) {
    let code = text.charCodeAt(k);
    if (code >= 0xd800 && code <= 0xdbff && k + 1 < to) {
      code = text.codePointAt(k)!;
      k++;
    }
    if (
      isSpace(code) ||
      code === 0xa0 ||
      (code >= 0x2000 && code <= 0x200a) ||
      code === 0x3000 ||
      code === 0x85 ||
      code === 0x1680 ||
      code === 0x2028 ||
      code === 0x2029 ||
      code === 0x202f ||
      code === 0x205f
    ) {
      total += Math.ceil(word / 30) * 30;
      word = 0;
      continue;
    }
    word += code >= 0x30 && code <= 0x39 ? 30 : isCjk(code) ? 25 : 9;
  }
  return total + Math.ceil(word / 30) * 30;
}

/** lineThirtieths("a 12") → the line's word cost in thirtieths of a token (its newline not included). */
export const lineThirtieths = (line: string): number => rangeThirtieths(line, 0, line.length);

function isCjk(code: number): boolean {
  return (
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff)
  );
}

/** estimateTokens(text) → compile-stdin's own estimate of the text's tokens (see above). */
export function estimateTokens(text: string): number {
  let thirtieths = 0;
  let from = 0;
  let newlines = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", from)) {
    thirtieths += rangeThirtieths(text, from, at);
    newlines++;
    from = at + 1;
  }
  thirtieths += rangeThirtieths(text, from, text.length);
  return thirtieths / 30 + Math.ceil((newlines * 15) / 30);
}
