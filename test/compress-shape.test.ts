// The view compile-stdin is handed (src/core/compress-shape.ts), on real outputs
// (test/support/real-outputs.ts): the lines the tool's own report marks are all signal and all in
// the view, the view fits its budget, the same output always gives the same view, and a budget
// too small for the signal is a refusal, not a view that drops some of it.
import { describe, expect, test } from "bun:test";
import { missingSignal, shapeOutput } from "../src/core/compress-shape.ts";
import { estimateTokens } from "../src/core/token-estimate.ts";
import { realOutput } from "./support/real-outputs.ts";

const viewOf = (text: string, tokens: number) => {
  const shaped = shapeOutput(text, tokens);
  if (!shaped.ok) throw new Error(shaped.problem);
  return shaped.view;
};

describe("shapeOutput", () => {
  for (const name of ["pytest", "cargo build", "make + gcc", "go test", "python: a traceback"]) {
    test(`${name}: every line the tool's report marks is signal and in the view, which fits 1800 tokens`, () => {
      const output = realOutput(name);
      const text = output.stderr === "" ? output.stdout : `${output.stdout}\n${output.stderr}`;
      const view = viewOf(text, 1800);
      expect(output.mustKeep.filter((line) => !view.signal.includes(line))).toEqual([]);
      expect(missingSignal(view.text, output.mustKeep)).toEqual([]);
      expect(view.tokens).toBeLessThanOrEqual(1800);
      expect(Math.ceil(estimateTokens(view.text))).toBeLessThanOrEqual(view.tokens + 1);
      expect(view.text.length).toBeLessThan(text.length / 2);
    }, 120_000);
  }

  test("the same output gives the same view, byte for byte", () => {
    const text = realOutput("pytest").stdout;
    expect(viewOf(text, 1800).text).toBe(viewOf(text, 1800).text);
  });

  test("a budget too small for the signal lines is refused (control: the same output at 1800 tokens has a view)", () => {
    const text = realOutput("pytest").stdout;
    expect(shapeOutput(text, 1800).ok).toBe(true);
    const tight = shapeOutput(text, 100);
    expect(tight.ok).toBe(false);
    if (!tight.ok) expect(tight.problem).toMatch(/signal lines need about \d+ tokens, above the 100 available/);
  });

  test("a long line that is not signal is shown cut and says so; a long signal line stays whole", () => {
    const filler = "x".repeat(2000);
    const lines = [
      "start",
      ...Array.from({ length: 40 }, (_, i) => `row ${i} ${filler}`),
      `error: the build failed at ${filler}`,
      "end",
    ];
    const view = viewOf(lines.join("\n"), 4000);
    expect(view.text).toContain("[…");
    expect(view.text.split("\n")).toContain(`error: the build failed at ${filler}`);
  });

  test("a missing signal line is reported; a present one is not", () => {
    expect(missingSignal("a\nFAILED x\nb", ["FAILED x"])).toEqual([]);
    expect(missingSignal("a\nFAILED x (x2)\nb", ["FAILED x"])).toEqual(["FAILED x"]);
  });
});
