// The spend thread's wire: a batch encoded on the event loop is decoded on the thread as the same operations, every
// ledger column of a settlement in its place, request-log rows and rare operations as they were.
import { describe, expect, it } from 'vitest';
import { decodeOps, decodeResults, encodeOps, encodeResults } from '../src/billing/spend-thread-wire.js';
import type { SpendOp } from '../src/billing/sqlite-spend-core.js';
import { ledgerColumns } from '../src/billing/sqlite-spend-statements.js';
import { requestLogColumns } from '../src/store/request-log-table.js';

/** A ledger entry whose every column holds a value of its own (its name, or a number), so a shifted column shows. */
function entry(n: number): Record<string, unknown> {
  return Object.fromEntries(ledgerColumns.filter((c) => c !== 'reservation_id').map((column, i) => [column, i % 3 === 0 ? n * 100 + i : `${column}-${n}`]));
}

describe('spend thread wire', () => {
  it('carries settlements, request-log rows and other operations through unchanged, in order', () => {
    const row = (n: number) => requestLogColumns.map((column, i) => (i % 4 === 0 ? null : `${column}-${n}`));
    const ops = [
      { op: 'settle', reservationId: 'rsv_1', entry: entry(1), held: true },
      { op: 'log', rows: [row(1), row(2)] },
      { op: 'release', reservationId: 'rsv_2' },
      { op: 'settle', reservationId: 'rsv_3', entry: entry(3), held: false },
      { op: 'log', rows: [] },
    ] as unknown as SpendOp[];
    expect(decodeOps(encodeOps(ops))).toEqual(ops);
  });

  it('carries answers and failures back', () => {
    const results = decodeResults(encodeResults([{ ok: true, value: 1 }, { ok: false, error: Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }) }, { ok: true, value: { held: true } }]));
    expect(results[0]).toEqual({ ok: true, value: 1 });
    expect(results[1].ok).toBe(false);
    expect((results[1] as { error: Error & { code?: string } }).error).toMatchObject({ message: 'busy', code: 'SQLITE_BUSY' });
    expect(results[2]).toEqual({ ok: true, value: { held: true } });
  });
});
