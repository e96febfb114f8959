// Reading an ended vendor batch back: each results download (JSON lines) mapped line by line by the protocol's
// `batches.result`, each line's answer replayed through the pipeline as the line's own call (translated to the client's
// dialect, billed once from its reported usage at the batch price), a line with no answer written with the vendor's
// reason, unbilled. Lines already written (a turn cut short by a crash) are skipped, so reading again is safe.
import { sanitizeUpstreamMessage } from '../engine/upstream.js';
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import { finishLine, type BatchLineRow, type BatchRow } from './store.js';
import { runLine, type LineRunner } from './line-run.js';
import { ReplayUpstreams } from './replay-upstreams.js';
import type { LineResult } from './results.js';
import { callVendor, jsonLinesOf } from './vendor-calls.js';
import type { CompiledBatchApi } from './vendor-spec.js';

/** Lines read back at once: their rows fetched together, their replays run side by side. */
const SLICE = 64;

/** One result line as the protocol's `result` mapping reads it. */
interface VendorResult {
  line: number;
  status?: number;
  body?: unknown;
  error?: { code: string; message: string };
}

/** Reads every results download of the ended vendor batch whose last poll answered `answer`. Upstream errors throw. */
export async function readVendorResults(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi, answer: unknown): Promise<void> {
  for (const download of api.results) {
    const params = download.params?.({ answer }) as Record<string, unknown> | undefined;
    // A download whose params are missing a value has nothing to read (OpenAI's error file of a batch without errors).
    if (params && Object.values(params).some((v) => v === null || v === undefined || v === '')) continue;
    const outgoing = { operation: download.operation, pathScope: { ...params, upstream_id: row.vendor_batch_id } };
    await callVendor(snapshot, runner.signal, route, outgoing, async (sent) => {
      let slice: VendorResult[] = [];
      for await (const parsed of jsonLinesOf(sent)) {
        const result = resultOf(api, parsed, row, route);
        if (!result) continue;
        slice.push(result);
        if (slice.length < SLICE) continue;
        await replaySlice(runner, row, snapshot, route, slice);
        slice = [];
      }
      await replaySlice(runner, row, snapshot, route, slice);
    });
  }
}

/** A result line as the mapping reads it, or undefined (logged) when it names no line of this batch. */
function resultOf(api: CompiledBatchApi, parsed: unknown, row: BatchRow, route: ModelRoute): VendorResult | undefined {
  const mapped = (api.result({ line: parsed }) ?? {}) as { customId?: unknown; status?: unknown; body?: unknown; error?: { code?: unknown; message?: unknown } | null };
  const match = typeof mapped.customId === 'string' ? /^line-(\d{1,9})$/.exec(mapped.customId) : null;
  const line = match ? Number(match[1]) : -1;
  if (line < 0 || line >= Number(row.total)) return undefined;
  if (typeof mapped.status === 'number' && Number.isInteger(mapped.status)) return { line, status: mapped.status, body: mapped.body };
  const code = typeof mapped.error?.code === 'string' ? mapped.error.code.slice(0, 64) : 'vendor_no_answer';
  const message = typeof mapped.error?.message === 'string' ? sanitizeUpstreamMessage(mapped.error.message, route) : `channel "${route.channel.id}" gave this request no answer`;
  return { line, error: { code, message } };
}

/** Writes a slice of results: each pending line's answer replayed, or its missing answer written failed. */
async function replaySlice(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, results: VendorResult[]): Promise<void> {
  if (!results.length) return;
  const rows = await runner.services.db
    .selectFrom('batch_lines')
    .selectAll()
    .where('batch_id', '=', row.id)
    .where('line', 'in', results.map((r) => r.line))
    .where('status', '=', 'pending')
    .execute();
  const pending = new Map<number, BatchLineRow>(rows.map((line) => [Number(line.line), line]));
  await Promise.all(
    results.map((result) => {
      const line = pending.get(result.line);
      if (!line) return undefined;
      if (result.status === undefined) return unanswered(runner, row, line, result.error!);
      return runLine(runner, row, line, snapshot, new ReplayUpstreams(snapshot.config, route.channel.id, { status: result.status, body: result.body }));
    }),
  );
}

/** A line the vendor ran without an answer (cancelled, expired, refused before it ran): its reason, nothing billed. */
async function unanswered(runner: LineRunner, row: BatchRow, line: BatchLineRow, error: { code: string; message: string }): Promise<void> {
  const result: LineResult = { request_id: `${row.id}:${line.line}`, error };
  await finishLine(runner.services.db, row.id, line.line, { status: 'failed', result: JSON.stringify(result), costMicros: 0 });
}
