// The dashboard in a real browser (Debian's Chromium through playwright-core): what an owner, an admin and a member
// can each do, with a screenshot of every page saved under test/artifacts/.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, addUser, gradientPng, startDashboardGateway } from './kit/dashboard.js';
import { repoRoot, type TestGateway } from './kit/gateway.js';

const artifacts = join(repoRoot, 'test', 'artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const PALETTE: [[number, number, number], [number, number, number]][] = [
  [[255, 94, 58], [255, 205, 2]],
  [[38, 128, 235], [124, 226, 255]],
  [[82, 196, 26], [0, 92, 75]],
  [[167, 77, 255], [255, 120, 203]],
  [[20, 30, 60], [90, 140, 255]],
];

let env: Awaited<ReturnType<typeof startDashboardGateway>>;
let gw: TestGateway;
let browser: Browser;
let api: OpenAI;
let uploadId: string;
const generated: string[] = [];

async function generate(colours: (typeof PALETTE)[number], prompt: string): Promise<string> {
  env.script.image = gradientPng(...colours);
  const res = await api.images.generate({ model: 'fake-image', prompt });
  const id = (res.data![0] as unknown as { svc_file_id: string }).svc_file_id;
  generated.push(id);
  return id;
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  env = await startDashboardGateway();
  gw = env.gw;
  api = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner']]);
  await addUser(gw.services, 'admin@example.com', [[gw.workspace, 'admin']]);
  await addUser(gw.services, 'member@example.com', [[gw.workspace, 'member']]);
  for (const [i, colours] of PALETTE.entries()) await generate(colours, `picture ${i}`);
  uploadId = (await api.files.create({ file: await toFile(gradientPng([0, 0, 0], [255, 255, 255]), 'reference-upload.png', { type: 'image/png' }), purpose: 'vision' })).id;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

async function signIn(email: string, viewport = { width: 1200, height: 860 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${gw.url}/dashboard/files`);
  expect(new URL(page.url()).pathname).toBe('/dashboard/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/files');
  return page;
}

/** Waits until every image on the page has loaded, so a screenshot shows the pictures. */
async function imagesLoaded(page: Page): Promise<number> {
  await page.waitForFunction(() => [...document.images].every((img) => img.complete));
  return page.evaluate(() => [...document.images].filter((img) => img.naturalWidth > 0).length);
}

describe('the Files page', () => {
  it('shows an owner the generated images and not the upload, previews one, and deletes it after a confirmation', async () => {
    const page = await signIn('owner@example.com');
    const tiles = page.locator('#files li');
    await expect.poll(() => tiles.count()).toBe(PALETTE.length);
    expect(await imagesLoaded(page)).toBe(PALETTE.length);
    expect(await page.content()).not.toContain(uploadId);
    await page.screenshot({ path: join(artifacts, 'files.png'), fullPage: true });
    // The README's picture is refreshed on request only, so a test run leaves the working tree clean.
    if (process.env.UPDATE_SCREENSHOTS) copyFileSync(join(artifacts, 'files.png'), join(repoRoot, 'docs', 'images', 'dashboard-files.png'));

    const newest = generated[generated.length - 1];
    await page.locator(`#tile-${newest} a.thumb`).click();
    await page.waitForURL(`**/dashboard/files/${newest}`);
    expect(await imagesLoaded(page)).toBe(1);
    await expect.poll(() => page.locator('.details').textContent()).toContain('fake-image');
    await page.screenshot({ path: join(artifacts, 'file-preview.png'), fullPage: true });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete file' }).click();
    await page.waitForURL('**/dashboard/files');
    await expect.poll(() => tiles.count()).toBe(PALETTE.length - 1);
    expect(await page.locator(`#tile-${newest}`).count()).toBe(0);
    const gone = await fetch(`${gw.url}/v1/files/${newest}`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(gone.status).toBe(404);
    await page.context().close();
  });

  it('lets an admin delete from the grid, and keeps the tile when the confirmation is dismissed', async () => {
    const page = await signIn('admin@example.com');
    const target = generated[0];
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.locator(`#tile-${target} button`).click();
    expect(await page.locator(`#tile-${target}`).count()).toBe(1);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator(`#tile-${target} button`).click();
    await expect.poll(() => page.locator(`#tile-${target}`).count()).toBe(0);
    await page.context().close();
  });

  it('shows a member no delete button, answers a delete POST forged from their session with 403, and keeps the keys page from them', async () => {
    const page = await signIn('member@example.com');
    expect(await imagesLoaded(page)).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: /delete/i }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /API keys/ }).count()).toBe(0);
    await page.screenshot({ path: join(artifacts, 'files-member.png'), fullPage: true });
    const target = generated[1];
    const token = await page.locator('form[action="/dashboard/logout"] input[name=_csrf]').inputValue();
    const forged = await page.request.post(`${gw.url}/dashboard/files/${target}/delete`, { form: { _csrf: token } });
    expect(forged.status()).toBe(403);
    const still = await fetch(`${gw.url}/v1/files/${target}`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(still.status).toBe(200);
    const keys = await page.goto(`${gw.url}/dashboard/settings/keys`);
    expect(keys!.status()).toBe(403);
    expect(await page.locator('.error').textContent()).toContain('only a workspace owner or admin');
    await page.context().close();
  });

  it('fits every page on a phone screen', async () => {
    const page = await signIn('owner@example.com', { width: 390, height: 844 });
    await imagesLoaded(page);
    for (const [path, shot] of [['/dashboard/files', 'files-phone'], ['/dashboard/settings/keys', 'keys-phone'], ['/dashboard/usage', 'usage-phone']]) {
      await page.goto(`${gw.url}${path}`);
      await imagesLoaded(page);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: join(artifacts, `${shot}.png`), fullPage: true });
    }
    await page.context().close();
  });
});

describe('Settings > API keys', () => {
  it('creates a key with a scope and a cap that works against /v1/models, then revokes it so it gets 401', async () => {
    const page = await signIn('owner@example.com');
    await page.getByRole('link', { name: /API keys/ }).click();
    await page.waitForURL('**/dashboard/settings/keys');
    await page.getByLabel('Name (optional)').fill('browser test');
    await page.getByLabel('llm.chat').check();
    await page.getByLabel('Spending cap in USD (optional)').fill('12.50');
    await page.getByLabel('Cap resets').selectOption('daily');
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('#new-key').inputValue();
    expect(key).toMatch(/^sk-gw-/);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    const row = page.locator('tr', { hasText: 'browser test' });
    expect(await row.textContent()).toContain('llm.chat');
    expect(await row.locator('input[name=cap]').inputValue()).toBe('12.50');
    expect(await row.locator('select[name=period]').inputValue()).toBe('daily');
    expect(await row.textContent()).toContain('$0.00 today');
    await page.screenshot({ path: join(artifacts, 'keys.png'), fullPage: true });

    const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);

    await row.locator('input[name=cap]').fill('3');
    await row.locator('select[name=period]').selectOption('weekly');
    await row.getByRole('button', { name: 'Set' }).click();
    await expect
      .poll(async () => await gw.services.db.selectFrom('api_keys').select(['spend_cap_micros', 'spend_cap_period']).where('name', '=', 'browser test').executeTakeFirst())
      .toEqual({ spend_cap_micros: 3_000_000, spend_cap_period: 'weekly' });
    await expect.poll(() => page.locator('tr', { hasText: 'browser test' }).textContent()).toContain('$0.00 this week');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('tr', { hasText: 'browser test' }).getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.locator('tr', { hasText: 'browser test' }).textContent()).toContain('revoked');
    const refused = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    await page.screenshot({ path: join(artifacts, 'keys-revoked.png'), fullPage: true });
    await page.context().close();
  });

  it("shows why a key row's cap was refused, keeps the row as it was, and clears the message once a cap is set", async () => {
    const page = await signIn('owner@example.com');
    await page.goto(`${gw.url}/dashboard/settings/keys`);
    await page.getByLabel('Name (optional)').fill('cap refusal');
    await page.getByRole('button', { name: 'Create key' }).click();
    const row = () => page.locator('tr', { hasText: 'cap refusal' });
    await row().locator('input[name=cap]').fill('ten dollars');
    await row().getByRole('button', { name: 'Set' }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.count()).toBe(1);
    expect(await alert.textContent()).toContain('the spending cap must be an amount in USD like 25.00');
    expect(await row().locator('input[name=cap]').count()).toBe(1);
    await row().locator('input[name=cap]').fill('4');
    await row().getByRole('button', { name: 'Set' }).click();
    await expect.poll(() => alert.count()).toBe(0);
    expect((await gw.services.db.selectFrom('api_keys').select('spend_cap_micros').where('name', '=', 'cap refusal').executeTakeFirstOrThrow()).spend_cap_micros).toBe(4_000_000);
    await page.context().close();
  });
});

describe('Usage', () => {
  it('draws the cost and tokens of the last 30 days and the tables by model and key', async () => {
    const page = await signIn('admin@example.com');
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL('**/dashboard/usage');
    const bars = page.locator('#cost-chart rect');
    expect(await bars.count()).toBe(30);
    const heights = await bars.evaluateAll((rects) => rects.map((r) => r.getBoundingClientRect().height));
    expect(heights[29]).toBeGreaterThan(50);
    expect(heights.slice(0, 29).every((h) => h === 0)).toBe(true);
    expect(await page.locator('table').first().textContent()).toContain('fake-image');
    expect(await page.locator('.stats').textContent()).toContain(`$${(PALETTE.length * 0.04).toFixed(2)}`);
    await page.screenshot({ path: join(artifacts, 'usage.png'), fullPage: true });
    await page.context().close();
  });
});

describe('what a person sees on every page', () => {
  it('loads every page of an owner without a console error or a failed request (the favicon included)', async () => {
    const icon = await fetch(`${gw.url}/dashboard/assets/favicon.svg`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    const page = await signIn('owner@example.com');
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
    page.on('response', (response) => { if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`); });
    // A lazy tile (or the favicon, which Chromium fetches after the page) still loading when the test goes on to the next
    // page is cancelled by that navigation (net::ERR_ABORTED): the test's pace, not a failure of the page (the favicon's
    // own answer is checked above, and any answer of 400 or more counts). Every other failure counts.
    page.on('requestfailed', (request) => {
      const why = request.failure()?.errorText ?? '';
      if (why === 'net::ERR_ABORTED' && (request.resourceType() === 'image' || new URL(request.url()).pathname === '/dashboard/assets/favicon.svg')) return;
      problems.push(`failed ${request.url()} ${why}`);
    });
    for (const path of ['/dashboard/files', `/dashboard/files/${generated[2]}`, '/dashboard/usage', '/dashboard/logs', '/dashboard/settings/keys', '/dashboard/settings/webhooks', '/dashboard/settings/audit']) {
      await page.goto(`${gw.url}${path}`, { waitUntil: 'networkidle' });
      await imagesLoaded(page);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('keeps what was typed in a refused create-key form, and in a refused webhook form', async () => {
    const page = await signIn('owner@example.com');
    await page.goto(`${gw.url}/dashboard/settings/keys`);
    await page.getByLabel('Name (optional)').fill('kept after a refusal');
    await page.getByLabel('llm.chat').check();
    await page.getByLabel('Spending cap in USD (optional)').fill('ten dollars');
    await page.getByLabel('Cap resets').selectOption('monthly');
    await page.getByLabel('Expires').selectOption('90');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.getByRole('alert').count()).toBe(1);
    expect(await page.getByLabel('Name (optional)').inputValue()).toBe('kept after a refusal');
    expect(await page.getByLabel('llm.chat').isChecked()).toBe(true);
    expect(await page.getByLabel('Spending cap in USD (optional)').inputValue()).toBe('ten dollars');
    expect(await page.getByLabel('Cap resets').inputValue()).toBe('monthly');
    expect(await page.getByLabel('Expires').inputValue()).toBe('90');
    expect(await page.locator('tr', { hasText: 'kept after a refusal' }).count()).toBe(0);

    await page.goto(`${gw.url}/dashboard/settings/webhooks`);
    const hostile = 'http://example.com/"><script>alert(1)</script>';
    await page.getByLabel('URL (https)').fill(hostile);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.getByRole('alert').count()).toBe(1);
    expect(await page.getByLabel('URL (https)').inputValue()).toBe(hostile);
    expect(await page.locator('script:not([src])').count()).toBe(0);
    await page.context().close();
  });

  it('shows each audit action on one line, at a width where long ids still wrap', async () => {
    const page = await signIn('owner@example.com', { width: 760, height: 860 });
    await page.goto(`${gw.url}/dashboard/settings/keys`);
    await page.getByLabel('Name (optional)').fill('audited');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key').waitFor();
    await page.goto(`${gw.url}/dashboard/settings/audit`);
    const actions = page.locator('table.audit tbody td:nth-child(3) code');
    expect(await actions.count()).toBeGreaterThan(0);
    const lines = await actions.evaluateAll((codes) => codes.map((c) => Math.round(c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight || '20'))));
    expect(lines.every((n) => n <= 1)).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(760);
    await page.screenshot({ path: join(artifacts, 'audit.png'), fullPage: true });
    await page.context().close();
  });
});
