// Task cross-checks (schemas/protocol-tasks.schema.json): every operation a task names or may choose is declared, each task
// can end and says where its result is, a step's own headers never carry credentials, and polling hosts come with a URL.
import type { Problems } from './problems.js';
import type { EndpointConfig, ProtocolSchema, TaskSpec } from './types.js';
import type { YamlSource } from './yaml-source.js';

/** A problem at a JSON pointer into the file; `key` places it at that member's key instead of its value. */
export type Report = (pointer: string, message: string, key?: string) => void;

export const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Headers a step may not set: credentials, and what the gateway sets for each request. */
const gatewayHeaders = new Set(['authorization', 'x-api-key', 'proxy-authorization', 'cookie', 'host', 'content-type', 'content-length', 'transfer-encoding', 'connection']);

export function checkOperation(protocol: ProtocolSchema, pointer: string, name: string, report: Report, who: string): void {
  if (Object.hasOwn(protocol.operations, name)) return;
  report(pointer, `${who} names operation "${name}", which protocol "${protocol.id}" does not declare (it has: ${Object.keys(protocol.operations).join(', ') || 'none'})`);
}

/** The literal results a `choose` mapping may yield (strings outside `{{ }}`), each with its pointer: `$if`/`$case` branches and plain leaves. */
export function literalChoices(node: unknown, pointer: string, out: { pointer: string; name: string }[] = []): { pointer: string; name: string }[] {
  if (typeof node === 'string') {
    if (!node.includes('{{') && !node.includes('{%')) out.push({ pointer, name: node });
    return out;
  }
  if (!node || typeof node !== 'object' || Array.isArray(node)) return out;
  const obj = node as Record<string, unknown>;
  if ('$if' in obj) for (const key of ['then', 'else']) if (key in obj) literalChoices(obj[key], `${pointer}/${key}`, out);
  if ('$case' in obj) {
    for (const [key, value] of Object.entries((obj.when ?? {}) as Record<string, unknown>)) literalChoices(value, `${pointer}/when/${escapePointer(key)}`, out);
    if ('else' in obj) literalChoices(obj.else, `${pointer}/else`, out);
  }
  if ('$let' in obj && 'in' in obj) literalChoices(obj.in, `${pointer}/in`, out);
  return out;
}

/** Every operation a task may call: its named ones and the literal choices. */
export function taskOperations(task: TaskSpec): string[] {
  const names = [task.submit.operation, task.poll.operation];
  if (task.result.download?.operation) names.push(task.result.download.operation);
  if (task.result.step) names.push(task.result.step.operation);
  for (const node of [task.submit.choose, task.poll.choose]) names.push(...literalChoices(node, '').map((c) => c.name));
  return names;
}

function checkHeaders(protocol: ProtocolSchema, pointer: string, headers: Record<string, string> | undefined, report: Report): void {
  for (const name of Object.keys(headers ?? {})) {
    const lower = name.toLowerCase();
    if (gatewayHeaders.has(lower) || lower === protocol.auth?.header.toLowerCase()) report(`${pointer}/${escapePointer(name)}`, `header "${name}" cannot be set by a task step: it carries credentials or is set by the gateway`, name);
  }
}

export function checkTask(protocol: ProtocolSchema, name: string, task: TaskSpec, report: Report): void {
  const at = `/tasks/${escapePointer(name)}`;
  const who = `task "${name}"`;
  checkOperation(protocol, `${at}/submit/operation`, task.submit.operation, report, who);
  checkOperation(protocol, `${at}/poll/operation`, task.poll.operation, report, who);
  for (const step of ['submit', 'poll'] as const) {
    for (const choice of literalChoices(task[step].choose, `${at}/${step}/choose`)) checkOperation(protocol, choice.pointer, choice.name, report, who);
  }
  const { download, step } = task.result;
  if (download?.operation) checkOperation(protocol, `${at}/result/download/operation`, download.operation, report, who);
  if (download && (download.operation === undefined) === (download.url === undefined)) report(`${at}/result/download`, `${who}: a download names exactly one of operation or url`);
  if (step) checkOperation(protocol, `${at}/result/step/operation`, step.operation, report, who);
  checkHeaders(protocol, `${at}/submit/headers`, task.submit.headers, report);
  checkHeaders(protocol, `${at}/poll/headers`, task.poll.headers, report);
  checkHeaders(protocol, `${at}/result/step/headers`, step?.headers, report);
  if (task.poll.hosts && task.poll.url === undefined) report(`${at}/poll/hosts`, `${who}: poll hosts only apply to a poll url; set poll.url or remove hosts`);
  const reached = new Set(Object.values(task.poll.statusMap));
  const missing = (['completed', 'failed'] as const).filter((status) => !reached.has(status));
  if (missing.length) {
    report(`${at}/poll/statusMap`, `${who} never ends ${missing.join(' or ')}: its statusMap must map an upstream status word to each of completed and failed`);
  }
  if (!download && task.result.url === undefined && task.result.base64 === undefined) {
    report(`${at}/result`, `${who} declares no result source: set one of download, url or base64`);
  }
}

/** The task flow's catalogue entries by model kind: the entry served at its own path, and the one served at declared routes. */
function taskEntries(endpoints: readonly EndpointConfig[]): { own: Set<string>; declared: Set<string> } {
  const own = new Set<string>();
  const declared = new Set<string>();
  for (const entry of endpoints) {
    if (entry.pipeline?.flow !== 'task' || !entry.modelKind || !entry.pipeline.task) continue;
    (entry.pipeline.task.routes === 'declared' ? declared : own).add(entry.modelKind);
  }
  return { own, declared };
}

/**
 * Every protocol task is run by a catalogue entry of flow `task` for its kind: one served at the entry's own path for a
 * task that declares no `route`, one that says `routes: declared` for a task that does. Else no request could reach it.
 */
export function checkTaskKinds(protocols: readonly { value?: ProtocolSchema; source: YamlSource }[], endpoints: readonly EndpointConfig[], problems: Problems): void {
  const { own, declared } = taskEntries(endpoints);
  for (const { value, source } of protocols) {
    for (const [name, task] of Object.entries(value?.tasks ?? {})) {
      const served = task.route ? declared : own;
      if (served.has(task.kind)) continue;
      const want = task.route ? `says "routes: declared" (to serve ${task.route})` : 'is served at its own path';
      problems.add(source, `/tasks/${escapePointer(name)}/kind`, `task "${name}" is of kind "${task.kind}", but no catalogue entry of flow "task" for that kind ${want}: add one (docs/endpoints.md, "A task family")`);
    }
  }
}
