// GET /healthz: the process is up.
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = () => async () => ({ status: 'ok' });
export default create;
