// A channel's client: one undici pool per origin its keys reach (timeouts, retries composed on), its circuit breaker and retry budget, and one client per credential.
import { Pool, type Dispatcher } from '../net/undici.js';
import type { ResolvedCredential } from '../config/credentials.js';
import type { ChannelConfig } from '../config/types.js';
import type { LoadedConfig } from './loaded-config.js';
import type { Metrics } from '../base/metrics.js';
import { authenticatorFor, type Authenticator } from './credentials/authenticator.js';
import { registerLiveSecrets } from './credentials/secrets.js';
import type { TokenCaches } from './credentials/token-cache.js';
import { KeyPool } from './credentials/key-pool.js';
import { CircuitBreaker, RetryBudget, retryInterceptor } from './resilience.js';

/** Where one credential's requests go and how they are authenticated: the channel's own, or an entry of its key pool. */
export interface KeyClient {
  /** A key pool entry's label (the variable naming it); empty for a channel's one credential. */
  label: string;
  weight: number;
  pool: Pool;
  /** The pool, with retries composed on when the channel allows them. */
  dispatcher: Dispatcher;
  basePath: string;
  /** Headers that are the same for every request. */
  headers: Record<string, string>;
  /** How each request is authenticated (src/engine/credentials): a header, a cached token, or a signature over the body. */
  auth?: Authenticator;
  origin: URL;
}

export interface ChannelClient {
  budget: RetryBudget;
  breaker: CircuitBreaker;
  /** One for a channel with one credential (or none); a key pool's entries that serve. */
  keys: KeyClient[];
  /** The channel's key pool (`credentials`), absent for one credential. */
  keyPool?: KeyPool<KeyClient>;
  /** The undici pools, one per origin its keys reach. */
  pools: Pool[];
}

/** What building a channel's client takes: the config, metrics for retries, the clock, the shared token caches. */
export interface ChannelClientDeps {
  config: LoadedConfig;
  metrics?: Metrics;
  now: () => number;
  tokenCaches: TokenCaches;
}

/** A channel's client, made on its first request. */
export function channelClient(channel: ChannelConfig, deps: ChannelClientDeps): ChannelClient {
  const budget = new RetryBudget(channel.retries.budget, channel.retries.burst);
  const pools = new Map<string, { pool: Pool; dispatcher: Dispatcher }>();
  const poolFor = (url: URL) => {
    let found = pools.get(url.origin);
    if (found) return found;
    const pool = new Pool(url.origin, {
      connections: channel.pool.connections,
      pipelining: channel.pool.pipelining,
      connectTimeout: channel.timeouts.connectMs,
      headersTimeout: channel.timeouts.headersMs,
      bodyTimeout: channel.timeouts.bodyMs,
      keepAliveTimeout: 30_000,
    });
    // A key pool moves a 429 on to its next entry instead of retrying it on the same key.
    const retries = channel.retries.max > 0 ? retryInterceptor(channel, budget, () => deps.metrics?.retries.inc({ channel: channel.id }), { retry429: !channel.keyPool }) : undefined;
    pools.set(url.origin, (found = { pool, dispatcher: retries ? pool.compose(retries) : pool }));
    return found;
  };
  const entries = channel.keyPool ?? [{ label: '', weight: 1, baseUrl: undefined, auth: channel.auth }];
  const keys = entries.map((entry) => keyClient(channel, entry, poolFor, deps));
  const client: ChannelClient = {
    budget,
    breaker: new CircuitBreaker(channel.breaker.failures, channel.breaker.coolDownMs),
    keys,
    keyPool: channel.keyPool ? new KeyPool(keys, channel.credentialCooldown, deps.now) : undefined,
    pools: [...pools.values()].map(({ pool }) => pool),
  };
  registerLiveSecrets(channel, { liveSecrets: () => keys.flatMap((key) => key.auth?.liveSecrets() ?? []) });
  return client;
}

/** One credential's client: its headers rendered with its key, its authenticator, the undici pool of its origin. */
function keyClient(channel: ChannelConfig, entry: { label: string; weight: number; baseUrl?: string; auth?: ResolvedCredential }, poolFor: (url: URL) => { pool: Pool; dispatcher: Dispatcher }, deps: ChannelClientDeps): KeyClient {
  const { config, now, tokenCaches } = deps;
  const url = new URL(entry.baseUrl ?? channel.baseUrl);
  const protocol = config.protocols.get(channel.protocol)!;
  const auth = entry.auth;
  const scope = channel.keyPool ? { credential: auth?.kind === 'static' ? auth.credential : '', secret: (auth?.kind === 'static' && auth.secret) || '' } : { credential: channel.credentialValue ?? '', secret: channel.secretValue ?? '' };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...protocol.headers, ...channel.headers })) {
    headers[name.toLowerCase()] = config.templates.get(value).render(scope);
  }
  return {
    label: entry.label,
    weight: entry.weight,
    ...poolFor(url),
    // A base URL built from a variable may carry a doubled slash (`${ENDPOINT}/v1` with ENDPOINT ending in one).
    basePath: url.pathname.replace(/\/{2,}/g, '/').replace(/\/$/, ''),
    headers,
    auth: authenticatorFor({ channel, credential: auth, protocol, templates: config.templates, now, tokenCache: (identity, fetchToken) => tokenCaches.of(identity, fetchToken) }),
    origin: url,
  };
}
