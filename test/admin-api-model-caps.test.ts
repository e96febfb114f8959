// Caps on one model through the admin API (/admin/v1/{keys,workspaces}/{id}/model_caps): set, shown with the spend of
// their current period, enforced on the next request, removed; audited; bad input a typed 400, unknown ids 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { commands as keyCommands } from '../src/cli/admin/keys.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

// One cent a request on either model.
const models = testModels.twoFlatChats;

const ops = newAdminToken();
let gw: TestGateway;
let fake: FakeUpstream;
let api: AdminApi;
const clock = { at: Date.parse('2026-11-23T12:00:00Z') };

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    listen: true,
    overrides: { now: () => clock.at },
  });
  api = await adminApi(gw.url, ops.token);
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const chat = (key: string, model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => r.status);

const auditOf = async (targetId: string) =>
  (await gw.services.db.selectFrom('audit_log').selectAll().where('target_id', '=', targetId).orderBy('id').execute()).map((r) => ({ actor: r.actor_id, action: r.action, before: r.before && JSON.parse(r.before), after: r.after && JSON.parse(r.after) }));

describe('caps on one model through the admin API', () => {
  it("sets a key's daily cap on one model, shows its spend, enforces it, removes it, and audits both changes", async () => {
    const key = (await api('POST', `/workspaces/${gw.workspace.id}/keys`, { body: { name: 'model-capped' } })).body;
    const set = await api('PUT', `/keys/${key.id}/model_caps`, { body: { model: 'other-chat', spend_cap: 0.01, spend_cap_period: 'daily' } });
    expect([set.status, set.body]).toEqual([200, { model: 'other-chat', spend_cap: 0.01, spend_cap_period: 'daily', spent_in_period: 0, period_resets_at: '2026-11-24T00:00:00.000Z' }]);
    expect(await chat(key.key, 'other-chat')).toBe(200);
    expect(await chat(key.key, 'other-chat')).toBe(402);
    expect(await chat(key.key, 'flat-chat')).toBe(200);
    const listed = await api('GET', `/keys/${key.id}/model_caps`);
    expect(listed.body.data).toEqual([{ model: 'other-chat', spend_cap: 0.01, spend_cap_period: 'daily', spent_in_period: 0.01, period_resets_at: '2026-11-24T00:00:00.000Z' }]);
    // The key's own view: no cap on all models, so all-time spend.
    expect((await api('GET', `/keys/${key.id}`)).body).toMatchObject({ spend_cap: null, spent: 0.02, spent_in_period: 0.02, period_resets_at: null });

    const removed = await api('PUT', `/keys/${key.id}/model_caps`, { body: { model: 'other-chat', spend_cap: null } });
    expect([removed.status, removed.body.spend_cap, removed.body.period_resets_at]).toEqual([200, null, null]);
    expect((await api('GET', `/keys/${key.id}/model_caps`)).body.data).toEqual([]);
    expect(await chat(key.key, 'other-chat')).toBe(200);
    // Removing a cap that is not there changes nothing and writes no row.
    expect((await api('PUT', `/keys/${key.id}/model_caps`, { body: { model: 'other-chat', spend_cap: null } })).status).toBe(200);
    expect((await auditOf(key.id)).slice(1)).toEqual([
      { actor: 'ops', action: 'key.model_cap', before: null, after: { model: 'other-chat', spend_cap: 0.01, spend_cap_period: 'daily' } },
      { actor: 'ops', action: 'key.model_cap', before: { model: 'other-chat', spend_cap: 0.01, spend_cap_period: 'daily' }, after: null },
    ]);
  });

  it("sets a workspace's cap on one model, keeps its period when only the amount changes, and enforces it for every key", async () => {
    const ws = (await api('POST', '/workspaces', { body: { name: 'model-caps' } })).body;
    const key = (await api('POST', `/workspaces/${ws.id}/keys`, { body: {} })).body;
    expect((await api('PUT', `/workspaces/${ws.id}/model_caps`, { body: { model: 'flat-chat', spend_cap: 0.01, spend_cap_period: 'monthly' } })).body).toMatchObject({ spend_cap_period: 'monthly', period_resets_at: '2026-12-01T00:00:00.000Z' });
    expect(await chat(key.key, 'flat-chat')).toBe(200);
    expect(await chat(key.key, 'flat-chat')).toBe(402);
    const raised = await api('PUT', `/workspaces/${ws.id}/model_caps`, { body: { model: 'flat-chat', spend_cap: 0.02 } });
    expect(raised.body).toEqual({ model: 'flat-chat', spend_cap: 0.02, spend_cap_period: 'monthly', spent_in_period: 0.01, period_resets_at: '2026-12-01T00:00:00.000Z' });
    expect(await chat(key.key, 'flat-chat')).toBe(200);
    expect((await auditOf(ws.id)).map((r) => [r.action, r.before?.spend_cap ?? null, r.after?.spend_cap ?? null])).toEqual([
      ['workspace.create', null, null],
      ['workspace.model_cap', null, 0.01],
      ['workspace.model_cap', 0.01, 0.02],
    ]);
    // The CLI lists the workspace and its key with their spend.
    const lines: string[] = [];
    const run = (name: string, values: Record<string, string | boolean>) => keyCommands.find((c) => c.name === name)!.run({ db: gw.services.db, config: gw.services.config, positionals: [], values, print: (l) => lines.push(l) });
    await run('workspace list', {});
    await run('key list', { workspace: 'model-caps' });
    expect(lines.find((l) => l.includes('model-caps'))).toMatch(/cap=-  spent=0\.02$/);
    expect(lines.at(-1)).toContain(`${key.id}  `);
    expect(lines.at(-1)).toContain('cap=-  spent=0.02');
  });

});

describe('bad input to the model caps', () => {
  it('answers a bad model id, amount or period with a typed 400 naming it, an unknown key or workspace with 404, and changes nothing', async () => {
    const key = (await api('POST', `/workspaces/${gw.workspace.id}/keys`, { body: {} })).body;
    const rowsBefore = (await auditOf(key.id)).length;
    const cases: [unknown, string, string?][] = [
      [{ model: 'no-such-model', spend_cap: 1 }, 'model', 'model_not_found'],
      [{ model: 'has space', spend_cap: 1 }, 'model'],
      [{ model: '', spend_cap: 1 }, 'model'],
      [{ model: 'x'.repeat(129), spend_cap: 1 }, 'model'],
      [{ model: 'flat-chat', spend_cap: -1 }, 'spend_cap'],
      [{ model: 'flat-chat', spend_cap: 0.0000001 }, 'spend_cap'],
      [{ model: 'flat-chat', spend_cap: '5' }, 'spend_cap'],
      [{ model: 'flat-chat' }, 'spend_cap'],
      [{ model: 'flat-chat', spend_cap: 1, spend_cap_period: 'hourly' }, 'spend_cap_period'],
      [{ model: 'flat-chat', spend_cap: 1, colour: 'red' }, 'colour'],
    ];
    for (const [body, param, code] of cases) {
      for (const path of [`/keys/${key.id}/model_caps`, `/workspaces/${gw.workspace.id}/model_caps`]) {
        const res = await api('PUT', path, { body });
        expect([res.status, res.body.error.type, res.body.error.param], `${path} ${JSON.stringify(body)}`).toEqual([400, 'invalid_request_error', param]);
        if (code) expect(res.body.error.code).toBe(code);
      }
    }
    const good = { model: 'flat-chat', spend_cap: 1 };
    expect((await api('PUT', `/keys/key_${'0'.repeat(20)}/model_caps`, { body: good })).body.error.code).toBe('key_not_found');
    expect((await api('PUT', '/workspaces/ws_nope/model_caps', { body: good })).body.error.code).toBe('workspace_not_found');
    expect((await api('GET', '/keys/key_nope/model_caps')).status).toBe(404);
    expect((await auditOf(key.id)).length).toBe(rowsBefore);
    expect((await api('GET', `/keys/${key.id}/model_caps`)).body.data).toEqual([]);
    expect((await api('GET', `/workspaces/${gw.workspace.id}/model_caps`)).body.data).toEqual([]);
  });
});
