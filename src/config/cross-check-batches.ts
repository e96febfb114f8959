// Batch API cross-checks (schemas/protocol-batches.schema.json): every operation the section names is declared, the
// download of results answers bytes, the upload sends a form, and some vendor status word ends a batch.
import type { BatchApiSpec, ProtocolSchema } from './types.js';
import { checkOperation, type Report } from './cross-check-tasks.js';

/** Every operation a batch API section calls, each with the pointer that names it. */
export function batchOperations(spec: BatchApiSpec): { pointer: string; name: string }[] {
  const named = [
    ...spec.operations.map((name, i) => ({ pointer: `/batches/operations/${i}`, name })),
    { pointer: '/batches/create/operation', name: spec.create.operation },
    { pointer: '/batches/poll/operation', name: spec.poll.operation },
    ...spec.results.map((result, i) => ({ pointer: `/batches/results/${i}/operation`, name: result.operation })),
  ];
  if (spec.upload) named.push({ pointer: '/batches/upload/operation', name: spec.upload.operation });
  if (spec.cancel) named.push({ pointer: '/batches/cancel/operation', name: spec.cancel.operation });
  return named;
}

export function checkBatchApi(protocol: ProtocolSchema, spec: BatchApiSpec, report: Report): void {
  for (const { pointer, name } of batchOperations(spec)) checkOperation(protocol, pointer, name, report, 'the batches section');
  // Declared like the others, but not among the steps a channel must serve to relay: a delete is best-effort.
  spec.cleanup?.forEach((step, i) => checkOperation(protocol, `/batches/cleanup/${i}/operation`, step.operation, report, 'the batches section'));
  spec.results.forEach((result, i) => {
    const operation = protocol.operations[result.operation];
    if (operation && operation.response !== 'binary') report(`/batches/results/${i}/operation`, `the batches section reads results from operation "${result.operation}", which must answer bytes: set its response to binary`);
  });
  const upload = spec.upload && protocol.operations[spec.upload.operation];
  if (upload && upload.encoding !== 'multipart') report('/batches/upload/operation', `the batches section uploads with operation "${spec.upload!.operation}", which must send a form: set its encoding to multipart`);
  // A vendor batch may never fail as a whole (Anthropic's ends, its requests errored one by one); it must be able to end.
  if (!Object.values(spec.poll.statusMap).includes('completed')) report('/batches/poll/statusMap', 'a vendor batch would never end: the statusMap must map a vendor status word to completed');
}
