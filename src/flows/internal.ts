// Internal calls: a request of one of the catalogue's endpoint families (found by the model kind it serves) run through
// the pipeline for a call in progress, on its snapshot, under its key: reserved and settled against its workspace's and
// key's caps like any call (a key's scopes are the operator's guardrail's business, not the key's), with a request-log
// row of its own under the same request id, its route the purpose (`guardrail:<id>`). Its bodies are never captured.
import { GatewayError } from '../base/errors.js';
import { jsonBytes } from '../billing/estimate.js';
import type { EndpointConfig } from '../config/types.js';
import type { InternalAnswer, InternalRequest } from '../engine/guardrails.js';
import type { RequestLogWriter } from '../request-logs/writer.js';
import type { InternalCalls, InternalParent, PipelineDeps } from '../pipeline/deps.js';
import type { Flow } from '../pipeline/flow.js';
import { KeptCall } from '../pipeline/kept-call.js';
import { runCall } from '../pipeline/run.js';
import { flowFor } from './index.js';

const flowsByEndpoint = new WeakMap<EndpointConfig, Flow<any, any>>();
/** The parent's services without tracing (its spans hang on an HTTP request): one view per services object. */
const untraced = new WeakMap<PipelineDeps, PipelineDeps>();

function servicesFor(parent: InternalParent): PipelineDeps {
  let services = untraced.get(parent.services);
  if (!services) {
    services = { ...parent.services };
    delete (services as { tracing?: unknown }).tracing;
    untraced.set(parent.services, services);
  }
  return services;
}

/** The endpoint family serving `modelKind` through a flow that answers at once (not a task). */
function endpointFor(parent: InternalParent, modelKind: string): EndpointConfig {
  const endpoint = parent.config.endpoints.find((e) => e.modelKind === modelKind && e.pipeline && e.pipeline.flow !== 'task');
  if (!endpoint) throw new GatewayError('internal_call_unavailable', 500, 'api_error', `no endpoint family serves ${modelKind} models`, {}, false);
  return endpoint;
}

export function internalCalls(requestLogs: () => RequestLogWriter | undefined): InternalCalls {
  return {
    async run(parent: InternalParent, request: InternalRequest, signal: AbortSignal): Promise<InternalAnswer> {
      const endpoint = endpointFor(parent, request.modelKind);
      let flow = flowsByEndpoint.get(endpoint);
      if (!flow) flowsByEndpoint.set(endpoint, (flow = flowFor(endpoint)));
      const { body } = request;
      const call = new KeptCall({ services: servicesFor(parent), config: parent.config, upstreams: parent.upstreams, auth: parent.auth, dialect: endpoint.pipeline!.dialect!, body, bodyBytes: jsonBytes(body), requestId: parent.requestId, log: parent.log, baseUrl: '', signal });
      const startedAt = Date.now();
      let error: GatewayError | undefined;
      try {
        await runCall(call, flow);
        return call.answer ?? { status: 500, body: undefined };
      } catch (err) {
        error = err instanceof GatewayError ? err : undefined;
        throw err;
      } finally {
        const log = requestLogs();
        const { entry } = call;
        const status = call.answer?.status ?? error?.statusCode ?? 500;
        if (log?.enabled) log.called({
          workspaceId: parent.auth.workspaceId, keyId: parent.auth.keyId, startedAt, latencyMs: Date.now() - startedAt, route: request.purpose.slice(0, 128), method: 'POST',
          model: entry?.model ?? String(body.model ?? '').slice(0, 128), channel: entry?.channel ?? '', status, errorType: error?.type ?? null, errorCode: error?.code ?? null,
          units: Number(entry?.units ?? 0), costMicros: Number(entry?.cost_micros ?? 0), currency: entry?.currency ?? '', requestId: parent.requestId,
        });
      }
    },
  };
}
