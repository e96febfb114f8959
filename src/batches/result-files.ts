// Writes a finished batch's result files into the file store: each streamed from the batch's lines a page at a time,
// and not written at all when no line belongs in it.
import type { FileStore } from '../files/file-store.js';
import { storeFile } from '../files/store-file.js';
import type { LineResult } from './results.js';
import { linesPage, type BatchLineRow, type BatchRow } from './store.js';

/** A result file's line for a batch line, or undefined when the line does not belong in that file. */
export type LineFormat = (line: BatchLineRow, result: LineResult | undefined) => string | undefined;

/** Streams one result file from the batch's lines (a page at a time); its id, or undefined when no line belongs in it. */
export async function writeResultFile(store: FileStore, row: BatchRow, format: LineFormat, suffix: string): Promise<string | undefined> {
  const { db } = store;
  const first = await firstLineOf(store, row, format);
  if (first === undefined) return undefined;
  const stream = async function* () {
    for (let from = first; ; ) {
      const page = await linesPage(db, row.id, from, 500);
      for (const line of page) {
        const text = format(line, line.result ? (JSON.parse(line.result) as LineResult) : undefined);
        if (text !== undefined) yield Buffer.from(`${text}\n`);
      }
      if (page.length < 500) return;
      from = page[page.length - 1].line + 1;
    }
  };
  const file = await storeFile(store, {
    workspaceId: row.workspace_id,
    stream: stream(),
    maxBytes: Number.MAX_SAFE_INTEGER,
    filename: `${row.id}_${suffix}.jsonl`,
    purpose: 'batch_output',
    source: 'generated',
    taskId: row.id,
  });
  return file.id;
}

/** The first line that belongs in a file, or undefined (the file would be empty and is not written). */
async function firstLineOf(store: FileStore, row: BatchRow, format: LineFormat): Promise<number | undefined> {
  for (let from = 0; ; ) {
    const page = await linesPage(store.db, row.id, from, 500);
    for (const line of page) if (format(line, line.result ? (JSON.parse(line.result) as LineResult) : undefined) !== undefined) return line.line;
    if (page.length < 500) return undefined;
    from = page[page.length - 1].line + 1;
  }
}
