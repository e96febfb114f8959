// npm run demo: the gateway in front of a local fake upstream, with a fresh key printed, so a first request needs no provider key.
import { join } from 'node:path';
import { FakeUpstream } from '../../test/kit/fake-upstream.js';
import { installImages } from '../../test/kit/fake-images.js';
import { loadConfig } from '../compile/load-config.js';
import { createServices } from '../services.js';
import { buildApp } from '../app.js';
import { issueApiKey } from '../auth/keys.js';
import { newAdminToken } from '../admin/auth.js';
import { createWorkspace, findWorkspaceByName } from '../store/workspaces.js';
import { createPasswordLink, OWNER_LINK_SECONDS, passwordLinkUrl } from '../auth/password-links.js';
import { checkPortFree, portInUseMessage } from '../net/port-in-use.js';

const fake = await FakeUpstream.start();
fake.chat = { text: 'Hello! I am the demo upstream; your request went through the gateway.', usage: { prompt_tokens: 14, completion_tokens: 13 } };
installImages(fake);
process.env.DEMO_UPSTREAM_URL = `${fake.url}/v1`;
process.env.DEMO_UPSTREAM_HOST = new URL(fake.url).host;

// An admin token for this run: the config admits its hash (admin.tokens in demo/config.yaml).
const admin = newAdminToken();
process.env.DEMO_ADMIN_SHA256 = admin.sha256;

const configFile = join(import.meta.dirname, '..', '..', 'demo', 'config.yaml');
const config = await loadConfig(configFile);
const host = process.env.HOST || config.gateway.server.host;
const port = process.env.PORT ? Number(process.env.PORT) : config.gateway.server.port;
// A port already taken (npm start still running, say) is one line, before the demo's database is touched.
await checkPortFree(host, port).catch(async (err: unknown) => {
  const line = portInUseMessage(err, host, port, 'npm run demo');
  if (!line) throw err;
  console.error(line);
  await fake.close();
  process.exit(1);
});
const services = await createServices(config);
const app = await buildApp(services);
// Named as a first start names it, so the README's examples (`--workspace default`) work on the demo as written.
const workspace = (await findWorkspaceByName(services.db, 'default')) ?? (await createWorkspace(services.db, 'default'));
const { key } = await issueApiKey(services.db, workspace, { name: 'demo' });
const url = await app.listen({ host, port });

// The dashboard: until the demo's workspace has an owner, a one-time link that signs its owner up; then the sign-in page.
const owned = await services.db.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspace.id).where('role', '=', 'owner').executeTakeFirst();
const dashboard = owned
  ? `Dashboard: ${url}/dashboard/login`
  : `Dashboard: ${url}/dashboard (first, set the owner's password of workspace "default": ${passwordLinkUrl(url, await createPasswordLink(services.db, { workspaceId: workspace.id, role: 'owner' }, OWNER_LINK_SECONDS))})`;

// What `npm run admin` needs to act on this demo: its config, and the data folder when one was chosen for this run.
const shellWord = (text: string) => (/^[\w./:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);
const cliEnvironment = [`GATEWAY_CONFIG=${shellWord(configFile)}`, ...(process.env.DEMO_DATA_DIR ? [`DEMO_DATA_DIR=${shellWord(process.env.DEMO_DATA_DIR)}`] : [])].join(' ');

console.log(`
Gateway demo listening at ${url} (fake upstream at ${fake.url}).
API key (new each run), for the README's examples:

  export KEY=${key}

The admin API (/admin/v1), with a token for this run:

  export ADMIN="Authorization: Bearer ${admin.token}"; GW=${url}/admin/v1

The admin CLI (npm run admin), on the demo's database rather than config.yaml's:

  export ${cliEnvironment}

${dashboard}

Try:
  curl -s ${url}/api/v1/chat/completions \\
    -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \\
    -d '{"model": "demo-chat", "messages": [{"role": "user", "content": "Hello"}]}'

  curl -s ${url}/api/v1/responses \\
    -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \\
    -d '{"model": "demo-chat", "input": "Hello"}'                       # Responses, translated to chat

  curl -s ${url}/api/v1/images/generations \\
    -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \\
    -d '{"model": "demo-image", "prompt": "a lighthouse at dusk"}'      # archived: open its svc_url

Ctrl-C to stop.`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await app.close();
    await fake.close();
    process.exit(0);
  });
}
