// npm run docs:config: writes docs/config.md from the JSON Schemas, so the reference never drifts from what the loader accepts.
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { schemasDir } from '../config/schemas.js';

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
  if (s.oneOf) return s.oneOf.map(typeOf).join(' or ');
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
    'Found from `--config PATH`, then `GATEWAY_CONFIG`, then `./config.yaml`, then `./config.example.yaml`. `PORT` and `HOST` override `server.port` and `server.host`.',
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

/** How each credential kind authenticates, its tokens and its failures: prose beside the channel's schema. */
const CREDENTIAL_LINES = [
  '### Credentials',
  '',
  'A channel\'s `credential` says how its requests are authenticated: one [credential](#credential), or a list of',
  'alternatives of which the first whose variables are all set is used (channels/azure-openai.yaml: an API key, else a',
  'Microsoft Entra ID client). Variables are read when the config loads; `${VAR}` in `tokenUrl` or `baseUrl` too, so',
  'list those in `requiresEnv`. A channel none of whose alternatives is complete starts disabled, and check-config',
  'names what is missing. Several credentials that all serve are a key pool (`credentials`, below). The kinds:',
  '',
  '- `static` (the default kind): a key in a header. The protocol\'s `auth` names the header and renders its value',
  '  (`Bearer {{ credential }}`); the credential\'s own `header` and `value` replace them (Azure\'s `api-key`).',
  '- `oauth2-client-credentials`: an access token from `tokenUrl`, asked for with the client id, secret and `scope`',
  '  (RFC 6749 section 4.4; Microsoft Entra ID: `{authority}/{tenant}/oauth2/v2.0/token`, scope',
  '  `https://cognitiveservices.azure.com/.default`), sent as `authorization: Bearer <token>`.',
  '- `google-service-account`: the JSON key file `keyFileEnv` names is read at load (its `client_email`, `private_key`',
  '  and `token_uri`); a JWT-bearer assertion signed RS256 (issuer the account, audience the `token_uri`, the `scope`,',
  '  valid an hour) is posted to the key file\'s `token_uri` (RFC 7523), and the token it answers is sent as a bearer.',
  '  A key file that cannot be read or is not a service-account key disables the channel, naming the file.',
  '- `aws-sigv4`: every request signed with AWS Signature Version 4 (service, region, access key, and the session',
  '  token of temporary credentials, sent in `x-amz-security-token` and signed) over the exact bytes sent: every header',
  '  sent is signed, `host` and `x-amz-date` among them. A signed channel\'s body is made into one buffer before it is',
  '  signed (a form encoded with its boundary), so an upload to one is held in memory while it is sent.',
  '',
  'Tokens are cached per credential (channels holding the same client or service account share one) and replaced before they expire (five minutes before, or at half the',
  'lifetime of a token that lives less than ten minutes), so no request leaves with an expired token and none waits on a',
  '401 to refresh; requests that need a token while one is being fetched wait for that one fetch. Token requests go to',
  'the operator\'s own endpoints (the `tokenUrl`, the key file\'s `token_uri`) and are not subject to network.allowHosts;',
  'each has 30 seconds. A token that cannot be had (the endpoint refuses the client, is unreachable or answers no token)',
  'fails the request with 502 `upstream_auth_failed` naming the channel and the endpoint\'s status and OAuth error code,',
  'on the Messages route Anthropic\'s `api_error`; a fallback group moves on to its next channel. A failed fetch is',
  'remembered for 10 seconds: meanwhile a token still held (a refresh that failed before its expiry) keeps serving, and',
  'without one each request gets the same 502 at once instead of asking the token endpoint again. Nothing else the',
  'token endpoint says is repeated. Secrets (keys, client secrets, secret access keys, session tokens, and the tokens',
  'held) are scrubbed from any upstream text a client sees, and never logged. A reload starts with empty token caches.',
  '',
  '#### Key pools',
  '',
  'A channel\'s `credentials` (plural, instead of `credential`) is a pool: every entry whose variables are set serves, and',
  'requests are spread by `weight` (default 1; smooth weighted round robin per process, so with weights 2 and 1 two of',
  'every three requests go to the first, interleaved). An entry is a [credential](#credential) of any kind, plus its',
  '`weight` and, optionally, its own `baseUrl`:',
  '',
  '```yaml',
  'credentials:',
  '  - { env: OPENAI_API_KEY_A, weight: 2 }',
  '  - { env: OPENAI_API_KEY_B }',
  'credentialCooldown: { seconds: 60, revokedSeconds: 600 }   # the defaults',
  '```',
  '',
  'A 429 or a 401 from the upstream means it did not run the request, so the request goes on to the pool\'s next entry',
  '(its body unchanged) and the refused entry rests: after a 429 for the upstream\'s `retry-after` (seconds or a date,',
  'at most `revokedSeconds`), else `credentialCooldown.seconds`; after a 401, as revoked, for `revokedSeconds`, logged',
  'once as a warning naming the channel and the entry\'s variable (never its value), and once as it serves again. A',
  'rested entry is tried again by the next request. An entry whose access token cannot be had (its token endpoint',
  'refuses or is unreachable) rests as after a 429 without `retry-after`, and the next entry serves. The client sees an',
  'error only when no entry can serve: with every',
  'entry resting after a 429 the request goes to the one back soonest and the client gets that upstream\'s own answer',
  '(its 429 and `retry-after`); with every entry revoked, 503 `channel_unavailable` with `retry-after` until one is',
  'tried again. A fallback group moves on to its next channel on either. The circuit breaker and the retry budget see',
  'one call: a key refused and another that then served is not the channel failing, and a channel with `retries`',
  'answers a 429 with its next key rather than the same key again. A request whose body is a stream that cannot be sent',
  'twice (an upload relayed as it arrives) is not moved: it gets the refusal.',
  '',
  'An entry whose variables are not set is left out; the channel serves while one entry does. The startup log says',
  '"serves with 2 of 3 keys; not set: OPENAI_API_KEY_C", and `/readyz` shows the pool under its channel as',
  '`keys: { OPENAI_API_KEY_A: serving, OPENAI_API_KEY_B: cooling }` (`revoked` for a 401) and `missing`. An entry is',
  'named by its variable (`env`, `clientIdEnv`, `keyFileEnv` or `accessKeyIdEnv`; `#<index>` added when two entries',
  'share one) in logs and `/metrics`: `gateway_upstream_key_requests_total{channel,key,status}`,',
  '`gateway_upstream_key_rests_total{channel,key,reason}` (`cooling` or `revoked`) and',
  '`gateway_upstream_key_resting{channel,key}` (0 serving, 0.5 cooling, 1 revoked). Rests and the rotation are per',
  'process: each worker and replica finds a rate-limited key for itself, once.',
  '',
  'An Azure OpenAI resource per region is a pool whose entries carry their resource\'s `baseUrl` (the channel\'s own',
  'serves entries without one); name the deployments alike in every region, since a model\'s `upstream` is the',
  'channel\'s. Entries should be keys of one account or project wherever the channel keeps objects upstream (files,',
  'tasks, response ids): a later request may be served by another entry.',
  '',
  '```yaml',
  'baseUrl: https://contoso-eastus.openai.azure.com/openai/v1',
  'credentials:',
  '  - { env: AZURE_OPENAI_API_KEY_EASTUS, header: api-key, value: "{{ credential }}", weight: 2 }',
  '  - env: AZURE_OPENAI_API_KEY_SWEDEN',
  '    header: api-key',
  '    value: "{{ credential }}"',
  '    baseUrl: https://contoso-sweden.openai.azure.com/openai/v1',
  '```',
  '',
];

/** How a request is charged and how spending caps reserve and settle: prose, no schema. */
const BILLING_LINES = [
  '## Billing',
  '',
  'A request is charged the usage its upstream reports, priced by the model that served it; the answer\'s `cost` is that',
  'charge, and the ledger row records it with the price that produced it. Each token class has its price, falling back',
  'to the base price when unset: input (`inputPerMillion`: input not in another class), cache reads',
  '(`cachedInputPerMillion`), cache writes (`cacheWritePerMillion`; the 1-hour writes `cacheWrite1hPerMillion`, read',
  'from Anthropic\'s `usage.cache_creation` split), audio input (`audioInputPerMillion`), output (`outputPerMillion`),',
  'audio output (`audioOutputPerMillion`), plus `perRequest`. Which usage fields carry each class is the protocol\'s',
  '`usage.tokens` mapping.',
  '',
  'Spending caps hold a reservation of the worst case before the upstream call and settle the reported cost after it.',
  'The worst case: input = the bytes of the whole body / 3, at most the model\'s `limits.contextTokens`, or the whole',
  '`contextTokens` when the request references input the gateway cannot measure (`previous_response_id`, a conversation,',
  'a stored prompt, remote images or files, server-side tools); output = the client\'s bound, else',
  '`limits.maxOutputTokens`, per choice; each token at the dearest input or output class. A model without `limits` is',
  'estimated with `billing.defaultLimits`. Limits are never sent upstream: a pass-through request reaches the upstream',
  'as the client sent it, with only the model id mapped.',
  '',
  'Reported usage that costs more than the reservation is charged in full; the difference is recorded as overage',
  '(ledger `overage_micros`, metric `gateway_overage_micros_total`, a warning), so a cap can be overshot by that one',
  'request and the next is refused 402. Usage the model\'s `limits` make impossible (more than contextTokens +',
  'maxOutputTokens per choice; not checked when the upstream runs tools of its own, which sums several model calls),',
  'negative or non-numeric counts are `upstream_malformed` (502), charged the reservation and logged, never booked as',
  'overage; so is an answer without final usage. A model without `limits` is bounded by `billing.defaultLimits`, widened to',
  'its request\'s bytes and output bound. A task\'s answer comes later, so a task whose result reports impossible units (output',
  'tokens past `limits.maxOutputTokens`, seconds past the model\'s `media.maxSeconds`, more than one image) completes with its',
  'result, charged its reservation, the impossible usage logged as a warning. An answer that ends early (incomplete,',
  'length, content filter) with final usage is charged that usage.',
  '',
];

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
    'How operations are called and billed is described in [protocols.md](protocols.md); translations between dialects',
    '(`translations:`) in [translation.md](translation.md).',
    '',
  ];
}

/** The MCP server file (mcp/*.yaml); how the gateway serves them is docs/mcp.md. */
function mcpLines(): string[] {
  return ['## MCP servers (`mcp/*.yaml`)', '', sections(load('mcp.schema.json'), 'mcp-server'), '', 'How keys are granted tools, and what a call costs and leaves behind: [mcp.md](mcp.md).', ''];
}

export function renderConfigDocs(): string {
  return [...configFileLines(), ...channelLines(), ...CREDENTIAL_LINES, ...BILLING_LINES, ...protocolLines(), ...mcpLines()].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = join(schemasDir, '..', 'docs', 'config.md');
  writeFileSync(target, renderConfigDocs());
  console.log(`wrote ${target}`);
}
