// What the response cache did since the process started: hits, misses, bypasses, answers stored, and what hits saved
// (the original cost less the hit's charge, per currency). The metrics endpoint reads them at each scrape.
/** What the cache did for one call. */
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

export class CacheStats {
  readonly outcomes: Record<CacheOutcome, number> = { hit: 0, miss: 0, bypass: 0 };
  stores = 0;
  /** Misses whose answer the full memory store did not take: their request had not missed before (cache.admission). */
  notAdmitted = 0;
  storedBytes = 0;
  readonly savedMicros = new Map<string, number>();

  count(outcome: CacheOutcome): void {
    this.outcomes[outcome]++;
  }

  hit(savedMicros: number, currency: string): void {
    this.savedMicros.set(currency, (this.savedMicros.get(currency) ?? 0) + savedMicros);
  }

  stored(bytes: number): void {
    this.stores++;
    this.storedBytes += bytes;
  }
}
