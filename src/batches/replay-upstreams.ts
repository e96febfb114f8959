// A vendor batch's answer to one line, handed to the pipeline in place of its send: the line then runs as a call of its
// own (translation back to the client's dialect, usage, billing at batch prices, outputs, the request log) with nothing
// sent, because the vendor already answered it. Error answers become the same typed errors a sent request's would.
import { Readable } from 'node:stream';
import { GatewayError } from '../base/errors.js';
import type { ModelRoute } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { Upstreams, upstreamErrorOf, type UpstreamRequest, type UpstreamResponse } from '../engine/upstream.js';

/** What the vendor answered one line: its HTTP status and body, as its result line says. */
export interface VendorAnswer {
  status: number;
  body: unknown;
}

export class ReplayUpstreams extends Upstreams {
  constructor(
    config: LoadedConfig,
    /** The channel whose batch answered: the line's attempt on it is the one replayed. */
    private readonly channel: string,
    private readonly answer: VendorAnswer,
  ) {
    super(config);
  }

  override async sendFirst(routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest): Promise<{ route: ModelRoute; response: UpstreamResponse }> {
    const index = routes.findIndex((route) => route.channel.id === this.channel);
    if (index < 0) throw new GatewayError('batch_route_changed', 502, 'server_error', `the line no longer goes to channel "${this.channel}", whose batch answered it; its answer cannot be read back`);
    const route = routes[index];
    // Built as a send would, so the flow knows the request its answer belongs to (a translation reads it back).
    const request = build(route, index);
    const text = typeof this.answer.body === 'string' ? this.answer.body : JSON.stringify(this.answer.body ?? null);
    if (this.answer.status < 200 || this.answer.status >= 300) throw upstreamErrorOf(this.answer.status, {}, text, route, this.errorMessage(route, request.operation));
    return { route, response: answered(this.answer.status, text) };
  }

  override send(): Promise<UpstreamResponse> {
    return Promise.reject(new GatewayError('batch_replay', 500, 'api_error', 'a line read back from a vendor batch sends nothing', {}, false));
  }
}

/** An answer as undici gives one: its status, JSON headers and a body stream of `text`. */
function answered(status: number, text: string): UpstreamResponse {
  const bytes = Buffer.from(text);
  const body = Object.assign(Readable.from([bytes]), { dump: async () => undefined });
  return { statusCode: status, headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) }, trailers: {}, opaque: null, context: {}, body } as unknown as UpstreamResponse;
}
