// Compiles one Liquid expression (a mapping leaf) into a closure, from liquidjs's public parser output and public API only.
import { Context, defaultOperators, Drop, isTruthy, Tokenizer, toValue, toValueSync, TypeGuards, type Liquid, type Token } from 'liquidjs';

/** What a compiled mapping reads while it renders: the caller's scope and the values `$let` and `$for` bound. */
export interface Frame {
  env: Record<string, unknown>;
  slots: unknown[];
}
export type Expr = (f: Frame) => unknown;

/** A mapping that cannot compile, at an offset into the scalar it was read from. */
export class MappingSyntaxError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/** Where a leaf's root names resolve: local bindings (by slot), then the mapping's declared scope (any name when undefined). */
export interface Names {
  slot(name: string): number | undefined;
  roots: readonly string[] | undefined;
}

type Operator = (l: unknown, r: unknown) => unknown;
const hasOwn = Object.prototype.hasOwnProperty;
const isPrimitive = (v: unknown) => v === null || (typeof v !== 'object' && typeof v !== 'function');
const liquidMessage = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0].replace(/, line:\d+, col:\d+$/, '');

/** Liquid's value rules (property reads, operators, filters) bound to one Liquid instance's options and filters. */
export class ExpressionCompiler {
  /** One Context for filters' `this.context` and operators: they read its options, never its scopes (`*_exp` filters are refused). */
  readonly context: Context;
  private readonly ownPropertyOnly: boolean;
  private readonly operators: Record<string, Operator>;

  constructor(readonly liquid: Liquid) {
    this.context = new Context({}, liquid.options, { sync: true }, { liquid });
    this.ownPropertyOnly = liquid.options.ownPropertyOnly !== false;
    const ctx = this.context;
    const generic = liquid.options.operators;
    const run = (op: string): Operator => (l, r) => toValueSync(generic[op](l, r, ctx));
    // Primitives compare as JavaScript does in liquidjs; drops (nil, empty, blank) and collections take liquidjs's own operator.
    const prim = (op: string, js: Operator): Operator => {
      const slow = run(op);
      return (l, r) => (isPrimitive(l) && isPrimitive(r) ? js(l, r) : slow(l, r));
    };
    // `x == nil` is the most common test in a mapping: for anything but a drop or a comparable it is `x` being null or undefined.
    const nil = (new Tokenizer('nil').readValue() as { content?: unknown }).content;
    const plain = (v: unknown) => isPrimitive(v) || (!(v instanceof Drop) && typeof (v as { equals?: unknown }).equals !== 'function');
    const equality = (negate: boolean): Operator => {
      const slow = run(negate ? '!=' : '==');
      return (l, r) => {
        if (isPrimitive(l) && isPrimitive(r)) return (l === r) !== negate;
        if (r === nil && plain(l)) return (l === null || l === undefined) !== negate;
        if (l === nil && plain(r)) return (r === null || r === undefined) !== negate;
        return slow(l, r);
      };
    };
    this.operators = {
      '==': equality(false),
      '!=': equality(true),
      '<': prim('<', (l, r) => (l as number) < (r as number)),
      '>': prim('>', (l, r) => (l as number) > (r as number)),
      '<=': prim('<=', (l, r) => (l as number) <= (r as number)),
      '>=': prim('>=', (l, r) => (l as number) >= (r as number)),
      contains: ((slow) => (l: unknown, r: unknown) => (typeof l === 'string' && isPrimitive(r) ? l.indexOf(r as string) > -1 : slow(l, r)))(run('contains')),
      // Both sides are evaluated first, as in liquidjs (no short circuit).
      and: (l, r) => isTruthy(l, ctx) && isTruthy(r, ctx),
      or: (l, r) => isTruthy(l, ctx) || isTruthy(r, ctx),
    };
    // An engine with its own operators gets them as they are, without the shortcuts above.
    if (generic !== defaultOperators) this.operators = Object.fromEntries(Object.keys(generic).filter((op) => op !== 'not').map((op) => [op, run(op)]));
  }

  truthy(value: unknown): boolean {
    return isTruthy(value, this.context);
  }

  /** `obj[key]` as Liquid reads it (`size`, `first`, `last`, drops); plain JSON data takes a direct path. */
  read(obj: unknown, key: unknown): unknown {
    if (obj === null || obj === undefined) return obj;
    if (typeof obj === 'object') {
      // Parsed JSON (plain objects and arrays, no drops, no functions) is read directly; everything else as liquidjs reads it.
      const proto = Object.getPrototypeOf(obj);
      if (proto === Array.prototype) {
        const list = obj as unknown[];
        if (typeof key === 'number') return this.element(list, key < 0 ? list.length + key : key);
        if (key === 'size') return list.length;
        if (key === 'first') return this.element(list, 0);
        if (key === 'last') return this.element(list, list.length - 1);
      } else if ((proto === Object.prototype || proto === null) && typeof key === 'string') {
        const value = !this.ownPropertyOnly || hasOwn.call(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
        if (value === undefined && key === 'size') return Object.keys(obj).length;
        if (typeof value !== 'function') return value;
      }
    } else if (typeof obj === 'string' && (key === 'size' || key === 'first' || key === 'last')) {
      return key === 'size' ? obj.length : undefined;
    }
    return toValueSync(this.context.readProperty(obj, key as string));
  }

  private element(list: unknown[], index: number): unknown {
    return this.ownPropertyOnly && !hasOwn.call(list, index) ? undefined : list[index];
  }

  /**
   * Compiles the expression at [begin, end) of `text`: a filtered value (`a.b == "x" | default: y`).
   * Every form it does not compile is refused here, at its own offset.
   */
  compile(text: string, begin: number, end: number, names: Names): Expr {
    let parsed;
    const tokenizer = new Tokenizer(text, this.liquid.options.operators, undefined, [begin, end]);
    try {
      parsed = tokenizer.readFilteredValue();
    } catch (err) {
      throw new MappingSyntaxError(liquidMessage(err), (err as { token?: Token }).token?.begin ?? begin);
    }
    let consumed = begin;
    for (const t of parsed.initial.postfix) consumed = Math.max(consumed, t.end);
    for (const f of parsed.filters) consumed = Math.max(consumed, f.end);
    const rest = text.slice(consumed, end);
    if (rest.trim()) {
      const at = consumed + rest.length - rest.trimStart().length;
      throw new MappingSyntaxError(rest.trim().startsWith('|') ? 'a filter name must follow "|"' : `unexpected "${rest.trim()}"`, at);
    }
    if (!parsed.initial.postfix.length) throw new MappingSyntaxError('empty expression', begin);
    let expr = this.expression(parsed.initial.postfix, names);
    for (const filter of parsed.filters) expr = this.filter(expr, filter, names);
    return expr;
  }

  private expression(postfix: Token[], names: Names): Expr {
    const stack: Expr[] = [];
    for (const t of postfix) {
      if (!TypeGuards.isOperatorToken(t)) {
        stack.push(this.token(t, names));
        continue;
      }
      if (t.operator === 'not') {
        const operand = stack.pop();
        if (!operand) throw new MappingSyntaxError('"not" needs an operand', t.begin);
        stack.push((f) => !this.truthy(operand(f)));
        continue;
      }
      const op = this.operators[t.operator];
      if (!op) throw new MappingSyntaxError(`operator "${t.operator}" is not available in mappings`, t.begin);
      const r = stack.pop();
      const l = stack.pop();
      if (!l || !r) throw new MappingSyntaxError(`"${t.operator}" needs two operands`, t.begin);
      stack.push((f) => op(l(f), r(f)));
    }
    if (stack.length !== 1) {
      // Two operands side by side in the source: report the second.
      const inOrder = [...postfix].sort((a, b) => a.begin - b.begin);
      const stray = inOrder.find((t, i) => i > 0 && !TypeGuards.isOperatorToken(t) && !TypeGuards.isOperatorToken(inOrder[i - 1]));
      throw new MappingSyntaxError(`expected an operator before "${stray?.getText() ?? ''}"`, stray?.begin ?? postfix[0].begin);
    }
    return stack[0];
  }

  /** evalToken: literals keep liquidjs's own values (nil, empty and blank are drops that compare as Liquid says). */
  private token(t: Token, names: Names): Expr {
    if (TypeGuards.isLiteralToken(t) || TypeGuards.isQuotedToken(t) || TypeGuards.isNumberToken(t) || TypeGuards.isWordToken(t)) {
      const content = (t as { content: unknown }).content;
      return () => content;
    }
    if (TypeGuards.isPropertyAccessToken(t)) return this.path(t, names);
    throw new MappingSyntaxError(`"${t.getText()}": ranges and grouped expressions are not available in mappings`, t.begin);
  }

  private path(t: Token & { variable?: Token; props: Token[] }, names: Names): Expr {
    let base: Expr;
    let props = t.props;
    if (t.variable) {
      base = this.token(t.variable, names);
    } else {
      const root = props[0];
      if (!root || !TypeGuards.isWordToken(root)) throw new MappingSyntaxError(`"${t.getText()}" must start with a variable name`, t.begin);
      props = props.slice(1);
      base = this.root(root.content, root.begin, names);
    }
    const keys = props.map((p): Expr | { constant: unknown } =>
      'content' in p ? { constant: toValue((p as { content: unknown }).content) } : ((k) => (f: Frame) => toValue(k(f)))(this.token(p, names)),
    );
    if (keys.every((k) => 'constant' in k)) {
      const fixed = keys.map((k) => (k as { constant: unknown }).constant);
      if (fixed.length === 0) return base;
      if (fixed.length === 1) {
        const [k0] = fixed;
        return (f) => this.read(base(f), k0);
      }
      if (fixed.length === 2) {
        const [k0, k1] = fixed;
        return (f) => this.read(this.read(base(f), k0), k1);
      }
      return (f) => {
        let value = base(f);
        for (const k of fixed) value = this.read(value, k);
        return value;
      };
    }
    const readers = keys.map((k) => ('constant' in k ? () => k.constant : k));
    return (f) => {
      let value = base(f);
      for (const k of readers) value = this.read(value, k(f));
      return value;
    };
  }

  private root(name: string, at: number, names: Names): Expr {
    const slot = names.slot(name);
    if (slot !== undefined) return (f) => f.slots[slot];
    if (names.roots && !names.roots.includes(name)) {
      throw new MappingSyntaxError(`unknown variable "${name}" (this mapping's scope: ${names.roots.join(', ') || 'none'})`, at);
    }
    return (f) => this.read(f.env, name);
  }

  private filter(input: Expr, token: { name: string; args: unknown[]; begin: number }, names: Names): Expr {
    const impl = hasOwn.call(this.liquid.filters, token.name) ? this.liquid.filters[token.name] : undefined;
    if (!impl) throw new MappingSyntaxError(`unknown filter "${token.name}"`, token.begin);
    if (token.name.endsWith('_exp')) throw new MappingSyntaxError(`filter "${token.name}" evaluates Liquid text at run time and is not available in mappings`, token.begin);
    const handler = (typeof impl === 'function' ? impl : impl.handler) as (this: unknown, ...args: unknown[]) => unknown;
    const self = { context: this.context, token, liquid: this.liquid };
    const args = token.args.map((a): Expr => {
      if (!Array.isArray(a)) return this.token(a as Token, names);
      const [key, value] = a as [string, Token | undefined];
      const v = value ? this.token(value, names) : () => undefined;
      return (f) => [key, v(f)];
    });
    if (args.length === 0) return (f) => toValueSync(handler.call(self, input(f)));
    if (args.length === 1) {
      const [a0] = args;
      return (f) => toValueSync(handler.call(self, input(f), a0(f)));
    }
    if (args.length === 2) {
      const [a0, a1] = args;
      return (f) => toValueSync(handler.call(self, input(f), a0(f), a1(f)));
    }
    return (f) => toValueSync(handler.call(self, input(f), ...args.map((a) => a(f))));
  }
}
