// How a batch crosses to the spend thread and back. A structured clone of an object costs per key, so a settlement
// (by far the most frequent operation) travels as its values in ledger column order in one flat array for the whole
// batch, and the answers as one array of values; other operations, rare, travel as they are.
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { OpResult, SpendOp } from './sqlite-spend-core.js';
import { ledgerColumns } from './sqlite-spend-statements.js';
import { requestLogColumns } from '../store/request-log-table.js';

/** The entry's own columns: all but reservation_id, which is the settlement's. */
const entryColumns = ledgerColumns.slice(0, -1) as Exclude<(typeof ledgerColumns)[number], 'reservation_id'>[];
const SETTLE = 0;
const OTHER = 1;
/** Request-log rows: their count, then their values, flat, in requestLogColumns order. */
const LOG = 2;

/**
 * A settlement's entry in `entryColumns` order, each column read by name in code (a loop over the column names read
 * each one through a lookup by a computed key: some 23 ns a value, two thirds of a batch's encoding, measured).
 */
function pushEntry(wire: unknown[], e: LedgerEntry): void {
  wire.push(e.request_id, e.workspace_id, e.key_id, e.model, e.channel, e.kind, e.input_tokens, e.output_tokens, e.cached_input_tokens, e.units, e.cost_micros, e.overage_micros, e.currency, e.price, e.created_at, e.reserved_at);
}

// Checked once at load, on an entry whose every column holds its own name: pushEntry writes the ledger's columns, each
// in its place, so a column added to the ledger cannot be left out of the wire.
const pushed: unknown[] = [];
pushEntry(pushed, Object.fromEntries(entryColumns.map((column) => [column, column])) as unknown as LedgerEntry);
if (pushed.join() !== entryColumns.join()) throw new Error(`spend-thread-wire.ts pushEntry writes ${pushed.join()}, the ledger has ${entryColumns.join()}`);

/** The entry pushEntry wrote from `wire[i]` on, as one object literal (set column by column through computed keys, each cost some 23 ns). */
function entryAt(w: unknown[], i: number): LedgerEntry {
  return {
    request_id: w[i], workspace_id: w[i + 1], key_id: w[i + 2], model: w[i + 3], channel: w[i + 4], kind: w[i + 5], input_tokens: w[i + 6], output_tokens: w[i + 7],
    cached_input_tokens: w[i + 8], units: w[i + 9], cost_micros: w[i + 10], overage_micros: w[i + 11], currency: w[i + 12], price: w[i + 13], created_at: w[i + 14], reserved_at: w[i + 15],
  } as LedgerEntry;
}

// And entryAt reads them back, each from its place.
if (JSON.stringify(entryAt(pushed, 0)) !== JSON.stringify(Object.fromEntries(entryColumns.map((column) => [column, column])))) throw new Error('spend-thread-wire.ts entryAt does not read back what pushEntry writes');

export function encodeOps(ops: SpendOp[]): unknown[] {
  const wire: unknown[] = [];
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op.op === 'log') {
      const rows = op.rows;
      wire.push(LOG, rows.length);
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r];
        for (let v = 0; v < row.length; v++) wire.push(row[v]);
      }
      continue;
    }
    if (op.op !== 'settle') {
      wire.push(OTHER, op);
      continue;
    }
    wire.push(SETTLE, op.reservationId, op.held);
    pushEntry(wire, op.entry);
  }
  return wire;
}

export function decodeOps(wire: unknown[]): SpendOp[] {
  const ops: SpendOp[] = [];
  for (let i = 0; i < wire.length; ) {
    const tag = wire[i++];
    if (tag === OTHER) {
      ops.push(wire[i++] as SpendOp);
      continue;
    }
    if (tag === LOG) {
      const rows: unknown[][] = new Array(wire[i++] as number);
      for (let r = 0; r < rows.length; r++) rows[r] = wire.slice(i, (i += requestLogColumns.length));
      ops.push({ op: 'log', rows });
      continue;
    }
    const reservationId = wire[i++] as string;
    const held = wire[i++] as boolean;
    ops.push({ op: 'settle', reservationId, entry: entryAt(wire, i), held });
    i += entryColumns.length;
  }
  return ops;
}

/** The answers: each operation's value, and the failures apart as [index, message, code]. */
export interface WireResults {
  values: unknown[];
  errors?: [number, string, string | undefined][];
}

export function encodeResults(results: OpResult[]): WireResults {
  const values = new Array<unknown>(results.length);
  let errors: WireResults['errors'];
  results.forEach((result, i) => {
    if (result.ok) values[i] = result.value;
    else {
      const error = result.error as { message?: string; code?: string } | undefined;
      (errors ??= []).push([i, String(error?.message ?? error), error?.code]);
    }
  });
  return errors ? { values, errors } : { values };
}

export function decodeResults({ values, errors }: WireResults): OpResult[] {
  const results: OpResult[] = values.map((value) => ({ ok: true, value }));
  for (const [i, message, code] of errors ?? []) results[i] = { ok: false, error: Object.assign(new Error(message), { code }) };
  return results;
}
