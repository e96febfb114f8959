// The response cache's metrics, read from its counters at each scrape: requests by outcome, answers stored and their
// bytes, the bytes the memory store holds, what it evicted and the misses it did not store (cache.admission), and what
// hits saved (original cost less the hit's charge).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ResponseCache } from './stage.js';

export function watchResponseCache(registry: Registry, cache: ResponseCache): void {
  const { stats, store } = cache;
  const registers = [registry];
  /** A counter without labels, set from `read` at each scrape. */
  const total = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  new Counter({
    name: 'gateway_response_cache_requests_total',
    help: 'Requests on routes with cache: by outcome (hit: answered from the cache; miss: sent upstream; bypass: not cacheable, or no-store)',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(stats.outcomes)) this.inc({ outcome }, n);
    },
  });
  total('gateway_response_cache_stored_total', 'Answers written to the response cache', () => stats.stores);
  total('gateway_response_cache_stored_bytes_total', 'Bytes of answers written to the response cache', () => stats.storedBytes);
  new Counter({
    name: 'gateway_response_cache_saved_total',
    help: 'What hits saved: the cost of the answers when fetched, less what the hits were charged, by currency',
    labelNames: ['currency'],
    registers,
    collect() {
      this.reset();
      for (const [currency, micros] of stats.savedMicros) this.inc({ currency }, micros / 1e6);
    },
  });
  const memory = store.memory;
  if (!memory) return;
  new Gauge({ name: 'gateway_response_cache_bytes', help: 'Bytes the in-memory response cache holds (keys and answers)', registers, collect() { this.set(memory.bytes); } });
  total('gateway_response_cache_not_admitted_total', 'Misses whose answer the full in-memory response cache did not store: their request had not missed before (cache.admission: second-miss)', () => stats.notAdmitted);
  total('gateway_response_cache_evictions_total', 'Entries the in-memory response cache dropped, least recently used first, to stay within cache.maxBytes', () => memory.evictions);
}
