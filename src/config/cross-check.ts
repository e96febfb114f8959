// What a protocol's schema cannot say on its own: every operation its tasks, translations and evaluate section name is
// declared, each task can end (its statusMap reaches completed and failed) and says where its result is.
import type { ProtocolSchema, TaskSpec } from './types.js';

/** A problem at a JSON pointer into the file; `key` places it at that member's key instead of its value. */
export type Report = (pointer: string, message: string, key?: string) => void;

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function checkOperation(protocol: ProtocolSchema, pointer: string, name: string, report: Report, who: string): void {
  if (Object.hasOwn(protocol.operations, name)) return;
  report(pointer, `${who} names operation "${name}", which protocol "${protocol.id}" does not declare (it has: ${Object.keys(protocol.operations).join(', ') || 'none'})`);
}

function checkTask(protocol: ProtocolSchema, name: string, task: TaskSpec, report: Report): void {
  const at = `/tasks/${escape(name)}`;
  const who = `task "${name}"`;
  checkOperation(protocol, `${at}/submit/operation`, task.submit.operation, report, who);
  checkOperation(protocol, `${at}/poll/operation`, task.poll.operation, report, who);
  if (task.result.download) checkOperation(protocol, `${at}/result/download/operation`, task.result.download.operation, report, who);
  const reached = new Set(Object.values(task.poll.statusMap));
  const missing = (['completed', 'failed'] as const).filter((status) => !reached.has(status));
  if (missing.length) {
    report(`${at}/poll/statusMap`, `${who} never ends ${missing.join(' or ')}: its statusMap must map an upstream status word to each of completed and failed`);
  }
  if (!task.result.download && task.result.url === undefined && task.result.base64 === undefined) {
    report(`${at}/result`, `${who} declares no result source: set one of download, url or base64`);
  }
}

/** Reports every cross-reference of `protocol` that does not hold. */
export function crossCheckProtocol(protocol: ProtocolSchema, report: Report): void {
  for (const [client, translation] of Object.entries(protocol.translations ?? {})) {
    checkOperation(protocol, `/translations/${escape(client)}/operation`, translation.operation, report, `translation "${client}"`);
  }
  if (protocol.evaluate) checkOperation(protocol, '/evaluate/operation', protocol.evaluate.operation, report, 'the evaluate section');
  for (const [name, task] of Object.entries(protocol.tasks ?? {})) checkTask(protocol, name, task, report);
}
