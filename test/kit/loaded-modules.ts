// Run in a child process (node --import tsx --import ./test/kit/loaded-modules.ts): records every module URL the
// process resolves, so a test can tell which packages a code path loaded. `loadedModules()` lists them so far.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const loaded: string[] = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (url: string) => loaded.push(url));
port1.unref();

const hooks = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] });

/** Module URLs resolved so far; waits a turn for the hook thread's last messages. */
export async function loadedModules(): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return [...loaded];
}
(globalThis as { loadedModules?: typeof loadedModules }).loadedModules = loadedModules;
