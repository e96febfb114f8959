// npm run docs:config: writes docs/config.md from the JSON Schemas, so the reference never drifts from what the loader accepts.
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { schemasDir } from '../config/schemas.js';
import { BILLING_LINES, CREDENTIAL_LINES } from './config-docs-prose.js';

interface Schema {
  $id?: string;
  $ref?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  additionalProperties?: boolean | Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  if?: Schema;
  then?: Schema;
  else?: Schema;
  minimum?: number;
  maximum?: number;
  liquid?: boolean;
  mapping?: string[];
  /** A Liquid path from this variable (src/config/paths.ts). */
  path?: string;
  $defs?: Record<string, Schema>;
}

/** The anchor GitHub gives a heading of this plain text. */
const anchor = (heading: string) => heading.toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-');

function typeOf(s: Schema): string {
  if (s.$ref) {
    // A schema of its own (`operation-usage`), or a definition inside this one (`#/$defs/answerMedia`): each has its section.
    const name = s.$ref.includes('#/$defs/') ? s.$ref.slice(s.$ref.indexOf('#/$defs/') + '#/$defs/'.length) : s.$ref;
    return `see [${name}](#${anchor(name)})`;
  }
  // One thing or a list of them (a channel's `credential`): if it is an array, its items; else the one (or, for an MCP
  // server's, one of two shapes).
  if (s.if && s.then?.items && s.else) {
    const [one, other] = [typeOf(s.then.items), typeOf(s.else)];
    return one === other ? `${one}, or an array of them` : `${other}, or an array of ${one.replace(/^see /, '')}`;
  }
  if (s.if && s.then && s.else) return `${typeOf(s.then)} or ${typeOf(s.else)}`;
  if (s.enum) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (s.oneOf || s.anyOf) return (s.oneOf ?? s.anyOf)!.map(typeOf).join(' or ');
  if (s.type === 'array') return `array of ${s.items ? typeOf(s.items) : 'any'}`;
  if (s.type === 'object' && typeof s.additionalProperties === 'object' && !s.properties) return `map of ${typeOf(s.additionalProperties)}`;
  const base = Array.isArray(s.type) ? s.type.join(' \\| ') : (s.type ?? 'any');
  if (s.mapping) return 'mapping (docs/translation.md)';
  if (s.path) return `Liquid path from \`${s.path}\``;
  return s.liquid ? `${base} (Liquid)` : base;
}

function rows(schema: Schema, prefix: string, out: string[]): void {
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    const required = schema.required?.includes(name) ? 'yes' : '';
    const def = prop.default !== undefined && !(typeof prop.default === 'object' && Object.keys(prop.default as object).length === 0) ? `\`${JSON.stringify(prop.default)}\`` : '';
    const range = prop.minimum !== undefined || prop.maximum !== undefined ? ` (${prop.minimum ?? ''}..${prop.maximum ?? ''})` : '';
    out.push(`| \`${path}\` | ${typeOf(prop)}${range} | ${required} | ${def} | ${(prop.description ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
    if (prop.properties) rows(prop, `${path}.`, out);
    if (prop.type === 'array' && prop.items?.properties) rows(prop.items, `${path}[].`, out);
    if (typeof prop.additionalProperties === 'object' && prop.additionalProperties.properties) rows(prop.additionalProperties, `${path}.<name>.`, out);
  }
}

function section(schema: Schema, heading: string): string {
  const head = [`### ${heading}`, '', schema.description ?? '', ''];
  // One of several shapes (a price unit's count): each shape and what it means, not a table of fields.
  if (schema.oneOf && !schema.properties) return [...head, ...schema.oneOf.map((shape) => `- ${shape.properties ? `\`{${Object.keys(shape.properties).join(', ')}}\`` : typeOf(shape)}: ${Object.values(shape.properties ?? {})[0]?.description ?? shape.description ?? ''}`)].join('\n');
  const out = [...head, '| field | type | required | default | notes |', '|---|---|---|---|---|'];
  rows(schema, '', out);
  // A map with no fixed fields (protocol-tasks: task name to task) shows what each entry is.
  if (!schema.properties && typeof schema.additionalProperties === 'object') out.push(`| \`<name>\` | ${typeOf(schema.additionalProperties)} |  |  |  |`);
  else if (!schema.properties && schema.additionalProperties !== false) out.push('| `<name>` | any |  |  | Free-form: fields are not checked here. |');
  return out.join('\n');
}

/** A schema's section, then one for each of its definitions (`$defs`), which its fields link to. */
function sections(schema: Schema, heading: string): string {
  return [section(schema, heading), ...Object.entries(schema.$defs ?? {}).map(([name, def]) => section(def, name))].join('\n\n');
}

/** Reads one JSON Schema from schemas/, by its path there. */
const load = (file: string) => JSON.parse(readFileSync(join(schemasDir, file), 'utf8')) as Schema;

/** The title, the introduction and one section per file in schemas/config/ (the config file). */
function configFileLines(): string[] {
  const configFiles = readdirSync(join(schemasDir, 'config')).filter((f) => f.endsWith('.json')).sort();
  return [
    '# Config reference',
    '',
    'Generated from `schemas/` by `npm run docs:config`; a test fails when this file is stale. Every field is checked at load',
    '(`npm run check-config`), unknown fields are errors (naming the nearest known field: `unknown field "baseURL" (did you',
    'mean "baseUrl"?)`), and errors print as `file:line:col /json/pointer message`.',
    '`${VAR}` and `${VAR:-default}` in any value are read from the environment. A `${VAR}` with no default whose variable is',
    'not set is an error naming the variable where the emptied field fails its schema (`baseUrl`, a model\'s `upstream`),',
    'and a warning where the field may be empty; a variable a channel lists in `requiresEnv` (its own or its credential\'s)',
    'instead starts that channel disabled, as a missing key does.',
    '',
    '### Reload, and a secret added without a restart',
    '',
    'SIGHUP, `npm run admin -- reload` or `POST /admin/v1/reload` loads every file again with the running gateway\'s own',
    'environment (the admin CLI only signals it and prints what the gateway answered) and swaps it in: channels,',
    'protocols, the operator\'s request schemas and most settings apply at once. The catalogue\'s routes are registered',
    'at start, so a reload that adds, removes or changes a catalogue entry is refused, naming the entry, and the running',
    'config keeps serving; restart to apply it. The answer (and the log) lists what changed, or says nothing did, and',
    'every channel still disabled with the variable it waits for.',
    '',
    'A process\'s environment cannot change after it starts, so a secret added later goes in the overlay folder\'s',
    '`gateway.env` (`overlay.dir`, or `GATEWAY_OVERLAY_DIR`; `KEY=value` lines, as Docker\'s `env_file`), read again at every',
    'load; its values take the place of the process\'s. Add the key there and reload: the channel that waited for it',
    'starts serving. A file of variables rather than a folder of secret files, because channels already name their',
    'secrets by variable (`credential: { env: NAME }`): the file adds variables and needs no new credential kind. Keep it',
    'readable by the gateway\'s user only; its values are never logged.',
    '',
    '## The config file (`config.yaml`)',
    '',
    'Found from `--config PATH`, then `GATEWAY_CONFIG`, then `./config.yaml`, then `./config.example.yaml`. `PORT` and `HOST` override `server.port` and `server.host`. A started process gives back the memory its start alone needed in a few full garbage collections once it listens (the first a second after, the next 5.5 s later: about 100 MiB of resident memory a worker, for about half a second of CPU; the primary of several workers settles too), and settles again after 30 s without requests following a busy spell; `GATEWAY_SETTLE_HEAP=off` skips them (the test suites set it: they start gateway after gateway and stop each within seconds). `MALLOC_ARENA_MAX` (glibc) is 2 unless set: `npm start` and the image set it, and the primary of several workers gives it to them (a worker keeps about 10 MiB less after a busy spell). glibc\'s malloc keeps what a busy spell freed (a worker idle after a held-rate run stayed at 129-139 MiB): each settling collection is followed by glibc\'s `malloc_trim(0)`, which gives those pages back (91 MiB, measured), called through koffi (a C FFI with prebuilt binaries, loaded by the first settling; without glibc nothing is trimmed). The container image also preloads jemalloc (`LD_PRELOAD`, Debian\'s `libjemalloc2`: 104-106 MiB after the same run, at the same CPU a request); on a machine of your own, `LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 npm start` does the same. `npm start` and the image also put `--max-semi-space-size=32` in `NODE_OPTIONS` (`npm start` before any of yours, so a later value of yours wins; in the image a `NODE_OPTIONS` of yours replaces it): under load V8\'s young generation may grow to 32 MiB a semi-space instead of 16, so it is collected half as often, each collection copying about the same (the requests in flight): 4.2 -> 2.3 µs of collections a request at c=32 on one worker, for up to about 32 MiB more resident while busy (it shrinks again when the process settles). 64 halves them again but holds about 100 MiB more while busy.',
    '',
    ...configFiles.map((f) => section(load(`config/${f}`), `\`${f.replace(/\.json$/, '')}\``) + '\n'),
  ];
}

/** The sections of a channel file: the channel, its models and what each model carries. */
function channelLines(): string[] {
  return [
    '## Channels (`channels/*.yaml`)',
    '',
    sections(load('channel.schema.json'), 'channel'),
    '',
    section(load('model.schema.json'), 'model'),
    '',
    sections(load('price.schema.json'), 'price'),
    '',
    section(load('model-limits.schema.json'), 'model-limits'),
    '',
    section(load('model-evaluation.schema.json'), 'model-evaluation'),
    '',
    section(load('model-media.schema.json'), 'model-media'),
    '',
  ];
}

/** The sections of a protocol file: the protocol, its operations' usage, translations, evaluation and tasks. */
function protocolLines(): string[] {
  return [
    '## Protocols (`channels/protocols/*.yaml`)',
    '',
    sections(load('protocol.schema.json'), 'protocol'),
    '',
    section(load('operation-usage.schema.json'), 'operation-usage'),
    '',
    section(load('translation.schema.json'), 'translation'),
    '',
    section(load('protocol-evaluate.schema.json'), 'protocol-evaluate'),
    '',
    sections(load('protocol-tasks.schema.json'), 'protocol-tasks'),
    '',
    sections(load('protocol-batches.schema.json'), 'protocol-batches'),
    '',
    'How operations are called and billed is described in [protocols.md](protocols.md); translations between dialects',
    '(`translations:`) in [translation.md](translation.md).',
    '',
  ];
}

/** The MCP server file (mcp/*.yaml); how the gateway serves them is docs/mcp.md. */
function mcpLines(): string[] {
  return ['## MCP servers (`mcp/*.yaml`)', '', sections(load('mcp.schema.json'), 'mcp-server'), '', 'How keys are granted tools, and what a call costs and leaves behind: [mcp.md](mcp.md).', ''];
}

/** The guardrail file (guardrails/*.yaml): one guardrail or a list; what each kind does is docs/guardrails.md. */
function guardrailLines(): string[] {
  const file = load('guardrail.schema.json');
  const { guardrail, pattern } = file.$defs!;
  return ['## Guardrails (`guardrails/*.yaml`)', '', file.description ?? '', '', section(guardrail, 'guardrail'), '', section(pattern, 'pattern'), '', 'What each kind checks, where and at what cost: [guardrails.md](guardrails.md).', ''];
}

/** The route file (routes/*.yaml): one route or a list; how routes pick and fail over is docs/routing.md. */
function routeLines(): string[] {
  const file = load('route.schema.json');
  const { route, routeCache } = file.$defs!;
  return ['## Routes (`routes/*.yaml`)', '', file.description ?? '', '', section(route, 'route'), '', section(routeCache, 'routeCache'), '', 'Strategies, failover and cooldowns: [routing.md](routing.md); the cache: [caching.md](caching.md).', ''];
}

export function renderConfigDocs(): string {
  return [...configFileLines(), ...channelLines(), ...CREDENTIAL_LINES, ...BILLING_LINES, ...protocolLines(), ...routeLines(), ...mcpLines(), ...guardrailLines()].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = join(schemasDir, '..', 'docs', 'config.md');
  writeFileSync(target, renderConfigDocs());
  console.log(`wrote ${target}`);
}
