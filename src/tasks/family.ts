// A task family as its catalogue entry declares it (`pipeline.task`, flow `task`): the wire object, the id prefix, the
// archive purpose, the scope and what a task is billed by. Nothing here names a family: every one is data.
import type { EndpointConfig } from '../config/types.js';

export type TaskFamilySpec = NonNullable<NonNullable<EndpointConfig['pipeline']>['task']>;
export type TaskBill = TaskFamilySpec['bill'];

export interface TaskFamily extends TaskFamilySpec {
  /** The model kind its tasks serve (the entry's modelKind). */
  kind: string;
  /** The scope a key needs to create or read its tasks. */
  scope: string | null;
}

/** The task family an entry declares, if it declares one. */
export function taskFamilyOf(endpoint: EndpointConfig): TaskFamily | undefined {
  const task = endpoint.pipeline?.flow === 'task' ? endpoint.pipeline.task : undefined;
  return task && endpoint.modelKind ? { ...task, kind: endpoint.modelKind, scope: endpoint.scope ?? null } : undefined;
}

const byObject = new WeakMap<readonly EndpointConfig[], ReadonlyMap<string, TaskFamily>>();

/** Every task family of a config's endpoints by the wire object its tasks answer as (built once per config). */
export function taskFamilies(endpoints: readonly EndpointConfig[]): ReadonlyMap<string, TaskFamily> {
  let families = byObject.get(endpoints);
  if (!families) {
    const found = new Map<string, TaskFamily>();
    for (const endpoint of endpoints) {
      const family = taskFamilyOf(endpoint);
      if (family && !found.has(family.object)) found.set(family.object, family);
    }
    byObject.set(endpoints, (families = found));
  }
  return families;
}

/** The event a finished task of `object` sets off (`video.task` completed: `video.completed`). */
export const taskEventOf = (object: string, status: 'completed' | 'failed') => `${object.replace(/\.task$/, '')}.${status}`;
