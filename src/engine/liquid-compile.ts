// Compiles parsed Liquid into plain closures, so hot templates skip liquidjs's generator interpreter (~2 us a tag).
// Only the subset the mappings use is compiled, mirroring liquidjs 10's semantics step by step; a template with any
// other construct, option or filter returns undefined here and keeps rendering through liquidjs.
import {
  AssignTag, CaptureTag, CaseTag, CommentTag, Context, defaultOperators, Drop, ForTag, IfTag, InlineCommentTag, isTruthy, Output,
  toValue, TypeGuards, UnlessTag, type Liquid, type Template,
} from 'liquidjs';
import { compare, equals, ForloopDrop, hasOwn, settle, stringify, toEnumerable } from './liquid-values.js';

/** One render: the caller's scope, liquidjs's scope stack (assign/capture write the bottom one) and the output so far. */
interface Frame {
  env: Record<string, unknown>;
  scopes: Record<string, unknown>[];
  out: string;
  /** A liquidjs Context for filters that read `this.context`, made on first use. */
  context?: Context;
}
type Node = (f: Frame) => void;
type Expr = (f: Frame) => unknown;

// Loosely typed views of liquidjs 10 internals; test/liquid-compile.test.ts checks the result against the installed liquidjs.
interface Tok { content?: unknown; variable?: Tok; props?: Tok[]; operator?: string; lhs?: Tok; rhs?: Tok; kind?: number; initial?: unknown }
interface ValueLike { initial: { postfix: Tok[] }; filters: { name: string; handler: (...args: unknown[]) => unknown; args: unknown[]; token: unknown }[] }

class Unsupported extends Error {}

export function compileTemplate(liquid: Liquid, templates: Template[]): ((scope: object) => string) | undefined {
  const opts = liquid.options as unknown as Record<string, unknown>;
  // Options that change rendering beyond what is mirrored here keep the interpreter.
  if (opts.operators !== defaultOperators || opts.keepOutputType || opts.catchAllErrors || opts.strictVariables || opts.lenientIf || opts.orderedFilterParameters) return undefined;
  if (opts.memoryLimit !== Infinity || opts.renderLimit !== Infinity) return undefined;
  const ownPropertyOnly = opts.ownPropertyOnly as boolean;
  const truthCtx = { opts: liquid.options } as unknown as Context;
  const truthy = (v: unknown) => isTruthy(v, truthCtx);
  const globals = (opts.globals ?? {}) as Record<string, unknown>;

  function contextOf(f: Frame): Context {
    return (f.context ??= new Context(f.env, liquid.options, { sync: true }, { liquid }));
  }
  /** A filter's `this`: the Context is made only if the filter reads it (the named filters never do). */
  class FilterThis {
    constructor(private readonly frame: Frame, readonly token: unknown) {}
    get context() {
      return contextOf(this.frame);
    }
    get liquid() {
      return liquid;
    }
  }

  function readArrayElement(arr: unknown[], index: number) {
    if (index < 0) index = arr.length + index;
    if (ownPropertyOnly && !hasOwn.call(arr, index)) return undefined;
    return arr[index];
  }
  function readJsProperty(obj: object, key: unknown) {
    if (ownPropertyOnly && !hasOwn.call(obj, key as PropertyKey) && !(obj instanceof Drop)) return undefined;
    return (obj as Record<PropertyKey, unknown>)[key as PropertyKey];
  }
  // Context.readProperty, including `size`, `first` and `last` on arrays and strings.
  function readProperty(f: Frame, obj: unknown, key: unknown): unknown {
    while (obj && typeof (obj as { toLiquid?: unknown }).toLiquid === 'function') obj = (obj as { toLiquid(): unknown }).toLiquid();
    key = toValue(key);
    if (obj === null || obj === undefined) return obj;
    if (Array.isArray(obj) && typeof key === 'number') return readArrayElement(obj, key);
    const value = readJsProperty(obj as object, key);
    if (value === undefined && obj instanceof Drop) return settle(obj.liquidMethodMissing(key as string, contextOf(f)));
    if (typeof value === 'function') return settle(value.call(obj));
    if (key === 'size') {
      const o = obj as Record<string, unknown> & { length?: number };
      if (hasOwn.call(o, 'size') || o.size !== undefined) return o.size;
      if (Array.isArray(o) || typeof o === 'string') return o.length;
      return typeof o === 'object' ? Object.keys(o).length : undefined;
    }
    if (key === 'first') return Array.isArray(obj) ? readArrayElement(obj, 0) : readJsProperty(obj as object, 'first');
    if (key === 'last') return Array.isArray(obj) ? readArrayElement(obj, -1) : readJsProperty(obj as object, 'last');
    return value;
  }
  function findScope(f: Frame, key: unknown): unknown {
    for (let i = f.scopes.length - 1; i >= 0; i--) if ((key as string) in f.scopes[i]) return f.scopes[i];
    if ((key as string) in f.env) return f.env;
    return globals;
  }

  // evalToken: literals, quoted strings and numbers carry `content`; property access reads path by path.
  function token(t: Tok | undefined): Expr {
    if (!t) return () => undefined;
    if ('content' in t) {
      const content = t.content;
      return () => content;
    }
    if (TypeGuards.isPropertyAccessToken(t as never)) {
      const keys = t.props!.map((p) => token(p));
      const fixed = t.props!.every((p) => 'content' in p) ? t.props!.map((p) => toValue(p.content)) : undefined;
      const variable = t.variable ? token(t.variable) : undefined;
      return (f) => {
        const props = fixed ?? keys.map((k) => toValue(k(f)));
        let scope = variable ? variable(f) : findScope(f, props[0]);
        for (let i = 0; i < props.length; i++) scope = readProperty(f, scope, props[i]);
        return scope;
      };
    }
    if (TypeGuards.isRangeToken(t as never)) {
      const low = token(t.lhs);
      const high = token(t.rhs);
      return (f) => {
        const out: number[] = [];
        for (let i = +(toValue(low(f)) as number); i < +(toValue(high(f)) as number) + 1; i++) out.push(i);
        return out;
      };
    }
    throw new Unsupported('token');
  }

  const binary: Record<string, (l: unknown, r: unknown) => unknown> = {
    '==': equals,
    '!=': (l, r) => !equals(l, r),
    '>': compare('gt', 'lt', (l, r) => l > r),
    '<': compare('lt', 'gt', (l, r) => l < r),
    '>=': compare('geq', 'leq', (l, r) => l >= r),
    '<=': compare('leq', 'geq', (l, r) => l <= r),
    contains: (l, r) => {
      l = toValue(l);
      if (Array.isArray(l)) return l.some((v) => equals(v, r));
      if (typeof (l as { indexOf?: unknown })?.indexOf === 'function') return (l as string).indexOf(toValue(r) as string) > -1;
      return false;
    },
    // Both sides are evaluated first, as liquidjs does (no short circuit).
    and: (l, r) => truthy(toValue(l)) && truthy(toValue(r)),
    or: (l, r) => truthy(toValue(l)) || truthy(toValue(r)),
  };

  // Expression.evaluate over its postfix tokens, folded into a tree at compile time.
  function expression(postfix: Tok[]): Expr {
    const stack: Expr[] = [];
    for (const t of postfix) {
      if (!TypeGuards.isOperatorToken(t as never)) {
        stack.push(token(t));
      } else if (t.operator === 'not') {
        const operand = stack.pop() ?? (() => undefined);
        stack.push((f) => !truthy(toValue(operand(f))));
      } else {
        const fn = binary[t.operator!];
        if (!fn) throw new Unsupported(t.operator);
        const r = stack.pop() ?? (() => undefined);
        const l = stack.pop() ?? (() => undefined);
        stack.push((f) => fn(l(f), r(f)));
      }
    }
    return stack[0] ?? (() => undefined);
  }

  // Value.value: the expression, then each filter with its evaluated arguments.
  function value(v: ValueLike): Expr {
    let expr = expression(v.initial.postfix);
    for (const filter of v.filters) {
      if (filter.name.endsWith('_exp')) throw new Unsupported(filter.name); // these evaluate against the Context's own scopes
      const args = filter.args.map((a) => (Array.isArray(a) ? { key: a[0] as string, value: token(a[1] as Tok) } : { value: token(a as Tok) }));
      const input = expr;
      const { handler, token: filterToken } = filter;
      expr = (f) => {
        const argv = args.map((a) => (a.key === undefined ? a.value(f) : [a.key, a.value(f)]));
        return settle(handler.apply(new FilterThis(f, filterToken), [input(f), ...argv]));
      };
    }
    return expr;
  }

  function block(list: Template[] | undefined): Node {
    const nodes = (list ?? []).map(node).filter((n): n is Node => n !== undefined);
    if (nodes.length === 1) return nodes[0];
    return (f) => {
      for (const n of nodes) n(f);
    };
  }

  function node(t: Template): Node | undefined {
    const any = t as unknown as Record<string, any>;
    // liquidjs does not export its HTML class; the parser makes one for every HTML token.
    if (TypeGuards.isHTMLToken(t.token as never) && typeof any.str === 'string') {
      const str: string = any.str;
      return (f) => void (f.out += str);
    }
    if (t instanceof Output) {
      const v = value(any.value as ValueLike);
      return (f) => void (f.out += stringify(toValue(v(f))));
    }
    if (t instanceof IfTag) {
      const branches = (any.branches as { value: ValueLike; templates: Template[] }[]).map((b) => ({ test: value(b.value), body: block(b.templates) }));
      const otherwise = block(any.elseTemplates);
      return (f) => {
        for (const b of branches) if (truthy(toValue(b.test(f)))) return b.body(f);
        otherwise(f);
      };
    }
    if (t instanceof UnlessTag) {
      const branches = (any.branches as { value: ValueLike; test: (v: unknown, c: unknown) => boolean; templates: Template[] }[]).map((b) => ({ value: value(b.value), test: b.test, body: block(b.templates) }));
      const otherwise = block(any.elseTemplates);
      return (f) => {
        for (const b of branches) if (b.test(toValue(b.value(f)), truthCtx)) return b.body(f);
        otherwise(f);
      };
    }
    if (t instanceof CaseTag) {
      const target = value(any.value as ValueLike);
      const branches = (any.branches as { values: Tok[]; templates: Template[] }[]).map((b) => ({ values: b.values.map(token), body: block(b.templates) }));
      const otherwise = block(any.elseTemplates);
      return (f) => {
        const subject = toValue(target(f));
        let hit = false;
        // Every matching branch renders, as in liquidjs: a hit stops only its own `when` list.
        for (const b of branches) {
          for (const candidate of b.values) {
            if (equals(subject, candidate(f))) {
              b.body(f);
              hit = true;
              break;
            }
          }
        }
        if (!hit) otherwise(f);
      };
    }
    if (t instanceof ForTag) {
      if (Object.keys((any.hash as { hash: object }).hash).length) throw new Unsupported('for modifiers');
      const variable = any.variable as string;
      const collectionToken = any.collection as Tok & { getText(): string };
      const collection = token(collectionToken);
      const text = collectionToken.getText();
      const body = block(any.templates);
      const otherwise = block(any.elseTemplates);
      return (f) => {
        const items = toEnumerable(collection(f));
        if (!items.length) return otherwise(f);
        const forloop = new ForloopDrop(items.length, text, variable);
        const scope: Record<string, unknown> = Object.create(null);
        scope.forloop = forloop;
        f.scopes.push(scope);
        for (const item of items) {
          scope[variable] = item;
          body(f);
          forloop.next();
        }
        f.scopes.pop();
      };
    }
    if (t instanceof AssignTag) {
      const key = any.key as string;
      const v = value(any.value as ValueLike);
      return (f) => void (f.scopes[0][key] = v(f));
    }
    if (t instanceof CaptureTag) {
      const key = any.variable as string;
      const body = block(any.templates);
      return (f) => {
        const outer = f.out;
        f.out = '';
        body(f);
        f.scopes[0][key] = f.out;
        f.out = outer;
      };
    }
    if (t instanceof CommentTag || t instanceof InlineCommentTag) return undefined;
    throw new Unsupported((t as { token?: { name?: string } }).token?.name ?? 'template');
  }

  let root: Node;
  try {
    root = block(templates);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  return (scope) => {
    const env = (scope !== null && (typeof scope === 'object' || typeof scope === 'function') ? scope : Object(scope)) as Record<string, unknown>;
    const f: Frame = { env, scopes: [Object.create(null)], out: '' };
    root(f);
    return f.out;
  };
}
