// POST /v1/videos: a video task on the model's channel (JSON or multipart), answered at once as `submitting`.
import { taskCreateHandler } from '../tasks/create.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => taskCreateHandler(services, { kind: 'video', schema: 'requests/videos' });

export default create;
