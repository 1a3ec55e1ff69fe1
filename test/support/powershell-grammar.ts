// A real PowerShell grammar for the install.ps1 tests: tree-sitter-powershell's WebAssembly
// build run by web-tree-sitter (both from the npm registry, pinned in package.json), so no
// PowerShell and no native build are needed on the Linux machines that run the suite. It
// answers "does this parse" and "what are the top-level statements".
import { createRequire } from "node:module";
import { Language, Parser, type Node } from "web-tree-sitter";

const require = createRequire(import.meta.url);
let parser: Parser | undefined;

/** powershellParser() → a parser loaded with the PowerShell grammar (loaded once per process). */
export async function powershellParser(): Promise<Parser> {
  if (parser) return parser;
  await Parser.init();
  const language = await Language.load(require.resolve("tree-sitter-powershell/tree-sitter-powershell.wasm"));
  parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

export interface ParsedScript {
  /** "line:column text" of each ERROR or MISSING node; empty when the script parses. */
  readonly errors: string[];
  /** The top-level statements in order, each as its node type and first line of text. */
  readonly statements: Array<{ readonly type: string; readonly text: string }>;
}

/** parsePowerShell(text) → the grammar's verdict on text. */
export async function parsePowerShell(text: string): Promise<ParsedScript> {
  const tree = (await powershellParser()).parse(text);
  if (!tree) throw new Error("the PowerShell parser returned no tree");
  const errors: string[] = [];
  const visit = (node: Node): void => {
    if (node.isError || node.isMissing)
      errors.push(
        `${node.startPosition.row + 1}:${node.startPosition.column + 1} ${node.isMissing ? `missing ${node.type}` : node.text.split("\n")[0]}`,
      );
    else if (node.hasError) for (const child of node.children) if (child) visit(child);
  };
  visit(tree.rootNode);
  const statements: Array<{ type: string; text: string }> = [];
  for (const child of tree.rootNode.namedChildren) {
    if (!child || child.type === "comment") continue;
    const inner = child.type === "statement_list" ? child.namedChildren : [child];
    for (const statement of inner) {
      if (statement && statement.type !== "comment")
        statements.push({ type: statement.type, text: statement.text.split("\n")[0]! });
    }
  }
  tree.delete();
  return { errors, statements };
}
