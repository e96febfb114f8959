// A protocol's task declarations (the `tasks` section, schemas/protocol-tasks.schema.json), found by route and rendered as data.
import type { ModelRoute, ProtocolConfig, TaskSpec } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { renderer, type Renderer } from '../engine/translate/render.js';

export type { TaskSpec };
export type MappedStatus = TaskSpec['poll']['statusMap'][string];

/** A task's mappings, compiled at load, as renderers. */
export interface CompiledTask {
  name: string;
  spec: TaskSpec;
  request: Renderer;
  id: Renderer;
  status: Renderer;
  progress?: Renderer;
  error?: Renderer;
  url?: Renderer;
  base64?: Renderer;
  usage?: Renderer;
  /** The success check of a 2xx answer (`failure`). */
  failure?: Renderer;
  chooseSubmit?: Renderer;
  save?: Renderer;
  choosePoll?: Renderer;
  pollUrl?: Renderer;
  stepParams?: Renderer;
  downloadUrl?: Renderer;
}

const compiled = new WeakMap<TaskSpec, CompiledTask>();

function compile(config: LoadedConfig, protocol: ProtocolConfig, name: string, spec: TaskSpec): CompiledTask {
  let task = compiled.get(spec);
  if (task) return task;
  const at = (pointer: string) => `${protocol.file} /tasks/${name}/${pointer}`;
  const optional = (node: unknown, pointer: string) => (node === undefined ? undefined : renderer(config, node, at(pointer)));
  task = {
    name,
    spec,
    request: renderer(config, spec.submit.request, at('submit/request')),
    id: renderer(config, spec.submit.id, at('submit/id')),
    status: renderer(config, spec.poll.status, at('poll/status')),
    progress: optional(spec.poll.progress, 'poll/progress'),
    error: optional(spec.poll.error, 'poll/error'),
    url: optional(spec.result.url, 'result/url'),
    base64: optional(spec.result.base64, 'result/base64'),
    usage: optional(spec.result.usage, 'result/usage'),
    failure: optional(spec.failure, 'failure'),
    chooseSubmit: optional(spec.submit.choose, 'submit/choose'),
    save: optional(spec.submit.save, 'submit/save'),
    choosePoll: optional(spec.poll.choose, 'poll/choose'),
    pollUrl: optional(spec.poll.url, 'poll/url'),
    stepParams: optional(spec.result.step?.params, 'result/step/params'),
    downloadUrl: optional(spec.result.download?.url, 'result/download/url'),
  };
  compiled.set(spec, task);
  return task;
}

/** The task of `route`'s protocol serving `want`: the kind's standard route (no `route` declared) or a family route path. */
export function taskFor(config: LoadedConfig, route: ModelRoute, want: { kind: string; route?: string }): CompiledTask | undefined {
  const tasks = route.protocol.tasks ?? {};
  for (const [name, spec] of Object.entries(tasks)) {
    if (spec.kind === want.kind && spec.route === want.route) return compile(config, route.protocol, name, spec);
  }
  return undefined;
}

/** The task named `name` of `route`'s protocol (a stored task's), if the protocol still declares it. */
export function taskNamed(config: LoadedConfig, route: ModelRoute, name: string): CompiledTask | undefined {
  const spec = (route.protocol.tasks ?? {})[name];
  return spec ? compile(config, route.protocol, name, spec) : undefined;
}
