// Expiry: the sweeper removes expired files row-then-bytes, is safe when two run at once or one dies midway, and later removes orphan bytes.
import { mkdirSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../src/files/local-blob-store.js';
import type { FastifyBaseLogger } from 'fastify';
import { storeFile } from '../src/files/index.js';
import { fileSweeperJob, sweepFiles } from '../src/files/sweeper.js';
import { blobDrivers, blobKeys, fileRowCount, startFilesGateway, type FilesGateway } from './kit/files.js';
import { png } from './kit/media-samples.js';

const DAY = 86400_000;
const HOUR = 3600_000;

describe.each(blobDrivers)('file sweeper on %s blobs', (driver) => {
  let gw: FilesGateway;
  const seed = (ageMs: number, n = 1) =>
    Promise.all(Array.from({ length: n }, (_, i) => storeFile(gw.services, { workspaceId: gw.workspace.id, stream: [png()], filename: `s${i}.png`, purpose: 'image_generation', source: 'generated', now: Date.now() - ageMs })));
  const clear = async () => {
    await gw.services.db.deleteFrom('files').execute();
    for (const key of await blobKeys(gw)) await gw.services.blobs.delete(key);
  };

  beforeAll(async () => {
    // A small batch size so a sweep takes several batches.
    gw = await startFilesGateway(driver, { extraConfig: 'files:\n  sweep:\n    batchSize: 3\n' });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('removes files 30 days old, rows and bytes, and keeps younger ones', async () => {
    await clear();
    const expired = await seed(30 * DAY + 1000, 7);
    const live = await seed(29 * DAY, 2);
    const result = await sweepFiles(gw.services);
    expect(result.expired).toBe(7);
    expect(await fileRowCount(gw)).toBe(2);
    expect(await blobKeys(gw)).toEqual(live.map((f) => f.blob_key).sort());
    for (const f of expired) expect(await gw.services.blobs.stat(f.blob_key)).toBeUndefined();
  });

  it('is safe when two sweeps run at once: every file removed exactly once', async () => {
    await clear();
    await seed(31 * DAY, 10);
    const [a, b] = await Promise.all([sweepFiles(gw.services), sweepFiles(gw.services)]);
    expect(a.expired + b.expired).toBe(10);
    expect(await fileRowCount(gw)).toBe(0);
    expect(await blobKeys(gw)).toEqual([]);
  });

  it('recovers from a sweep that died between a row and its bytes: a later sweep removes the orphan bytes', async () => {
    await clear();
    const seeded = await seed(31 * DAY, 4);
    const blobs = gw.services.blobs;
    const remove = blobs.delete;
    blobs.delete = async () => {
      throw new Error('blob store went away');
    };
    try {
      await expect(sweepFiles(gw.services)).rejects.toThrow('blob store went away');
    } finally {
      blobs.delete = remove;
    }
    expect(await fileRowCount(gw)).toBe(3);
    const rows = await gw.services.db.selectFrom('files').select('blob_key').execute();
    const orphan = seeded.map((f) => f.blob_key).find((key) => !rows.some((r) => r.blob_key === key))!;
    expect(await blobKeys(gw)).toContain(orphan);

    // Within the grace window the orphan is left alone (it could be an upload about to write its row).
    const soon = await sweepFiles(gw.services);
    expect(soon).toMatchObject({ expired: 3, orphans: 0 });
    expect(await blobKeys(gw)).toEqual([orphan]);

    const later = await sweepFiles(gw.services, Date.now() + 2 * HOUR);
    expect(later.orphans).toBe(1);
    expect(await blobKeys(gw)).toEqual([]);
  });

  it('never removes bytes that have a row', async () => {
    await clear();
    const live = await seed(DAY, 3);
    const result = await sweepFiles(gw.services, Date.now() + 2 * HOUR);
    expect(result).toMatchObject({ expired: 0, orphans: 0 });
    expect(await blobKeys(gw)).toEqual(live.map((f) => f.blob_key).sort());
  });

  it('runs as a background job at start and stops with the gateway', async () => {
    await clear();
    await seed(31 * DAY, 2);
    const swept = new Promise<unknown>((resolve, reject) => {
      const log = { info: (obj: unknown) => resolve(obj), error: (obj: unknown) => reject(obj) } as unknown as FastifyBaseLogger;
      fileSweeperJob(gw.services, log);
    });
    expect(await swept).toMatchObject({ expired: 2 });
    expect(await fileRowCount(gw)).toBe(0);
  });
});

describe('file sweeper on a local directory', () => {
  it('removes partial writes a crash left behind, once past the grace window', async () => {
    const gw = await startFilesGateway('local');
    try {
      const root = (gw.services.blobs as LocalBlobStore).root;
      mkdirSync(join(root, '.partial'), { recursive: true });
      const stale = join(root, '.partial', 'stale');
      const fresh = join(root, '.partial', 'fresh');
      writeFileSync(stale, 'half an upload');
      writeFileSync(fresh, 'an upload in progress');
      const twoHoursAgo = (Date.now() - 2 * HOUR) / 1000;
      utimesSync(stale, twoHoursAgo, twoHoursAgo);
      expect((await sweepFiles(gw.services)).partials).toBe(1);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(fresh)).toBe(true);
    } finally {
      await gw.close();
    }
  });
});
