// The names a mapping node sees: the caller's roots and the values `$let` and `$for` bound.
import type { Names } from './expression.js';

export const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
export const isList = (v: unknown): v is unknown[] => Array.isArray(v);

export class Scope implements Names {
  constructor(
    readonly roots: readonly string[],
    private readonly parent?: Scope,
    private readonly name?: string,
    private readonly index?: number,
  ) {}
  slot(name: string): number | undefined {
    for (let s: Scope | undefined = this; s; s = s.parent) if (s.name === name) return s.index;
    return undefined;
  }
  bind(name: string, index: number): Scope {
    return new Scope(this.roots, this, name, index);
  }
  /** Local names visible here, innermost first wins: the scope liquidjs sees when a leaf is verified. */
  visible(): [string, number][] {
    const seen = new Map<string, number>();
    for (let s: Scope | undefined = this; s; s = s.parent) if (s.name !== undefined && !seen.has(s.name)) seen.set(s.name, s.index!);
    return [...seen];
  }
}

