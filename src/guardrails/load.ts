// Guardrail files (guardrails.dir) checked and built at load: each guardrail compiled by its kind (kinds.ts), the ids
// routes name resolved, the models it names found, and the chain of every route and model formed once. Every problem at its own file:line:col; none declared, no setup (a call then checks nothing).
import { clientValue } from '../base/errors.js';
import type { GuardrailSchema as GuardrailGuardrail } from '../config/types.js';
import type { Problems } from '../config/problems.js';
import type { RouteNode, RouteSchema } from '../config/types.js';
import type { ValidatedFile } from '../config/validate.js';
import type { YamlSource } from '../config/yaml-source.js';
import type { GuardrailChain, GuardrailSetup } from '../engine/guardrails.js';
import { Chain } from './chain.js';
import type { Guardrail } from './guardrail.js';
import { compileGuardrail, type KindInputs } from './kinds.js';

type GuardrailFileValue = GuardrailGuardrail | GuardrailGuardrail[];

interface Declared {
  spec: GuardrailGuardrail;
  source: YamlSource;
  pointer: string;
}

export interface GuardrailInputs extends KindInputs {
  files: ValidatedFile<GuardrailFileValue>[];
  routeFiles: ValidatedFile<RouteSchema | RouteSchema[]>[];
  holdChars: number;
}

function declared<T>(files: ValidatedFile<T | T[]>[]): { value: T; source: YamlSource; pointer: string }[] {
  return files.flatMap(({ source, value }) => (value === undefined ? [] : Array.isArray(value) ? value.map((v, i) => ({ value: v, source, pointer: `/${i}` })) : [{ value, source, pointer: '' }]));
}

/** One guardrail compiled by its kind, its models found; undefined when a check failed (its problems fail the load). */
function compileDeclared({ spec, source, pointer }: Declared, inputs: GuardrailInputs, problems: Problems): Guardrail | undefined {
  const before = problems.list.length;
  const add = (path: string, message: string) => problems.add(source, `${pointer}${path}`, message);
  spec.models?.forEach((name, i) => {
    if (!inputs.models.has(name) && !inputs.aliases.has(name)) add(`/models/${i}`, `no channel serves model ${clientValue(name)}`);
  });
  const guardrail = compileGuardrail(spec, inputs, add);
  return problems.list.length > before ? undefined : guardrail;
}

/** The ids each route names, its own and those of the routes it leads to; an unknown id is a problem at its place. */
function routeAttachments(inputs: GuardrailInputs, known: Set<string>, problems: Problems): Map<string, string[]> {
  const own = new Map<string, string[]>();
  for (const { value, source, pointer } of declared(inputs.routeFiles)) {
    const ids = (value as RouteSchema & { guardrails?: string[] }).guardrails ?? [];
    ids.forEach((id, i) => {
      if (!known.has(id)) problems.add(source, `${pointer}/guardrails/${i}`, `no guardrail ${clientValue(id)} (guardrails/ files)`);
    });
    own.set(value.id, ids);
  }
  const all = new Map<string, string[]>();
  const collect = (node: RouteNode, into: Set<string>) => {
    for (const id of own.get(node.id) ?? []) into.add(id);
    for (const target of node.targets) if (target.route) collect(target.route, into);
  };
  for (const node of inputs.routes.values()) {
    const ids = new Set<string>();
    collect(node, ids);
    all.set(node.id, [...ids]);
  }
  return all;
}

export function buildGuardrails(inputs: GuardrailInputs, problems: Problems): GuardrailSetup | undefined {
  const all = declared(inputs.files).map(({ value, source, pointer }) => ({ spec: value, source, pointer }));
  const seen = new Map<string, Declared>();
  for (const entry of all) {
    if (seen.has(entry.spec.id)) problems.add(entry.source, `${entry.pointer}/id`, `guardrail ${clientValue(entry.spec.id)} is declared twice`);
    else seen.set(entry.spec.id, entry);
  }
  const byRoute = routeAttachments(inputs, new Set(seen.keys()), problems);
  const named = new Set([...byRoute.values()].flat());
  for (const entry of seen.values()) {
    if (!named.has(entry.spec.id) && !entry.spec.models?.length && !entry.spec.offered) {
      problems.add(entry.source, `${entry.pointer}/id`, `guardrail ${clientValue(entry.spec.id)} is attached to nothing: name it in a route's guardrails, give it models, or offer it to workspaces (offered: true)`);
    }
  }
  const compiled = new Map<string, Guardrail>();
  for (const entry of seen.values()) {
    const guardrail = compileDeclared(entry, inputs, problems);
    if (guardrail) compiled.set(entry.spec.id, guardrail);
  }
  if (!seen.size) return undefined;
  return new Setup(compiled, byRoute, [...seen.values()].map((e) => e.spec), inputs);
}

/** The chains of every route and model, formed once; a workspace's or key's additions form theirs on first use (bounded). */
class Setup implements GuardrailSetup {
  readonly offered: ReadonlySet<string>;
  readonly declared: ReadonlyMap<string, unknown>;
  private readonly byName = new Map<string, readonly string[]>();
  private readonly chains = new Map<string, GuardrailChain>();
  private readonly holdChars: number;

  constructor(
    private readonly compiled: Map<string, Guardrail>,
    byRoute: Map<string, string[]>,
    specs: GuardrailGuardrail[],
    inputs: GuardrailInputs,
  ) {
    this.holdChars = inputs.holdChars;
    this.declared = new Map(specs.map((spec) => [spec.id, spec]));
    this.offered = new Set(specs.filter((s) => s.offered).map((s) => s.id));
    const byModel = new Map<string, string[]>();
    for (const spec of specs) {
      for (const name of spec.models ?? []) {
        const id = inputs.models.has(name) ? name : inputs.aliases.get(name)!;
        byModel.set(id, [...(byModel.get(id) ?? []), spec.id]);
      }
    }
    for (const [id, ids] of byModel) this.byName.set(id, ids);
    for (const [alias, id] of inputs.aliases) if (byModel.has(id)) this.byName.set(alias, byModel.get(id)!);
    for (const [routeId, ids] of byRoute) {
      const models = inputs.routes.get(routeId)!.reachable.flatMap((r) => byModel.get(r.model.id) ?? []);
      const union = [...new Set([...ids, ...models])];
      if (union.length) this.byName.set(routeId, union);
    }
  }

  chainFor(name: string, extra?: readonly string[]): GuardrailChain | undefined {
    const base = this.byName.get(name);
    const ids = extra?.length ? [...new Set([...(base ?? []), ...extra.filter((id) => this.offered.has(id))])] : base;
    if (!ids?.length) return undefined;
    const key = ids.join('\n');
    let chain = this.chains.get(key);
    if (!chain) {
      chain = new Chain(ids.map((id) => this.compiled.get(id)!), this.holdChars);
      // Bounded: the operator's chains, and the additions workspaces and keys make.
      if (this.chains.size < 1024) this.chains.set(key, chain);
    }
    return chain;
  }
}
