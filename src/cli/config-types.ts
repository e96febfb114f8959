// npm run gen:types: writes src/config/generated/config-types.ts from the config JSON Schemas, so a schema change is a type change.
// The types describe a config as the loader hands it on: validated, with every schema default filled in (Ajv's useDefaults),
// so a property that has a default is present. A test fails when the committed file is stale.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import { schemasDir } from '../config/schemas.js';

type Schema = Record<string, unknown> & {
  $id?: string;
  $ref?: string;
  title?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  $defs?: Record<string, Schema>;
};

/** Type names of the schemas that are types of their own (their `$id` to a name). Config sections are named `<Section>Config`. */
const named: Record<string, string> = {
  channel: 'ChannelSchema',
  model: 'ModelConfig',
  price: 'PriceConfig',
  'model-evaluation': 'ModelEvaluationConfig',
  'model-limits': 'ModelLimits',
  'model-media': 'ModelMediaConfig',
  protocol: 'ProtocolSchema',
  'operation-usage': 'UsageSpec',
  'protocol-evaluate': 'EvaluateSpec',
  'protocol-tasks': 'ProtocolTasks',
  'protocol-batches': 'BatchApiSpec',
  translation: 'TranslationSchema',
  catalogue: 'Catalogue',
  mcp: 'McpServerSchema',
  route: 'RouteFile',
  guardrail: 'GuardrailFile',
};
/** Named `$defs` inside a schema, by `<$id>/<def>`. */
const namedDefs: Record<string, string> = { 'protocol/answerMedia': 'AnswerMedia', 'protocol/eventMedia': 'EventMedia', 'protocol-tasks/task': 'TaskSpec' };

const pascal = (id: string) => id.replace(/(^|[-_/])([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

/** A reference within the bundle: `#/$defs/x` in schema `id`, `other` (a whole schema) or `other#/$defs/x` (one of its defs). */
function localRef(ref: string, id: string): string {
  const [target, fragment] = ref.split('#');
  if (fragment === undefined) return `#/$defs/${target}`;
  return `#/$defs/${target || id}/$defs/${fragment.slice('/$defs/'.length)}`;
}

/** A copy of `node` for the generator: refs point into the one combined document, defaults make a property required. */
function prepare(node: unknown, id: string): unknown {
  if (Array.isArray(node)) return node.map((item) => prepare(item, id));
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) {
    // Custom keywords of this project's Ajv: `liquid` marks a template string; `mapping` a structural mapping (any value).
    if (key === 'liquid' || key === 'mapping' || key === '$id') continue;
    out[key] = key === 'properties' || key === '$defs' ? Object.fromEntries(Object.entries(value as Record<string, Schema>).map(([k, v]) => [k, prepare(v, id)])) : prepare(value, id);
  }
  // A reference is its target's type (a description beside it would make the generator declare a copy).
  if (typeof out.$ref === 'string') return { $ref: localRef(out.$ref, id) };
  if (out.properties) {
    const withDefaults = Object.entries(out.properties).filter(([, p]) => p.default !== undefined).map(([k]) => k);
    if (withDefaults.length) out.required = [...new Set([...(out.required ?? []), ...withDefaults])];
  }
  if ('mapping' in (node as Schema) && !('type' in (node as Schema))) out.tsType = 'unknown';
  return out;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'requests' ? [] : walk(join(dir, e.name))) : e.name.endsWith('.json') ? [join(dir, e.name)] : []));
}

/** The generated module's text. */
export async function renderConfigTypes(): Promise<string> {
  const defs: Record<string, Schema> = {};
  const sections: Record<string, Schema> = {};
  for (const file of walk(schemasDir).sort()) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as Schema;
    const id = schema.$id!;
    const prepared = prepare(schema, id) as Schema;
    for (const [name, def] of Object.entries(prepared.$defs ?? {})) def.title = namedDefs[`${id}/${name}`] ?? pascal(`${id}-${name}`);
    prepared.title = id.startsWith('config/') ? `${pascal(id.slice('config/'.length))}Config` : (named[id] ?? pascal(id));
    defs[id] = prepared;
    if (id.startsWith('config/')) sections[id.slice('config/'.length)] = { $ref: `#/$defs/${id}` };
  }
  const root = {
    title: 'GatewayConfigSchema',
    description: 'The config file: one section per schemas/config/*.json.',
    type: 'object',
    additionalProperties: false,
    required: Object.keys(sections),
    properties: sections,
    $defs: defs,
  };
  const banner = '// Generated from schemas/ by `npm run gen:types` (src/cli/config-types.ts); do not edit. A test fails when it is stale.';
  const text = await compile(root as unknown as JSONSchema, 'GatewayConfigSchema', {
    bannerComment: banner,
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    strictIndexSignatures: false,
    ignoreMinAndMaxItems: true,
    format: true,
    style: { singleQuote: true, printWidth: 160 },
  });
  return text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = join(import.meta.dirname, '..', 'config', 'generated', 'config-types.ts');
  writeFileSync(target, await renderConfigTypes());
  console.log(`wrote ${target}`);
}
