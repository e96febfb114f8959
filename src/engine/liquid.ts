// The one Liquid engine: strict filters, named filters loaded by glob from ./filters, templates parsed once at load.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Liquid, type Template } from 'liquidjs';
import { compileTemplate } from './liquid-compile.js';

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

/** A template compiled once; render() returns a string, renderJson() parses what it renders. */
export class CompiledTemplate {
  /** The template as JS closures, when it uses only the subset liquid-compile.ts mirrors. */
  readonly compiled: ((scope: object) => string) | undefined;

  constructor(
    private readonly liquid: Liquid,
    readonly source: string,
    private readonly parsed: Template[],
    private readonly set?: TemplateSet,
  ) {
    this.compiled = compileTemplate(liquid, parsed);
  }

  render(scope: object): string {
    if (!this.compiled) return this.interpret(scope);
    let text: string;
    try {
      text = this.compiled(scope);
    } catch (err) {
      // Rendering is pure: liquidjs renders it again to throw its own error (a filter's refusal wrapped as liquidjs wraps it).
      this.interpret(scope);
      if (this.set?.verify) this.set.mismatch(`compiled template threw where liquidjs rendered: ${(err as Error).message}`);
      throw err;
    }
    if (this.set?.verify) {
      const expected = this.interpret(scope);
      if (text !== expected) this.set.mismatch(`compiled template rendered differently from liquidjs:\n${text}\n---\n${expected}`);
    }
    return text;
  }

  /** Renders through the liquidjs interpreter. */
  interpret(scope: object): string {
    return this.liquid.renderSync(this.parsed, scope) as string;
  }

  renderJson<T = unknown>(scope: object): T {
    return JSON.parse(this.render(scope)) as T;
  }
}

/** Cache of compiled templates keyed by source; filled while the config is validated. */
export class TemplateSet {
  private readonly compiled = new Map<string, CompiledTemplate>();
  /** Tests set this to render every compiled template through liquidjs too and record and throw on any difference. */
  verify = false;
  readonly mismatches: string[] = [];
  constructor(readonly liquid: Liquid) {}

  compile(source: string): CompiledTemplate {
    let template = this.compiled.get(source);
    if (!template) {
      template = new CompiledTemplate(this.liquid, source, this.liquid.parse(source), this);
      this.compiled.set(source, template);
    }
    return template;
  }

  get(source: string): CompiledTemplate {
    const template = this.compiled.get(source);
    if (!template) throw new Error(`template was not compiled at load: ${source.slice(0, 60)}`);
    return template;
  }

  mismatch(message: string): never {
    this.mismatches.push(message);
    throw new Error(message);
  }

  get size() {
    return this.compiled.size;
  }
}
