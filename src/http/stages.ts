// Where a request is, for the latency breakdown (`npm run bench -- latency`): each stage is published on the
// diagnostics channel `relay-gateway:stage`, which nothing in the gateway subscribes to. With no subscriber a mark costs
// one property read (diagnostics_channel's `hasSubscribers`).
import diagnostics from 'node:diagnostics_channel';

const channel = diagnostics.channel('relay-gateway:stage');

/** Publishes that the request being handled reached `stage` (a subscriber reads the time itself). */
export function markStage(stage: string): void {
  if (channel.hasSubscribers) channel.publish(stage);
}
