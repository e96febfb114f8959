// POST /v1/<family>/<action> (e.g. /api/v1/runway/text_to_image): a task on the route a protocol declares, read at GET /v1/tasks/{id}.
import { taskCreateHandler } from '../tasks/create.js';
import type { TaskKind } from '../tasks/spec.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services, endpoint }) =>
  taskCreateHandler(services, { kind: endpoint.options!.kind as TaskKind, route: endpoint.path, schema: 'requests/tasks-text-to-image' });

export default create;
