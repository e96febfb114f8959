// The auth caches' change counter is read when something may have changed, not per request: after a change signal,
// after a commit of this process, once the recheck interval ran out, or (with no signal to be had) once per turn.
import { describe, expect, it } from 'vitest';
import { ChangeCache, changeVersion, registerChangeDetector, RECHECK_MS } from '../src/store/change-version.js';
import type { Db } from '../src/store/db.js';

/** A database the detector knows only by identity, with a counter whose reads are counted, and a clock of its own. */
function counted(start = 7) {
  const db = {} as Db;
  const state = { counter: start, reads: 0, now: 0 };
  const detector = registerChangeDetector(db, () => (state.reads++, state.counter), { now: () => state.now });
  return { db, state, detector };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('changeVersion', () => {
  it('reads the counter once when registered, then not again over many turns while nothing changes', async () => {
    const { db, state } = counted();
    for (let turn = 0; turn < 20; turn++) {
      for (let request = 0; request < 50; request++) expect(changeVersion(db)).toBe(7);
      await nextTurn();
    }
    expect(state.reads).toBe(1);
  });

  it('reads once after a change signal and holds the new version after that', () => {
    const { db, state, detector } = counted();
    state.counter = 8;
    expect(changeVersion(db)).toBe(7);
    detector.stale();
    expect([changeVersion(db), changeVersion(db), changeVersion(db)]).toEqual([8, 8, 8]);
    expect(state.reads).toBe(2);
  });

  it('reads again once the recheck interval has run out without a signal (a write around the gateway)', () => {
    const { db, state } = counted();
    state.counter = 9;
    state.now = RECHECK_MS - 1;
    expect(changeVersion(db)).toBe(7);
    state.now = RECHECK_MS;
    expect(changeVersion(db)).toBe(9);
    expect(changeVersion(db)).toBe(9);
    expect(state.reads).toBe(2);
  });

  it('tells a commit that moved the counter from one that did not, and takes the value it read', () => {
    const { db, state, detector } = counted();
    expect(detector.moved()).toBe(false);
    state.counter = 8;
    expect(detector.moved()).toBe(true);
    expect(changeVersion(db)).toBe(8);
    expect(state.reads).toBe(3);
  });

  it('reads once per turn of the event loop when no signal can be had', async () => {
    const { db, state, detector } = counted();
    detector.unwatched();
    for (let turn = 0; turn < 5; turn++) {
      for (let request = 0; request < 10; request++) changeVersion(db);
      await nextTurn();
    }
    expect(state.reads).toBe(1 + 5);
  });

  it('is undefined for a database that registered no counter (PostgreSQL: nothing is cached)', () => {
    expect(changeVersion({} as Db)).toBeUndefined();
  });
});

describe('ChangeCache', () => {
  it('keeps the entries of a version while it stands, and hands out an empty map once it moved', () => {
    const cache = new ChangeCache<string>();
    cache.at(1).set('key', 'row');
    expect(cache.at(1).get('key')).toBe('row');
    expect(cache.at(2).size).toBe(0);
    expect(cache.at(2).has('key')).toBe(false);
  });

  it('empties itself at its limit, so memory stays bounded', () => {
    const cache = new ChangeCache<number>(3);
    for (let i = 0; i < 3; i++) cache.at(1).set(`k${i}`, i);
    expect(cache.at(1).size).toBe(0);
  });
});
