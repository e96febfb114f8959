// POST /v1/<family>/<action> (e.g. /api/v1/runway/text_to_image): a task on the route a protocol declares, read at GET /v1/tasks/{id}.
import { httpPipeline } from '../pipeline/http-adapter.js';
import { taskDialect } from '../tasks/create.js';
import type { TaskKind } from '../tasks/spec.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services, endpoint }) =>
  httpPipeline(services, 'tasks', taskDialect(services, { kind: endpoint.options!.kind as TaskKind, route: endpoint.path, schema: 'requests/tasks-text-to-image' }));

export default create;
