// Every secret a channel holds, for scrubbing upstream text: the values read from the environment at load, and the tokens
// its authenticator holds now (registered by the upstream client that owns them).
import type { ChannelConfig } from '../../config/types.js';

const live = new WeakMap<ChannelConfig, { liveSecrets(): string[] }>();

export function registerLiveSecrets(channel: ChannelConfig, source: { liveSecrets(): string[] }): void {
  live.set(channel, source);
}

/** The channel's secret values: never to appear in an error, an answer or a log. */
export function secretsOf(channel: ChannelConfig): string[] {
  const held = live.get(channel)?.liveSecrets() ?? [];
  const loaded = channel.secretValues ?? (channel.credentialValue ? [channel.credentialValue] : []);
  return held.length ? [...loaded, ...held] : loaded;
}
