// A protocol's vendor batch API (its `batches` section, schemas/protocol-batches.schema.json): its mappings as renderers,
// compiled once per section, and the route a batch's vendor calls go through.
import type { BatchApiSpec, ModelRoute, ProtocolConfig } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { renderer, type Renderer } from '../engine/translate/render.js';
import { servesBatchApi } from './relay-choice.js';

export interface CompiledBatchApi {
  spec: BatchApiSpec;
  line: Renderer;
  uploadRequest?: Renderer;
  uploadId?: Renderer;
  createRequest: Renderer;
  createId: Renderer;
  status: Renderer;
  error?: Renderer;
  results: { operation: string; params?: Renderer }[];
  result: Renderer;
  cleanup: { operation: string; params: Renderer }[];
}

const compiled = new WeakMap<BatchApiSpec, CompiledBatchApi>();

function compile(config: LoadedConfig, protocol: ProtocolConfig, spec: BatchApiSpec): CompiledBatchApi {
  const at = (pointer: string) => `${protocol.file} /batches/${pointer}`;
  return {
    spec,
    line: renderer(config, spec.line, at('line')),
    uploadRequest: spec.upload && renderer(config, spec.upload.request, at('upload/request')),
    uploadId: spec.upload && renderer(config, spec.upload.id, at('upload/id')),
    createRequest: renderer(config, spec.create.request, at('create/request')),
    createId: renderer(config, spec.create.id, at('create/id')),
    status: renderer(config, spec.poll.status, at('poll/status')),
    error: spec.poll.error === undefined ? undefined : renderer(config, spec.poll.error, at('poll/error')),
    results: spec.results.map((r, i) => ({ operation: r.operation, params: r.params === undefined ? undefined : renderer(config, r.params, at(`results/${i}/params`)) })),
    result: renderer(config, spec.result, at('result')),
    cleanup: (spec.cleanup ?? []).map((c, i) => ({ operation: c.operation, params: renderer(config, c.params, at(`cleanup/${i}/params`)) })),
  };
}

/** The vendor batch API a relayed batch's channel serves in this config, with a route to call it on; undefined when gone. */
export function vendorApiOf(config: LoadedConfig, channel: string): { route: ModelRoute; api: CompiledBatchApi } | undefined {
  for (const routes of config.models.values()) {
    const route = routes.find((r) => r.channel.id === channel);
    if (!route) continue;
    if (!servesBatchApi(route) || route.channel.disabledReason) return undefined;
    const spec = route.protocol.batches;
    let api = compiled.get(spec);
    if (!api) compiled.set(spec, (api = compile(config, route.protocol, spec)));
    return { route, api };
  }
  return undefined;
}
