// The one Liquid engine of a config: named filters loaded by glob, text templates parsed once, structural mappings compiled once.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Liquid, type Template } from 'liquidjs';
import { compileMapping, type CompiledMapping, type MappingProblem, type Verification } from './mapping/compile.js';
import { ExpressionCompiler } from './mapping/expression.js';
import { locateProblems } from './mapping/positions.js';

export type FilterFn = (value: unknown, ...args: unknown[]) => unknown;

const filtersDir = join(dirname(fileURLToPath(import.meta.url)), 'filters');

export function createLiquid(): Liquid {
  return new Liquid({ strictFilters: true, strictVariables: false, jsTruthy: true, greedy: false });
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

/** A text template (a prompt, a header value, a path): rendered by liquidjs's public renderSync. */
export class TextTemplate {
  constructor(
    private readonly liquid: Liquid,
    readonly source: string,
    private readonly parsed: Template[],
  ) {}

  render(scope: object): string {
    return this.liquid.renderSync(this.parsed, scope) as string;
  }
}

/** Everything Liquid in one config: text templates by source, and mappings by the YAML node they were compiled from. */
export class TemplateSet {
  readonly expressions: ExpressionCompiler;
  /** Tests and MAPPING_VERIFY=1 turn this on: every mapping leaf is evaluated by liquidjs's evalValueSync too and must agree. */
  readonly verification: Verification = { verify: false, mismatches: [] };
  private readonly texts = new Map<string, TextTemplate>();
  private readonly mappings = new Map<unknown, CompiledMapping>();
  private pending: { pointer: string; tree: unknown; roots: string[] }[] = [];
  /** Files whose mappings did not compile: their fixtures are not run. */
  readonly failedFiles = new Set<string>();

  constructor(readonly liquid: Liquid) {
    this.expressions = new ExpressionCompiler(liquid);
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
      template = new TextTemplate(this.liquid, source, this.liquid.parse(source));
      this.texts.set(source, template);
    }
    return template;
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
      const compiled = compileMapping(this.expressions, this.verification, tree, roots, pointer);
      problems.push(...compiled.problems);
      if (!this.mappings.has(tree)) this.mappings.set(tree, compiled.mapping);
    }
    this.pending = [];
    if (problems.length) this.failedFiles.add(file);
    return locateProblems(file, problems);
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
