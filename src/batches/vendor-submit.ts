// Sending a relayed batch to its vendor: every pending line mapped for the channel (a line refused on its own goes to the
// error file), the lines uploaded as one JSONL file where the protocol declares an upload, then the vendor batch created,
// once. An error answer to either call means the vendor made no batch: the gateway runs the lines itself.
import { GatewayError } from '../base/errors.js';
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import { readJsonObject } from '../pipeline/decode.js';
import { writeLineError, type LineRunner } from './line-run.js';
import { batchEndpoint } from './plan.js';
import { linesPage, setPendingLineBody, type BatchRow } from './store.js';
import { callVendor } from './vendor-calls.js';
import { mapLine } from './vendor-lines.js';
import { cleanUpVendor } from './vendor-cleanup.js';
import type { CompiledBatchApi } from './vendor-spec.js';

/** How a submission ended: the vendor batch made, the lines left to the gateway (and why), or the batch failed. */
export type Submitted = { created: string } | { run: string } | { failed: { code: string; message: string } };

/** The vendor's id for a line: the gateway's own, valid under every vendor's custom_id rule. */
export const vendorLineId = (line: number) => `line-${line}`;

/** The lines as the vendor takes them: JSONL text to upload, or the mapped objects that travel inline. */
interface VendorLines {
  jsonl: string[];
  items: unknown[];
  operation: string | undefined;
}

/** The channel's base path and an operation's path: the `url` a vendor's batch line names (`/v1/chat/completions`). */
function urlOf(snapshot: Snapshot, route: ModelRoute, operation: string): string {
  const base = new URL(route.channel.baseUrl).pathname.replace(/\/{2,}/g, '/').replace(/\/$/, '');
  return `${base}${snapshot.upstreams.pathFor(route, operation).path}`;
}

async function vendorLines(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi): Promise<VendorLines | { run: string }> {
  const endpoint = batchEndpoint(snapshot.config, row.endpoint, 'endpoint');
  const out: VendorLines = { jsonl: [], items: [], operation: undefined };
  for (let from = 0; ; ) {
    const page = await linesPage(runner.services.db, row.id, from, 500);
    for (const line of page) {
      if (line.status !== 'pending') continue;
      const mapping = await mapLine(runner, row, line, snapshot, endpoint, route.channel.id);
      if ('notRelayable' in mapping) return { run: mapping.notRelayable };
      if ('refused' in mapping) {
        await writeLineError(runner, row, line, mapping.refused, { endpointName: endpoint.name, started: Date.now() });
        continue;
      }
      const { operation, body, checkedBody } = mapping.mapped;
      if (checkedBody !== undefined) await setPendingLineBody(runner.services.db, row.id, line.line, checkedBody);
      if (!api.spec.operations.includes(operation) || (out.operation !== undefined && out.operation !== operation)) return { run: `its lines call operation "${operation}", which the channel's batch API does not take with the others` };
      out.operation = operation;
      const method = route.protocol.operations[operation].method ?? 'POST';
      const item = api.line({ custom_id: vendorLineId(line.line), method, url: urlOf(snapshot, route, operation), path: snapshot.upstreams.pathFor(route, operation).path, body });
      if (api.spec.upload) out.jsonl.push(`${JSON.stringify(item)}\n`);
      else out.items.push(item);
    }
    if (page.length < 500) return out;
    from = page[page.length - 1].line + 1;
  }
}

/** A vendor id an answer gave, or undefined. */
function idOf(value: unknown): string | undefined {
  return (typeof value === 'string' || typeof value === 'number') && String(value).length > 0 && String(value).length <= 256 ? String(value) : undefined;
}

/** Whether the vendor answered (any status): then it made nothing, and saying so is safe. */
const answered = (err: unknown) => err instanceof GatewayError && err.upstreamStatus !== undefined;

/**
 * Submits a relayed batch. `creating` is called just before the create is sent: from then on, a crash leaves the batch
 * failed rather than sent twice.
 */
export async function submitBatch(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi, creating: () => Promise<boolean>): Promise<Submitted> {
  const lines = await vendorLines(runner, row, snapshot, route, api);
  if ('run' in lines) return lines;
  if (!lines.operation) return { run: 'no line is left to send' };
  const url = urlOf(snapshot, route, lines.operation);
  const scope = { url, batch_id: row.id };
  let fileId: string | undefined;
  if (api.spec.upload) {
    const file = new File(lines.jsonl, `${row.id}.jsonl`, { type: 'application/jsonl' });
    try {
      const answer = await callVendor(snapshot, runner.signal, route, { operation: api.spec.upload.operation, document: api.uploadRequest!({ ...scope, file }), once: true }, readJsonObject);
      fileId = idOf(api.uploadId!({ answer }));
    } catch (err) {
      return { run: `the upload failed: ${(err as Error).message}` };
    }
    if (!fileId) return { run: 'the upload was answered without a file id' };
  }
  if (!(await creating())) throw new GatewayError('lease_lost', 500, 'api_error', 'the batch was taken over while it was submitted', {}, false);
  try {
    const document = api.createRequest({ ...scope, file_id: fileId ?? null, lines: lines.items });
    const answer = await callVendor(snapshot, runner.signal, route, { operation: api.spec.create.operation, document, once: true }, readJsonObject);
    const id = idOf(api.createId({ answer }));
    // Answered 2xx without an id: a batch may exist that cannot be followed.
    return id ? { created: id } : { failed: { code: 'vendor_malformed', message: `channel "${route.channel.id}" answered the batch's creation without an id` } };
  } catch (err) {
    if (answered(err)) {
      // No vendor batch was made: the upload it would have read is of no use there.
      if (fileId) await cleanUpVendor(runner, row, snapshot, route, api, { answer: null, file_id: fileId });
      return { run: `the creation was refused: ${(err as Error).message}` };
    }
    return { failed: { code: 'vendor_create_unknown', message: `the vendor batch may or may not exist (${(err as Error).message}); it was not created again` } };
  }
}
