// Leases on background work: one holder at a time across processes sharing a database, and a crashed holder's lease runs out.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices, type Services } from '../src/services.js';
import { acquireLease, releaseLease, withLease } from '../src/store/leases.js';
import { sweepSpendReservations } from '../src/billing/sweeper.js';
import { issueApiKey } from '../src/auth/keys.js';

let gw: TestGateway;
let other: Services;

beforeAll(async () => {
  gw = await startGateway({ channels: {} });
  // A second process's services on the same database.
  other = await createServices(await loadConfig(join(gw.dir, 'config.yaml')));
});
afterAll(async () => {
  await other.close();
  await gw.close();
});

describe('leases', () => {
  it('are held by one owner at a time, renewed by their holder, and taken over once they run out', async () => {
    const now = Date.now();
    expect(await acquireLease(gw.services.db, 'job:a', 'replica-1', 1000, now)).toBe(true);
    expect(await acquireLease(other.db, 'job:a', 'replica-2', 1000, now + 10)).toBe(false);
    expect(await acquireLease(gw.services.db, 'job:a', 'replica-1', 1000, now + 500)).toBe(true);
    // replica-1 crashed: nobody renews, and after its lease runs out replica-2 takes over.
    expect(await acquireLease(other.db, 'job:a', 'replica-2', 1000, now + 1400)).toBe(false);
    expect(await acquireLease(other.db, 'job:a', 'replica-2', 1000, now + 1500)).toBe(true);
    expect(await acquireLease(gw.services.db, 'job:a', 'replica-1', 1000, now + 1600)).toBe(false);
  });

  it('given back early are free for the next process at once', async () => {
    expect(await acquireLease(gw.services.db, 'job:b', 'replica-1', 60_000)).toBe(true);
    await releaseLease(gw.services.db, 'job:b', 'replica-2');
    expect(await acquireLease(other.db, 'job:b', 'replica-2', 60_000)).toBe(false);
    await releaseLease(gw.services.db, 'job:b', 'replica-1');
    expect(await acquireLease(other.db, 'job:b', 'replica-2', 60_000)).toBe(true);
  });

  it('go to exactly one of two processes that ask at the same moment, and a job under one is skipped by the other', async () => {
    const taken = await Promise.all([acquireLease(gw.services.db, 'job:c', 'replica-1', 60_000), acquireLease(other.db, 'job:c', 'replica-2', 60_000)]);
    expect(taken.filter(Boolean)).toHaveLength(1);
    const holder = taken[0] ? gw.services.db : other.db;
    const waiting = taken[0] ? other : gw.services;
    let ran = false;
    expect(await withLease(waiting.db, 'job:c', waiting.instanceId, 60_000, async () => void (ran = true))).toBe(false);
    expect(ran).toBe(false);
    await releaseLease(holder, 'job:c', taken[0] ? 'replica-1' : 'replica-2');
    expect(await withLease(waiting.db, 'job:c', waiting.instanceId, 60_000, async () => void (ran = true))).toBe(true);
    expect(ran).toBe(true);
  });

  it('keep the reservation sweeper to one replica while another holds its lease', async () => {
    await acquireLease(other.db, 'sweep:spend-reservations', other.instanceId, 60_000);
    const longAgo = Date.now() - 3_600_000;
    const keyId = (await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 1_000_000 })).id;
    await gw.services.spend.reserve({ id: 'rsv_leased', keyId, workspaceId: gw.workspace.id, requestId: 'r', amountMicros: 5, now: longAgo, expiresAt: longAgo + 1000 });
    const logs: unknown[] = [];
    await sweepSpendReservations(gw.services, { info: (o: unknown) => logs.push(o), error: (o: unknown) => logs.push(o) } as never);
    // The other replica holds the sweep: this one left the stranded reservation alone.
    expect(await gw.services.db.selectFrom('spend_reservations').select('id').where('id', '=', 'rsv_leased').execute()).toHaveLength(1);
    await releaseLease(other.db, 'sweep:spend-reservations', other.instanceId);
    await sweepSpendReservations(gw.services, { info: (o: unknown) => logs.push(o), error: (o: unknown) => logs.push(o) } as never);
    expect(await gw.services.db.selectFrom('spend_reservations').select('id').where('id', '=', 'rsv_leased').execute()).toHaveLength(0);
  });
});
