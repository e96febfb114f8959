import { afterAll, beforeAll, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
const ops = newAdminToken();
let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({ channels: {}, extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`, listen: true }); });
afterAll(async () => gw?.close());
it('probe', async () => {
  const res = await Promise.all(Array.from({ length: 40 }, (_, i) => fetch(`${gw.url}/admin/v1/workspaces/${gw.workspace.id}/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${ops.token}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ url: `https://hooks.example.com/${i}` }) }).then(async (r) => [r.status, await r.text()] as const)));
  console.log(res.map((r) => r[0]).join(','), res.filter((r) => r[0] >= 500).map((r) => r[1]));
  const n = await gw.services.db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  console.log(n);
});
