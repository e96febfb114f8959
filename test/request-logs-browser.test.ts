// The Logs page in a real browser (Debian's Chromium through playwright-core): a mix of requests listed newest first as
// the clients saw them, the filter form, a row's detail and the CSV export; a screenshot saved under test/artifacts/.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueApiKey, type IssuedKey } from '../src/auth/keys.js';
import { addUser, PASSWORD } from './kit/dashboard.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, repoRoot, startGateway, testModels, type TestGateway } from './kit/gateway.js';

const artifacts = join(repoRoot, 'test', 'artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const models = `${testModels.fakeChat}  - id: flat-chat
    upstream: upstream-chat
    kind: chat
    price: { perRequest: 0.01 }
  - id: broken-chat
    upstream: upstream-broken
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
`;

let fake: FakeUpstream;
let gw: TestGateway;
let browser: Browser;
let a: IssuedKey;
let b: IssuedKey;
/** What each client saw, newest first. */
const seen: { requestId: string; status: number; model: string; cost: number }[] = [];

async function send(key: IssuedKey, model: string, more: object = {}, path = '/v1/chat/completions') {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }], ...more }),
  });
  const text = await res.text();
  const cost = res.status !== 200 ? 0 : 'stream' in more ? Number(/"cost":\{"amount":([0-9.e-]+)/.exec(text)?.[1]) : JSON.parse(text).cost.amount;
  seen.unshift({ requestId: res.headers.get('x-request-id')!, status: res.status, model, cost });
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fake = await FakeUpstream.start();
  fake.route((req, res) => {
    if ((req.body as { model?: string } | undefined)?.model !== 'upstream-broken') return false;
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'upstream broke' } }));
    return true;
  });
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) }, listen: true });
  a = await issueApiKey(gw.services.db, gw.workspace, { name: 'alpha' });
  b = await issueApiKey(gw.services.db, gw.workspace, { name: 'beta' });
  await send(a, 'fake-chat');
  await send(b, 'flat-chat');
  await send(a, 'fake-chat', { messages: 'not a list' });
  await send(a, 'broken-chat');
  await send(b, 'fake-chat', { stream: true, stream_options: { include_usage: true } });
  await send(a, 'fake-chat', {}, '/v1/messages');
  // Rows land with the settlement batch after the last answer: wait for all of them (a read commits what is queued).
  await vi.waitFor(async () => {
    const rows = await gw.services.db.selectFrom('request_logs').select(gw.services.db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(seen.length);
  }, { timeout: 5_000, interval: 20 });
  await addUser(gw.services, 'member@example.com', [[gw.workspace, 'member']]);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await fake?.close();
});

describe('the Logs page in Chromium', () => {
  it('lists, filters, opens and exports the requests as the clients saw them', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel('Email').fill('member@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/files');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Logs' }).click();
    await page.waitForURL('**/dashboard/logs');

    const rows = page.locator('table.logs tbody tr');
    await expect.poll(() => rows.count()).toBe(seen.length);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    for (const [i, s] of seen.entries()) {
      const [, status, , model, , cost, latency] = cells[i];
      expect(status.split(' ')[0]).toBe(String(s.status));
      expect(model).toBe(s.model);
      expect(Number(cost.split(' ')[0])).toBeCloseTo(s.cost, 9);
      expect(latency).toMatch(/^\d+ ms$/);
    }
    await page.screenshot({ path: join(artifacts, 'logs.png'), fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS) copyFileSync(join(artifacts, 'logs.png'), join(repoRoot, 'docs', 'images', 'dashboard-logs.png'));

    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/dashboard/logs?status=error**');
    await expect.poll(() => rows.count()).toBe(seen.filter((s) => s.status >= 400).length);
    await page.getByLabel('Key').selectOption(b.id);
    await page.getByLabel('Status').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(`**/dashboard/logs?**key=${b.id}**`);
    await expect.poll(() => rows.count()).toBe(2);

    const csvHref = await page.locator('#export-csv').getAttribute('href');
    expect(csvHref).toContain(`key=${b.id}`);
    const csv = await (await page.request.get(`${gw.url}${csvHref}`)).text();
    const [header, ...lines] = csv.trim().split('\r\n');
    const columns = header.split(',');
    const parsed = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [columns[i], v])));
    expect(parsed.map((r) => r.request_id)).toEqual([seen[1].requestId, seen[4].requestId]);
    expect(parsed.map((r) => Number(r.cost))).toEqual([seen[1].cost, seen[4].cost]);

    await rows.first().getByRole('link').click();
    await page.waitForURL('**/dashboard/logs/log_*');
    expect(await page.locator('#request-id').textContent()).toBe(seen[1].requestId);
    expect(await page.locator('#key-name').textContent()).toBe('beta');
    expect(Number(await page.locator('#output-tokens').textContent())).toBeGreaterThan(0);
    expect(await page.locator('#ttft').textContent()).toMatch(/^\d+ ms$/);
    expect(await page.content()).not.toContain('hello there');
    await page.screenshot({ path: join(artifacts, 'log-detail.png'), fullPage: true });
    await context.close();
  });
});
