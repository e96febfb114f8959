// POST /v1/videos: a video task on the model's channel (JSON or multipart), answered at once as `submitting`.
import { httpPipeline } from '../pipeline/http-adapter.js';
import { taskDialect } from '../tasks/create.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => httpPipeline(services, 'tasks', taskDialect(services, { kind: 'video', schema: 'requests/videos' }));

export default create;
