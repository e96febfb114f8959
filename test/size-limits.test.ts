// No file in src/ over 300 lines, no function over 60 (generated code excepted): read with the TypeScript compiler API.
// The exceptions below are functions not split yet (migrations are never edited once shipped); the list only shrinks.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 60;

/** Generated code, never held to the limits. */
const GENERATED = ['src/config/generated/'];
/** Folders not yet held to the limits: none now (the list only shrinks). */
const EXCEPTIONS: string[] = [];
/** Functions still over the limit, by file and name: not split yet (migrations are never edited once shipped). */
const FUNCTION_EXCEPTIONS = [
  'src/store/migrations/007-spend-functions.ts up',
  'src/store/migrations/015-budget-functions.ts up',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const checked = sources(join(root, 'src'))
  .map((path) => relative(root, path).split('\\').join('/'))
  .filter((path) => ![...GENERATED, ...EXCEPTIONS].some((prefix) => path.startsWith(prefix)));

/** Each function-like node's name (or kind) and its length in lines. */
function functionsOf(path: string): { name: string; at: number; lines: number }[] {
  const text = readFileSync(join(root, path), 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; at: number; lines: number }[] = [];
  const line = (pos: number) => file.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const named = (node as { name?: ts.Node }).name;
      const parent = node.parent;
      const name = named?.getText(file) ?? (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) ? parent.name.getText(file) : ts.SyntaxKind[node.kind]);
      found.push({ name: `${path} ${name}`, at: line(node.getStart(file)) + 1, lines: line(node.getEnd()) - line(node.getStart(file)) + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('size limits', () => {
  it(`keeps every file in src/ within ${MAX_FILE_LINES} lines`, () => {
    expect(checked.length).toBeGreaterThan(100);
    const over = checked.map((path) => ({ path, lines: readFileSync(join(root, path), 'utf8').split('\n').length - 1 })).filter((f) => f.lines > MAX_FILE_LINES);
    expect(over).toEqual([]);
  });

  it(`keeps every function in src/ within ${MAX_FUNCTION_LINES} lines`, () => {
    const over = checked.flatMap(functionsOf).filter((f) => f.lines > MAX_FUNCTION_LINES);
    expect(over.filter((f) => !FUNCTION_EXCEPTIONS.includes(f.name))).toEqual([]);
  });

  it('lists only exceptions that are still needed', () => {
    const all = sources(join(root, 'src')).map((path) => relative(root, path).split('\\').join('/'));
    for (const prefix of EXCEPTIONS) expect(all.some((path) => path.startsWith(prefix)), prefix).toBe(true);
    const over = new Set(checked.flatMap(functionsOf).filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => f.name));
    expect(FUNCTION_EXCEPTIONS.filter((name) => !over.has(name))).toEqual([]);
  });
});
