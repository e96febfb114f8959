// liquidjs 10's value semantics (output, enumeration, comparison, forloop), mirrored for the compiled renderer in
// liquid-compile.ts; the liquidjs originals are module-private, so each is copied with its behaviour unchanged.
import { Drop, toValue, toValueSync } from 'liquidjs';

export const hasOwn = Object.prototype.hasOwnProperty;
const isIterator = (v: unknown): boolean =>
  !!v && typeof (v as Iterator<unknown>).next === 'function' && typeof (v as Iterator<unknown>).throw === 'function' && typeof (v as Iterator<unknown>).return === 'function';
export const settle = (v: unknown) => (isIterator(v) ? toValueSync(v) : v);

/** liquidjs's forloop drop (not exported): the same methods, so reads and `json` behave alike. */
export class ForloopDrop extends Drop {
  i = 0;
  name: string;
  constructor(public length: number, collection: string, variable: string) {
    super();
    this.name = `${variable}-${collection}`;
  }
  next() { this.i++; }
  index0() { return this.i; }
  index() { return this.i + 1; }
  first() { return this.i === 0; }
  last() { return this.i === this.length - 1; }
  rindex() { return this.length - this.i; }
  rindex0() { return this.length - this.i - 1; }
  valueOf() { return JSON.stringify(this); }
}

export function stringify(value: unknown): string {
  value = toValue(value);
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(stringify).join('');
  return String(value);
}

export function toEnumerable(value: unknown): unknown[] {
  value = toValue(value);
  if (Array.isArray(value)) return value;
  if (typeof value === 'string' && value.length > 0) return [value];
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    if (Symbol.iterator in (value as object)) return Array.from(value as Iterable<unknown>);
    return Object.keys(value as object).map((key) => [key, (value as Record<string, unknown>)[key]]);
  }
  return [];
}

export const isComparable = (v: unknown): v is { equals(x: unknown): unknown; gt(x: unknown): unknown; geq(x: unknown): unknown; lt(x: unknown): unknown; leq(x: unknown): unknown } =>
  !!v && ['equals', 'gt', 'geq', 'lt', 'leq'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function');

export function equals(lhs: unknown, rhs: unknown): boolean {
  if (isComparable(lhs)) return settle(lhs.equals(rhs)) as boolean;
  if (isComparable(rhs)) return settle(rhs.equals(lhs)) as boolean;
  lhs = toValue(lhs);
  rhs = toValue(rhs);
  if (Array.isArray(lhs)) return Array.isArray(rhs) && lhs.length === rhs.length && lhs.every((v, i) => equals(v, rhs[i]));
  return lhs === rhs;
}

export function compare(op: 'gt' | 'lt' | 'geq' | 'leq', flipped: 'gt' | 'lt' | 'geq' | 'leq', js: (l: never, r: never) => boolean) {
  return (l: unknown, r: unknown) => {
    if (isComparable(l)) return settle(l[op](r));
    if (isComparable(r)) return settle(r[flipped](l));
    return js(toValue(l) as never, toValue(r) as never);
  };
}
