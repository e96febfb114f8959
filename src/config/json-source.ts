// Reads a JSON file (a JSON Schema, shipped or the operator's); a syntax error is located as `file:line:col` like every
// other config problem, never a stack trace naming no file.
import { readFileSync } from 'node:fs';
import { parse as parseTolerantly, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { displayPath } from './yaml-source.js';

/** `file:line:col` of a character offset in `text` (both counted from 1). */
function position(file: string, text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${displayPath(file)}:${line}:${offset - before.lastIndexOf('\n')}`;
}

/** "PropertyNameExpected" -> "property name expected". */
const words = (code: string) => code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** The file's value, or its first syntax error at its position (or why it could not be read at all). */
export function readJsonFile(file: string): { file: string; value?: unknown; problem?: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { file, problem: `${displayPath(file)}:1:1 / cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  try {
    return { file, value: JSON.parse(text) };
  } catch (err) {
    // JSON.parse says what but not always where; the scanner says where (strict: no comments, no trailing commas).
    const errors: ParseError[] = [];
    parseTolerantly(text, errors, { allowTrailingComma: false, disallowComments: true });
    const first = errors[0];
    const where = position(file, text, first ? first.offset : text.length);
    const what = first ? words(printParseErrorCode(first.error)) : (err as Error).message.split('\n')[0];
    return { file, problem: `${where} / JSON syntax error: ${what}` };
  }
}
