// Sending a relayed batch to its vendor: every pending line mapped for the channel (a line refused on its own goes to the
// error file), the lines uploaded as one JSONL file where the protocol declares an upload, then the vendor batch created,
// once. An error answer to either call means the vendor made no batch: the gateway runs the lines itself. The upload is
// written to a temporary file as its lines are mapped and streamed from there: a 50,000-line batch is never held whole.
import { openAsBlob } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** The lines as the vendor takes them: a JSONL file to upload (`upload`, its path), or the mapped objects that travel inline. */
interface VendorLines {
  upload: UploadFile | undefined;
  items: unknown[];
  operation: string | undefined;
}

/** How much of the upload is gathered before it is written to its file. */
const UPLOAD_CHUNK_BYTES = 64 * 1024;

/** The upload's JSONL, written to a file of its own as lines come: memory holds one chunk of it, whatever its size. */
export class UploadFile {
  private pending: string[] = [];
  private pendingBytes = 0;
  /** Bytes written so far (and pending). */
  bytes = 0;

  /** Bytes held in memory, not yet written: under a chunk and a line. */
  get held(): number {
    return this.pendingBytes;
  }

  private constructor(
    readonly dir: string,
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async create(): Promise<UploadFile> {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-batch-upload-'));
    const path = join(dir, 'lines.jsonl');
    return new UploadFile(dir, path, await open(path, 'w'));
  }

  async add(line: string): Promise<void> {
    this.pending.push(line);
    const size = Buffer.byteLength(line);
    this.pendingBytes += size;
    this.bytes += size;
    if (this.pendingBytes >= UPLOAD_CHUNK_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.pending.length) return;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    await this.handle.write(text);
  }

  /** The whole file as a File part, read from disk as it is sent. */
  async file(name: string): Promise<File> {
    await this.flush();
    await this.handle.close().catch(() => undefined);
    return new File([await openAsBlob(this.path)], name, { type: 'application/jsonl' });
  }

  async remove(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The channel's base path and an operation's path: the `url` a vendor's batch line names (`/v1/chat/completions`). */
function urlOf(snapshot: Snapshot, route: ModelRoute, operation: string): string {
  const base = new URL(route.channel.baseUrl).pathname.replace(/\/{2,}/g, '/').replace(/\/$/, '');
  return `${base}${snapshot.upstreams.pathFor(route, operation).path}`;
}

async function vendorLines(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi): Promise<VendorLines | { run: string }> {
  const endpoint = batchEndpoint(snapshot.config, row.endpoint, 'endpoint');
  const out: VendorLines = { upload: api.spec.upload ? await UploadFile.create() : undefined, items: [], operation: undefined };
  try {
    return await mapLines(runner, row, snapshot, route, api, endpoint, out);
  } catch (err) {
    await out.upload?.remove();
    throw err;
  }
}

async function mapLines(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi, endpoint: ReturnType<typeof batchEndpoint>, out: VendorLines): Promise<VendorLines | { run: string }> {
  for (let from = 0; ; ) {
    const page = await linesPage(runner.services.db, row.id, from, 500);
    for (const line of page) {
      if (line.status !== 'pending') continue;
      const mapping = await mapLine(runner, row, line, snapshot, endpoint, route.channel.id);
      if ('notRelayable' in mapping) return notRelayed(out, mapping.notRelayable);
      if ('refused' in mapping) {
        await writeLineError(runner, row, line, mapping.refused, { endpointName: endpoint.name, started: Date.now() });
        continue;
      }
      const { operation, body, checkedBody } = mapping.mapped;
      if (checkedBody !== undefined) await setPendingLineBody(runner.services.db, row.id, line.line, checkedBody);
      if (!api.spec.operations.includes(operation) || (out.operation !== undefined && out.operation !== operation)) return notRelayed(out, `its lines call operation "${operation}", which the channel's batch API does not take with the others`);
      out.operation = operation;
      const method = route.protocol.operations[operation].method ?? 'POST';
      const item = api.line({ custom_id: vendorLineId(line.line), method, url: urlOf(snapshot, route, operation), path: snapshot.upstreams.pathFor(route, operation).path, body });
      if (out.upload) await out.upload.add(`${JSON.stringify(item)}\n`);
      else out.items.push(item);
    }
    if (page.length < 500) return out;
    from = page[page.length - 1].line + 1;
  }
}

/** The batch is not relayed: its upload file, if any, is gone. */
async function notRelayed(out: VendorLines, reason: string): Promise<{ run: string }> {
  await out.upload?.remove();
  return { run: reason };
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
  try {
    return await submitLines(runner, row, snapshot, route, api, creating, lines);
  } finally {
    await lines.upload?.remove();
  }
}

async function submitLines(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi, creating: () => Promise<boolean>, lines: VendorLines): Promise<Submitted> {
  if (!lines.operation) return { run: 'no line is left to send' };
  const url = urlOf(snapshot, route, lines.operation);
  const scope = { url, batch_id: row.id };
  let fileId: string | undefined;
  if (api.spec.upload && lines.upload) {
    const file = await lines.upload.file(`${row.id}.jsonl`);
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
