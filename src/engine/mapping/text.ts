// Splits a string into literal text and `{{ }}` expressions (liquidjs's public tokenizer), and prints values as Liquid output does.
import { Tokenizer, toValue, TypeGuards, type Liquid } from 'liquidjs';
import { MappingSyntaxError } from './expression.js';

export type Piece = { text: string } | { begin: number; end: number };

/** The pieces of `text`; `{% %}` tags are refused: control flow in a mapping is YAML (`$if`, `$for`, `$case`). */
export function scan(liquid: Liquid, text: string): Piece[] {
  let tokens;
  try {
    tokens = new Tokenizer(text, liquid.options.operators).readTopLevelTokens(liquid.options);
  } catch (err) {
    const message = String((err as Error).message).split('\n')[0].replace(/, line:\d+, col:\d+$/, '');
    throw new MappingSyntaxError(message, (err as { token?: { begin: number } }).token?.begin ?? 0);
  }
  return tokens.map((t): Piece => {
    if (TypeGuards.isOutputToken(t)) return { begin: t.contentRange[0], end: t.contentRange[1] };
    if (TypeGuards.isHTMLToken(t)) return { text: t.getContent() };
    throw new MappingSyntaxError('Liquid tags ({% %}) are not allowed in a mapping: use $if, $for, $case or $let', (t as { begin: number }).begin);
  });
}

/** True when the whole string is one `{{ }}`: its value keeps its type. */
export function isWholeExpression(text: string, pieces: Piece[]): boolean {
  return pieces.length === 1 && 'begin' in pieces[0] && text.startsWith('{{') && text.endsWith('}}');
}

/** A value as Liquid prints it: nil is empty, a list prints its items one after another. */
export function stringify(value: unknown): string {
  value = toValue(value);
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(stringify).join('');
  return String(value);
}
