// Each guardrail kind declared once: the stages it can run at (the first is its default), the actions it can take, the
// member of the file that configures it, and how it compiles from its file. load.ts checks a file against this table
// (every problem at its own place) and keeps what compiled.
import { clientValue } from '../base/errors.js';
import type { GuardrailSchema, ModelRoute, RouteNode } from '../config/types.js';
import { SECRET_PREFIX } from '../base/signed-request.js';
import type { Bounds } from './bounded.js';
import { HttpGuardrail } from './http-guard.js';
import { LimitsGuardrail } from './limits.js';
import { DETECTOR_NAMES, shippedDetector, type Detector } from './detectors.js';
import { PatternGuardrail, type Action, type Guardrail, type Stage } from './guardrail.js';
import { ModerationGuardrail } from './moderation.js';
import { compilePattern } from './patterns.js';
import { compileAnswerSchema, SchemaGuardrail } from './schema-guard.js';

/** What compiling one guardrail may read of the config. */
export interface KindInputs {
  routes: Map<string, RouteNode>;
  models: Map<string, ModelRoute[]>;
  aliases: Map<string, string>;
  /** The environment the config loads with (an http guard's signing key). */
  env: NodeJS.ProcessEnv;
}

/** One guardrail being compiled: its file's value, its stages, and where its problems go (a pointer under the guardrail). */
export interface Compiling {
  spec: GuardrailSchema;
  stages: ReadonlySet<Stage>;
  inputs: KindInputs;
  add(path: string, message: string): void;
}

interface Kind {
  stages: readonly Stage[];
  actions: readonly Action[];
  /** The member of the file that configures it; the other kinds' members are refused on it. */
  member?: 'moderation' | 'http' | 'schema' | 'limits';
  /** The guardrail, or undefined after adding its problems. */
  compile(c: Compiling): Guardrail | undefined;
}

function compilePatternKind({ spec, stages, add }: Compiling): Guardrail | undefined {
  if (!spec.detectors?.length && !spec.patterns?.length) return void add('', 'a pattern guardrail names `detectors` or `patterns` (or both)');
  const detectors: Detector[] = [];
  let refused = 0;
  spec.detectors?.forEach((name, i) => {
    const detector = shippedDetector(name, spec.phoneRegion);
    if (detector) return void detectors.push(detector);
    refused++;
    add(`/detectors/${i}`, `unknown detector ${clientValue(name)} (known: ${DETECTOR_NAMES.join(', ')})`);
  });
  spec.patterns?.forEach((pattern, i) => {
    const compiled = compilePattern(typeof pattern === 'string' ? { name: 'pattern', regex: pattern, caseInsensitive: false } : { name: pattern.name ?? 'pattern', regex: pattern.regex, caseInsensitive: pattern.caseInsensitive ?? false });
    if (!('problem' in compiled)) return void detectors.push(compiled);
    refused++;
    add(typeof pattern === 'string' ? `/patterns/${i}` : `/patterns/${i}/regex`, compiled.problem);
  });
  return refused ? undefined : new PatternGuardrail(spec.id, spec.action, stages, detectors, spec.restore === true);
}

/** The routes a model name reaches: a model id, an alias, or a route. */
function routesNamed(name: string, inputs: KindInputs): readonly ModelRoute[] | undefined {
  return inputs.models.get(name) ?? inputs.models.get(inputs.aliases.get(name) ?? '') ?? inputs.routes.get(name)?.reachable;
}

const boundsOf = (spec: GuardrailSchema): Bounds => ({ id: spec.id, action: spec.action, timeoutMs: spec.timeoutMs, failMode: spec.failMode });

function compileModerationKind({ spec, stages, inputs, add }: Compiling): Guardrail | undefined {
  const moderation = spec.moderation!;
  const routes = routesNamed(moderation.model, inputs);
  if (!routes?.length) return void add('/moderation/model', `no channel serves model ${clientValue(moderation.model)}`);
  const wrong = routes.find((route) => route.model.kind !== 'moderation');
  if (wrong) return void add('/moderation/model', `model ${clientValue(moderation.model)} is a ${wrong.model.kind} model, not a moderation model`);
  return new ModerationGuardrail(spec.id, spec.action, stages, boundsOf(spec), { model: moderation.model, thresholds: moderation.thresholds ?? {}, threshold: moderation.threshold });
}

function compileHttpKind({ spec, stages, inputs, add }: Compiling): Guardrail | undefined {
  const { url, secretEnv } = spec.http!;
  const raw = secretEnv === undefined ? undefined : inputs.env[secretEnv];
  if (secretEnv !== undefined && !raw) return void add('/http/secretEnv', `variable ${secretEnv} is not set: the guard's requests would go unsigned`);
  // A whsec_ value is the Standard Webhooks form (base64); any other value is used as its bytes.
  const secret = raw === undefined ? undefined : raw.startsWith(SECRET_PREFIX) ? raw : `${SECRET_PREFIX}${Buffer.from(raw).toString('base64')}`;
  return new HttpGuardrail(spec.id, spec.action, stages, boundsOf(spec), { url, secret });
}

function compileSchemaKind({ spec, stages, add }: Compiling): Guardrail | undefined {
  const compiled = compileAnswerSchema(spec.schema!);
  if (typeof compiled === 'function') return new SchemaGuardrail(spec.id, spec.action, stages, compiled);
  for (const { pointer, message } of compiled.problems) add(`/schema${pointer}`, message);
  return undefined;
}

function compileLimitsKind({ spec, stages, add }: Compiling): Guardrail | undefined {
  const limits = spec.limits!;
  if (!Object.values(limits).some((v) => (Array.isArray(v) ? v.length : v !== undefined))) return void add('/limits', 'a limits guardrail sets at least one limit');
  return new LimitsGuardrail(spec.id, spec.action, stages, limits);
}

export const KINDS: Readonly<Record<GuardrailSchema['kind'], Kind>> = {
  pattern: { stages: ['input', 'output', 'stream'], actions: ['block', 'redact', 'flag'], compile: compilePatternKind },
  moderation: { stages: ['input', 'output'], actions: ['block', 'flag'], member: 'moderation', compile: compileModerationKind },
  http: { stages: ['input', 'output'], actions: ['block', 'redact', 'flag'], member: 'http', compile: compileHttpKind },
  schema: { stages: ['output'], actions: ['block', 'flag'], member: 'schema', compile: compileSchemaKind },
  limits: { stages: ['input'], actions: ['block', 'flag'], member: 'limits', compile: compileLimitsKind },
};

const MEMBERS = { detectors: 'pattern', patterns: 'pattern', moderation: 'moderation', http: 'http', schema: 'schema', limits: 'limits' } as const;

/** The guardrail its file declares, compiled; undefined after adding its problems (stages, actions, members, the kind's own). */
export function compileGuardrail(spec: GuardrailSchema, inputs: KindInputs, add: (path: string, message: string) => void): Guardrail | undefined {
  const kind = KINDS[spec.kind];
  let sound = true;
  const refuse = (path: string, message: string) => {
    sound = false;
    add(path, message);
  };
  const stages = new Set<Stage>(spec.stage === undefined ? [kind.stages[0]] : Array.isArray(spec.stage) ? spec.stage : [spec.stage]);
  for (const stage of stages) if (!kind.stages.includes(stage)) refuse('/stage', `a ${spec.kind} guardrail runs at ${kind.stages.join(', ')}, not ${stage}`);
  if (!kind.actions.includes(spec.action)) refuse('/action', `a ${spec.kind} guardrail's action is ${kind.actions.join(' or ')}${spec.action === 'redact' ? ': it finds no spans to redact' : ''}`);
  for (const [member, owner] of Object.entries(MEMBERS)) {
    if (owner !== spec.kind && spec[member as keyof typeof MEMBERS] !== undefined) refuse(`/${member}`, `only a ${owner} guardrail has ${member}`);
  }
  if (kind.member && spec[kind.member] === undefined) refuse('', `a ${spec.kind} guardrail names its \`${kind.member}:\``);
  if (spec.restore && (spec.kind !== 'pattern' || spec.action !== 'redact' || !stages.has('input'))) refuse('/restore', 'restore puts back what a pattern guardrail redacted from the input: it needs kind pattern, action redact and the input stage');
  if (!sound) return undefined;
  return kind.compile({ spec, stages, inputs, add });
}
