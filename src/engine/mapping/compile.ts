// Compiles a structural mapping (a YAML tree with Liquid expressions at its leaves) into closures that build the document.
import { toValue } from 'liquidjs';
import { MappingSyntaxError, type ExpressionCompiler, type Expr, type Frame, type Names } from './expression.js';
import { isWholeExpression, scan, stringify } from './text.js';
import { checkedLeaf, renderingVerification, renderUnder, type Verification } from './verify.js';
import { escapeKey, isList, Scope } from './scope.js';

export type { Verification } from './verify.js';

/** What a control node yields when it has nothing to give: its member or list item is left out. */
export const NOTHING: unique symbol = Symbol('nothing');

/** A compile error: at an offset into the scalar at `pointer`, or at one of its keys. */
export interface MappingProblem {
  pointer: string;
  offset?: number;
  key?: string;
  message: string;
}

export interface CompiledMapping {
  render(env: object): unknown;
  /** How often it rendered: the loader warns about a mapping its fixtures never rendered. */
  renders: number;
}

type Node = (f: Frame) => unknown;

const CONTROLS: Record<string, string[]> = { $if: ['then', 'else'], $for: ['do', 'concat'], $case: ['when', 'else'], $let: ['in'], $merge: [], $concat: [] };
const FOR = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s+/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const messageOf = (err: unknown) => String((err as Error)?.message ?? err);

class TreeCompiler {
  readonly problems: MappingProblem[] = [];
  slots = 0;

  constructor(
    private readonly exprs: ExpressionCompiler,
    private readonly verification: Verification,
  ) {}

  private problem(pointer: string, message: string, at: { offset?: number; key?: string } = {}): Node {
    this.problems.push({ pointer, message, ...at });
    return () => null;
  }

  node(value: unknown, pointer: string, scope: Scope): Node {
    if (typeof value === 'string') return this.string(value, pointer, scope);
    if (isList(value)) return this.list(value, pointer, scope);
    if (value !== null && typeof value === 'object') return this.object(value as Record<string, unknown>, pointer, scope);
    return () => value;
  }

  private string(text: string, pointer: string, scope: Scope): Node {
    if (!text.includes('{{') && !text.includes('{%')) return () => text;
    let pieces;
    try {
      pieces = scan(this.exprs.liquid, text);
    } catch (err) {
      return this.problem(pointer, messageOf(err), { offset: (err as MappingSyntaxError).offset });
    }
    if (isWholeExpression(text, pieces)) {
      const piece = pieces[0] as { begin: number; end: number };
      const expr = this.expression(text, piece.begin, piece.end, pointer, scope);
      return (f) => toValue(expr(f));
    }
    const parts = pieces.map((p) => ('text' in p ? p.text : this.expression(text, p.begin, p.end, pointer, scope)));
    return (f) => {
      let out = '';
      for (const part of parts) out += typeof part === 'string' ? part : stringify(part(f));
      return out;
    };
  }

  /** One leaf expression, checked against liquidjs's evalValueSync when verification is on. */
  expression(text: string, begin: number, end: number, pointer: string, scope: Scope): Expr {
    let expr: Expr;
    try {
      expr = this.exprs.compile(text, begin, end, scope);
    } catch (err) {
      if (!(err instanceof MappingSyntaxError)) throw err;
      this.problem(pointer, err.message, { offset: err.offset });
      return () => null;
    }
    return checkedLeaf(expr, text.slice(begin, end), scope.visible(), this.exprs.liquid, this.verification, pointer);
  }

  /** A condition or a collection: a bare expression, `{{ }}` around it allowed. */
  private test(value: unknown, pointer: string, scope: Scope, skip = 0): Expr {
    if (typeof value !== 'string') {
      if (value === null || typeof value !== 'object') return () => value;
      this.problem(pointer, 'expected an expression');
      return () => null;
    }
    const inner = /^(\s*)\{\{-?([\s\S]*?)-?\}\}\s*$/.exec(value.slice(skip));
    if (inner) {
      const begin = skip + inner[1].length + (value.slice(skip + inner[1].length).startsWith('{{-') ? 3 : 2);
      return this.expression(value, begin, begin + inner[2].length, pointer, scope);
    }
    return this.expression(value, skip, value.length, pointer, scope);
  }

  private list(items: unknown[], pointer: string, scope: Scope): Node {
    const nodes = items.map((item, i) => this.node(item, `${pointer}/${i}`, scope));
    return (f) => {
      const out: unknown[] = [];
      for (const n of nodes) {
        const v = n(f);
        if (v !== NOTHING) out.push(v === undefined ? null : v);
      }
      return out;
    };
  }

  private object(obj: Record<string, unknown>, pointer: string, scope: Scope): Node {
    const keys = Object.keys(obj);
    const controls = keys.filter((k) => k.startsWith('$') && !k.startsWith('$$'));
    if (controls.length) return this.control(obj, controls, pointer, scope);
    const members = keys.map((key) => {
      let name = key.startsWith('$$') ? key.slice(1) : key;
      let optional = false;
      if (name.endsWith('??')) name = name.slice(0, -1);
      else if (name.endsWith('?')) {
        optional = true;
        name = name.slice(0, -1);
      }
      return { name, optional, value: this.node(obj[key], `${pointer}/${escapeKey(key)}`, scope) };
    });
    return (f) => {
      const out: Record<string, unknown> = {};
      for (const m of members) {
        const v = m.value(f);
        if (v === NOTHING) continue;
        if (v === null || v === undefined) {
          if (!m.optional) out[m.name] = null;
        } else out[m.name] = v;
      }
      return out;
    };
  }

  private control(obj: Record<string, unknown>, controls: string[], pointer: string, scope: Scope): Node {
    const kind = controls[0];
    const companions = CONTROLS[kind];
    if (!companions) return this.problem(pointer, `unknown control "${kind}" (known: ${Object.keys(CONTROLS).join(', ')}; write "$${kind}" for a literal key)`, { key: kind });
    if (controls.length > 1) return this.problem(pointer, `one control per object: "${controls[1]}" beside "${kind}"`, { key: controls[1] });
    for (const key of Object.keys(obj)) {
      if (key !== kind && !companions.includes(key)) {
        return this.problem(pointer, `unknown key "${key}" in a ${kind} node (expected ${companions.map((c) => `"${c}"`).join(', ') || 'none'})`, { key });
      }
    }
    const at = (key: string) => `${pointer}/${escapeKey(key)}`;
    switch (kind) {
      case '$if':
        return this.ifNode(obj, at, scope, pointer);
      case '$for':
        return this.forNode(obj, at, scope, pointer);
      case '$case':
        return this.caseNode(obj, at, scope, pointer);
      case '$let':
        return this.letNode(obj, at, scope, pointer);
      default:
        return this.joinNode(kind as '$merge' | '$concat', obj[kind], at(kind), scope);
    }
  }

  private ifNode(obj: Record<string, unknown>, at: (k: string) => string, scope: Scope, pointer: string): Node {
    if (!('then' in obj)) return this.problem(pointer, '$if needs "then"', { key: '$if' });
    const test = this.test(obj.$if, at('$if'), scope);
    const then = this.node(obj.then, at('then'), scope);
    const otherwise = 'else' in obj ? this.node(obj.else, at('else'), scope) : () => NOTHING;
    return (f) => (this.exprs.truthy(test(f)) ? then(f) : otherwise(f));
  }

  private forNode(obj: Record<string, unknown>, at: (k: string) => string, scope: Scope, pointer: string): Node {
    const spec = obj.$for;
    const head = typeof spec === 'string' ? FOR.exec(spec) : null;
    if (!head) return this.problem(at('$for'), '$for expects "name in expression"', { offset: 0 });
    const flat = 'concat' in obj;
    if (flat === 'do' in obj) return this.problem(pointer, '$for needs exactly one of "do" (one item each) or "concat" (a list each)', { key: '$for' });
    const collection = this.test(spec, at('$for'), scope, head[0].length);
    const slot = this.slots++;
    const body = this.node(flat ? obj.concat : obj.do, at(flat ? 'concat' : 'do'), scope.bind(head[1], slot));
    const where = at(flat ? 'concat' : 'do');
    return (f) => {
      const items = toValue(collection(f));
      const out: unknown[] = [];
      if (!isList(items)) return out;
      for (const item of items) {
        f.slots[slot] = item;
        const v = body(f);
        if (v === NOTHING) continue;
        if (!flat) out.push(v === undefined ? null : v);
        else if (isList(v)) for (const x of v) out.push(x);
        else if (v !== null && v !== undefined) throw new Error(`${where} must yield a list for each item`);
      }
      return out;
    };
  }

  private caseNode(obj: Record<string, unknown>, at: (k: string) => string, scope: Scope, pointer: string): Node {
    const when = obj.when;
    if (!when || typeof when !== 'object' || isList(when)) return this.problem(pointer, '$case needs "when": a map of values to results', { key: obj.when === undefined ? '$case' : 'when' });
    const subject = this.test(obj.$case, at('$case'), scope);
    const table = new Map<string, Node>();
    for (const [key, value] of Object.entries(when as Record<string, unknown>)) {
      const node = this.node(value, `${at('when')}/${escapeKey(key)}`, scope);
      for (const alternative of key.split('|')) table.set(alternative.trim(), node);
    }
    const otherwise = 'else' in obj ? this.node(obj.else, at('else'), scope) : () => NOTHING;
    return (f) => {
      const v = toValue(subject(f));
      const hit = typeof v === 'string' ? table.get(v) : typeof v === 'number' || typeof v === 'boolean' ? table.get(String(v)) : undefined;
      return hit ? hit(f) : otherwise(f);
    };
  }

  private letNode(obj: Record<string, unknown>, at: (k: string) => string, scope: Scope, pointer: string): Node {
    const bindings = obj.$let;
    if (!bindings || typeof bindings !== 'object' || isList(bindings)) return this.problem(at('$let'), '$let expects a map of names to values');
    if (!('in' in obj)) return this.problem(pointer, '$let needs "in"', { key: '$let' });
    const steps: { slot: number; value: Node }[] = [];
    let inner = scope;
    for (const [name, value] of Object.entries(bindings as Record<string, unknown>)) {
      if (!NAME.test(name)) return this.problem(at('$let'), `"${name}" is not a variable name`, { key: name });
      const slot = this.slots++;
      steps.push({ slot, value: this.node(value, `${at('$let')}/${escapeKey(name)}`, inner) });
      inner = inner.bind(name, slot);
    }
    const body = this.node(obj.in, at('in'), inner);
    return (f) => {
      for (const step of steps) {
        const v = step.value(f);
        f.slots[step.slot] = v === NOTHING ? undefined : v;
      }
      return body(f);
    };
  }

  private joinNode(kind: '$merge' | '$concat', parts: unknown, pointer: string, scope: Scope): Node {
    if (!isList(parts)) return this.problem(pointer, `${kind} expects a list`);
    const nodes = parts.map((part, i) => ({ node: this.node(part, `${pointer}/${i}`, scope), where: `${pointer}/${i}` }));
    if (kind === '$concat') {
      return (f) => {
        const out: unknown[] = [];
        for (const { node, where } of nodes) {
          const v = node(f);
          if (v === NOTHING || v === null || v === undefined) continue;
          if (!isList(v)) throw new Error(`${where} must yield a list`);
          for (const x of v) out.push(x);
        }
        return out;
      };
    }
    return (f) => {
      const out: Record<string, unknown> = {};
      for (const { node, where } of nodes) {
        const v = node(f);
        if (v === NOTHING || v === null || v === undefined) continue;
        if (typeof v !== 'object' || isList(v)) throw new Error(`${where} must yield an object`);
        for (const key of Object.keys(v)) Object.defineProperty(out, key, { value: (v as Record<string, unknown>)[key], enumerable: true, writable: true, configurable: true });
      }
      return out;
    };
  }
}

/** A mapping compiled, not yet bound to a config's verification: what TemplateSet shares between loads. */
export interface CompiledRoot {
  root: Node;
  slots: number;
  problems: MappingProblem[];
}

/** Compiles `tree` for a scope of `roots` (the names its caller provides); problems are reported, never thrown. */
export function compileMappingRoot(exprs: ExpressionCompiler, tree: unknown, roots: readonly string[], pointer: string): CompiledRoot {
  const compiler = new TreeCompiler(exprs, renderingVerification);
  const root = compiler.node(tree, pointer, new Scope(roots));
  return { root, slots: compiler.slots, problems: compiler.problems };
}

/** `compiled` as one config's mapping: rendered under that config's verification, its renders counted for that config. */
export function bindMapping({ root, slots }: CompiledRoot, verification: Verification): CompiledMapping {
  return {
    renders: 0,
    render(env) {
      this.renders++;
      const v = renderUnder(verification, () => root({ env: env as Record<string, unknown>, slots: slots ? new Array(slots) : [] }));
      return v === NOTHING ? null : v;
    },
  };
}

/** Compiles `tree` and binds it to `verification` (compileMappingRoot, then bindMapping). */
export function compileMapping(exprs: ExpressionCompiler, verification: Verification, tree: unknown, roots: readonly string[], pointer: string): { mapping: CompiledMapping; problems: MappingProblem[] } {
  const compiled = compileMappingRoot(exprs, tree, roots, pointer);
  return { problems: compiled.problems, mapping: bindMapping(compiled, verification) };
}
