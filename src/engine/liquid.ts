// The one Liquid engine of a config: named filters loaded by glob, text templates parsed once, structural mappings compiled once.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Liquid, type Template } from 'liquidjs';
import { followParsedTexts, keepingParsedTexts } from '../config/yaml-source.js';
import { bindMapping, compileMappingRoot, type CompiledMapping, type CompiledRoot, type MappingProblem, type Verification } from './mapping/compile.js';
import { ExpressionCompiler, type Expr } from './mapping/expression.js';
import { locateProblems } from './mapping/positions.js';
import { scan, stringify } from './mapping/text.js';

export type FilterFn = (value: unknown, ...args: unknown[]) => unknown;

const filtersDir = join(dirname(fileURLToPath(import.meta.url)), 'filters');

/**
 * `locale` named: left out, liquidjs asks Intl for the host's default locale when the engine is made, and that one call
 * pages in about 4.6 MiB of the node binary's ICU data that a worker never needs again (issue 52); named, the `date`
 * filter's names of days and months no longer depend on the host's locale either.
 */
export function createLiquid(): Liquid {
  return new Liquid({ strictFilters: true, strictVariables: false, jsTruthy: true, greedy: false, locale: 'en-US' });
}

let shared: Promise<Liquid> | undefined;
/**
 * The Liquid of every config load in this process, its filters loaded once: they are code (src/engine/filters), the same
 * for every load, so what a TemplateSet on it compiles (text templates, mappings) is shared by content with later loads.
 */
export function sharedLiquid(): Promise<Liquid> {
  return (shared ??= (async () => {
    const liquid = createLiquid();
    await loadFilters(liquid);
    return liquid;
  })());
}

/** Registers every filter exported by src/engine/filters/*.ts (each export is `name -> function`). */
export async function loadFilters(liquid: Liquid): Promise<string[]> {
  const names: string[] = [];
  const files = readdirSync(filtersDir).filter((f) => /\.(ts|js)$/.test(f) && !/\.test\./.test(f)).sort();
  for (const file of files) {
    const mod = (await import(pathToFileURL(join(filtersDir, file)).href)) as { filters?: Record<string, FilterFn> };
    for (const [name, fn] of Object.entries(mod.filters ?? {})) {
      liquid.registerFilter(name, fn);
      names.push(name);
    }
  }
  return names;
}

/**
 * A text template (a prompt, a header value, a path), rendered by liquidjs's public renderSync. One without tags
 * (`Bearer {{ credential }}`, rendered for every upstream call) runs as compiled leaves instead, checked against
 * renderSync when verification is on.
 */
export class TextTemplate {
  constructor(
    private readonly liquid: Liquid,
    readonly source: string,
    private readonly parsed: Template[],
    private readonly compiled: ((scope: object) => string) | undefined,
    private readonly verification: Verification,
  ) {}

  render(scope: object): string {
    if (!this.compiled) return this.interpret(scope);
    const text = this.compiled(scope);
    if (this.verification.verify) {
      const expected = this.interpret(scope);
      if (text !== expected) {
        const message = `text template ${JSON.stringify(this.source.slice(0, 60))}: compiled ${JSON.stringify(text)}, liquidjs ${JSON.stringify(expected)}`;
        this.verification.mismatches.push(message);
        throw new Error(`template differs from liquidjs: ${message}`);
      }
    }
    return text;
  }

  interpret(scope: object): string {
    return this.liquid.renderSync(this.parsed, scope) as string;
  }
}

/**
 * What the TemplateSets of one Liquid compiled, by content, for the next load: a reload with protocols unchanged, or each
 * test gateway of a process, compiled every mapping again (most of a load's time once its fixture runs are remembered).
 * Only what compiled without a problem is kept, so a problem is always found and located by a compile of its own.
 * Bounded by the keys' characters, oldest first out; emptied, and no longer filled, once a serving process stops keeping
 * parsed texts (keepParsedTexts(false), src/config/yaml-source.ts), as the YAML values themselves are.
 */
interface Compiled {
  expressions: ExpressionCompiler;
  mappings: Map<string, CompiledRoot>;
  texts: Map<string, { parsed: Template[]; compiled: ((scope: object) => string) | undefined }>;
  chars: number;
}
const compiledByLiquid = new WeakMap<Liquid, Compiled>();
const COMPILED_MAX_CHARS = 4 * 1024 * 1024;
const everyCompiled = new Set<WeakRef<Compiled>>();
followParsedTexts(() => {
  for (const ref of everyCompiled) {
    const compiled = ref.deref();
    if (!compiled) {
      everyCompiled.delete(ref);
      continue;
    }
    compiled.mappings.clear();
    compiled.texts.clear();
    compiled.chars = 0;
  }
});

function compiledFor(liquid: Liquid): Compiled {
  let compiled = compiledByLiquid.get(liquid);
  if (!compiled) {
    compiled = { expressions: new ExpressionCompiler(liquid), mappings: new Map(), texts: new Map(), chars: 0 };
    compiledByLiquid.set(liquid, compiled);
    // A Liquid of its own (a test's, a benchmark's) is collected with what it compiled: its reference goes then.
    for (const ref of everyCompiled) if (!ref.deref()) everyCompiled.delete(ref);
    everyCompiled.add(new WeakRef(compiled));
  }
  return compiled;
}

/** Keeps `value` under `key` in `map` while processes keep parsed texts, within the bound shared by both maps. */
function keep<T>(compiled: Compiled, map: Map<string, T>, key: string, value: T): void {
  if (!keepingParsedTexts() || key.length > COMPILED_MAX_CHARS / 4) return;
  map.set(key, value);
  compiled.chars += key.length;
  for (const oldest of [compiled.mappings, compiled.texts]) {
    for (const [k] of oldest) {
      if (compiled.chars <= COMPILED_MAX_CHARS) return;
      oldest.delete(k);
      compiled.chars -= k.length;
    }
  }
}

/** Everything Liquid in one config: text templates by source, and mappings by the YAML node they were compiled from. */
export class TemplateSet {
  readonly expressions: ExpressionCompiler;
  /** Tests and MAPPING_VERIFY=1 turn this on: every mapping leaf is evaluated by liquidjs's evalValueSync too and must agree. */
  readonly verification: Verification = { verify: false, mismatches: [] };
  private readonly texts = new Map<string, TextTemplate>();
  private readonly mappings = new Map<unknown, CompiledMapping>();
  private readonly origins = new Map<CompiledMapping, { file: string; pointer: string }>();
  private pending: { pointer: string; tree: unknown; roots: string[] }[] = [];
  /** Files whose mappings did not compile: their fixtures are not run. */
  readonly failedFiles = new Set<string>();

  private readonly compiled: Compiled;

  constructor(readonly liquid: Liquid) {
    this.compiled = compiledFor(liquid);
    this.expressions = this.compiled.expressions;
  }

  set verify(on: boolean) {
    this.verification.verify = on;
  }
  get verify() {
    return this.verification.verify;
  }

  compile(source: string): TextTemplate {
    let template = this.texts.get(source);
    if (!template) {
      let shared = this.compiled.texts.get(source);
      if (!shared) keep(this.compiled, this.compiled.texts, source, (shared = { parsed: this.liquid.parse(source), compiled: this.interpolation(source) }));
      template = new TextTemplate(this.liquid, source, shared.parsed, shared.compiled, this.verification);
      this.texts.set(source, template);
    }
    return template;
  }

  /** Text and `{{ }}` only, as compiled leaves; undefined (renderSync) for tags or any form the leaf compiler refuses. */
  private interpolation(source: string): ((scope: object) => string) | undefined {
    if (source.includes('{%')) return undefined;
    const parts: (string | Expr)[] = [];
    try {
      for (const piece of scan(this.liquid, source)) parts.push('text' in piece ? piece.text : this.expressions.compile(source, piece.begin, piece.end, { slot: () => undefined, roots: undefined }));
    } catch {
      return undefined;
    }
    if (parts.every((p) => typeof p === 'string')) {
      const text = parts.join('');
      return () => text;
    }
    return (scope) => {
      const frame = { env: scope as Record<string, unknown>, slots: [] };
      let out = '';
      for (const part of parts) out += typeof part === 'string' ? part : stringify(part(frame));
      return out;
    };
  }

  get(source: string): TextTemplate {
    const template = this.texts.get(source);
    if (!template) throw new Error(`template was not compiled at load: ${source.slice(0, 60)}`);
    return template;
  }

  /** Called while a file validates, for each node its schema marks as a mapping; compiled by compilePending with positions. */
  collect(pointer: string, tree: unknown, roots: string[]): void {
    this.pending.push({ pointer, tree, roots });
  }

  /** Compiles the mappings collected from `file`; returns its problems as `file:line:col /pointer message`. */
  compilePending(file: string): string[] {
    const problems: MappingProblem[] = [];
    for (const { pointer, tree, roots } of this.pending) {
      const key = JSON.stringify([pointer, roots, tree]);
      let compiled = this.compiled.mappings.get(key);
      if (!compiled) {
        compiled = compileMappingRoot(this.expressions, tree, roots, pointer);
        if (compiled.problems.length) problems.push(...compiled.problems);
        else keep(this.compiled, this.compiled.mappings, key, compiled);
      }
      if (!this.mappings.has(tree)) {
        const mapping = bindMapping(compiled, this.verification);
        this.mappings.set(tree, mapping);
        this.origins.set(mapping, { file, pointer });
      }
    }
    this.pending = [];
    if (problems.length) this.failedFiles.add(file);
    return locateProblems(file, problems);
  }

  /** Warnings for mappings that no fixture rendered, as `file:line:col /pointer message`. */
  unrendered(): string[] {
    const byFile = new Map<string, MappingProblem[]>();
    for (const [mapping, { file, pointer }] of this.origins) {
      if (mapping.renders || this.failedFiles.has(file)) continue;
      byFile.set(file, [...(byFile.get(file) ?? []), { pointer, message: 'no mapping fixture renders this mapping (channels/protocols/tests/, docs/translation.md)' }]);
    }
    return [...byFile].flatMap(([file, problems]) => locateProblems(file, problems));
  }

  /** The mapping compiled at load from this node of a protocol's config. */
  mapping(tree: unknown): CompiledMapping {
    const mapping = this.mappings.get(tree);
    if (!mapping) throw new Error('mapping was not compiled at load');
    return mapping;
  }

  get size() {
    return this.texts.size + this.mappings.size;
  }
}
