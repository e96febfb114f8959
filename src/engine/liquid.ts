// The one Liquid engine: strict filters, named filters loaded by glob from ./filters, templates parsed once at load.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Liquid, type Template } from 'liquidjs';

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
  constructor(
    private readonly liquid: Liquid,
    readonly source: string,
    private readonly parsed: Template[],
  ) {}

  render(scope: object): string {
    return this.liquid.renderSync(this.parsed, scope) as string;
  }

  renderJson<T = unknown>(scope: object): T {
    return JSON.parse(this.render(scope)) as T;
  }
}

/** Cache of compiled templates keyed by source; filled while the config is validated. */
export class TemplateSet {
  private readonly compiled = new Map<string, CompiledTemplate>();
  constructor(readonly liquid: Liquid) {}

  compile(source: string): CompiledTemplate {
    let template = this.compiled.get(source);
    if (!template) {
      template = new CompiledTemplate(this.liquid, source, this.liquid.parse(source));
      this.compiled.set(source, template);
    }
    return template;
  }

  get(source: string): CompiledTemplate {
    const template = this.compiled.get(source);
    if (!template) throw new Error(`template was not compiled at load: ${source.slice(0, 60)}`);
    return template;
  }

  get size() {
    return this.compiled.size;
  }
}
