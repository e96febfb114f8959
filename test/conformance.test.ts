// The conformance kit: every shipped task protocol (and, through `npm run check-protocol`, an operator's) runs the same
// scenarios against a fake of its vendor built from its fixture (test/conformance/<protocol>.yaml): completed (archived
// bytes and cost), failed and filtered (the reason, nothing billed), 429 and 5xx while polling (backs off, one submit),
// and a result URL on a private address (refused, never fetched).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installVendorFake, mediaBytes, type Scenario, type VendorFake, type VendorFixture } from './kit/vendor-fake.js';
import { tasksConfig, waitFor } from './kit/tasks.js';

const fixturesDir = join(repoRoot, 'test', 'conformance');
/** Set by `npm run check-protocol -- <protocol.yaml> --fixture <fixture.yaml>`: that pair only. */
const operatorProtocol = process.env.CHECK_PROTOCOL_FILE;
const operatorFixture = process.env.CHECK_PROTOCOL_FIXTURE;
const fixtureFiles = operatorFixture ? [resolve(operatorFixture)] : readdirSync(fixturesDir).filter((f) => f.endsWith('.yaml')).map((f) => join(fixturesDir, f));

const taskProtocols = () =>
  readdirSync(join(repoRoot, 'channels', 'protocols'))
    .filter((f) => f.endsWith('.yaml'))
    .filter((f) => (parse(readFileSync(join(repoRoot, 'channels', 'protocols', f), 'utf8')) as { tasks?: object }).tasks)
    .map((f) => basename(f, '.yaml'));

if (!operatorFixture) {
  describe('the conformance kit', () => {
    it('has a fixture for every shipped task protocol', () => {
      const covered = fixtureFiles.map((f) => (parse(readFileSync(f, 'utf8')) as VendorFixture).protocol);
      expect(taskProtocols().filter((p) => !covered.includes(p))).toEqual([]);
    });
  });
}

/** The operator's protocol file, and its mapping fixtures when they sit beside it in tests/ as the shipped ones do. */
function operatorFiles(protocol: string): Record<string, string> {
  const name = basename(protocol);
  const mappings = join(dirname(protocol), 'tests', name);
  return { [name]: readFileSync(protocol, 'utf8'), ...(existsSync(mappings) && { [`tests/${name}`]: readFileSync(mappings, 'utf8') }) };
}

function channelYaml(fixture: VendorFixture, origin: string): string {
  return `id: kit\nprotocol: ${fixture.protocol}\nbaseUrl: ${origin}${fixture.basePath}\ncredential: { env: KIT_CREDENTIAL, secretEnv: KIT_SECRET }\nmodels:\n  - ${JSON.stringify(fixture.model)}\n`;
}

/** Whether the vendor names the media by a URL the kit can move to a private address (not a download operation). */
const namesMediaUrl = (fixture: VendorFixture) => JSON.stringify([fixture.poll.completed, fixture.step?.answer]).includes('{{ media }}');

for (const file of fixtureFiles) {
  const fixture = parse(readFileSync(file, 'utf8')) as VendorFixture;
  describe(`task protocol ${fixture.protocol} (${basename(file)})`, () => {
    let upstream: FakeUpstream;
    let gw: TestGateway;
    let fake: VendorFake;
    beforeAll(async () => {
      upstream = await FakeUpstream.start();
      fake = installVendorFake(upstream, fixture);
      const protocols = operatorProtocol ? operatorFiles(operatorProtocol) : undefined;
      gw = await startGateway({ channels: { kit: channelYaml(fixture, upstream.url) }, protocols, env: { KIT_CREDENTIAL: 'kit-key', KIT_SECRET: 'kit-secret' }, extraConfig: tasksConfig(upstream) });
    }, 120_000);
    afterAll(async () => {
      await gw?.close();
      await upstream?.close();
    });

    const ledgerRows = async () => (await gw.services.db.selectFrom('usage_ledger').selectAll().execute()).length;
    const held = async () => (await gw.services.db.selectFrom('spend_reservations').selectAll().execute()).length;
    async function run(scenario: Scenario) {
      fake.next = scenario;
      const creates = fake.creates;
      const billed = await ledgerRows();
      const route = fixture.route ?? '/api/v1/videos';
      const created = await gw.app.inject({ method: 'POST', url: route, headers: { authorization: `Bearer ${gw.key}` }, payload: { model: fixture.model.id, ...fixture.request } });
      expect(created.statusCode, created.body).toBe(200);
      const read = fixture.model.kind === 'video' ? `/api/v1/videos/${created.json().id}` : `/api/v1/tasks/${created.json().id}`;
      const get = async () => (await gw.app.inject({ method: 'GET', url: read, headers: { authorization: `Bearer ${gw.key}` } })).json();
      const done = await waitFor(get, (t) => t.status === 'completed' || t.status === 'failed', 20_000);
      expect(fake.creates - creates, 'submitted once').toBe(1);
      expect(fake.problems).toEqual([]);
      return { done, task: fake.tasks.get(fake.creates)!, newRows: (await ledgerRows()) - billed };
    }

    it('create -> queued -> in progress -> completed: the bytes archived, the cost billed once', async () => {
      const { done, task, newRows } = await run('completed');
      expect(done).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: fixture.cost } });
      expect(task.answered).toEqual(['queued', 'in_progress', 'completed']);
      if (fixture.create.expect) expect(fake.bodies.at(-1)).toMatchObject(fixture.create.expect);
      const content = await gw.app.inject({ method: 'GET', url: `/v1/files/${done.file_id}/content`, headers: { authorization: `Bearer ${gw.key}` } });
      expect(content.rawPayload.equals(mediaBytes(fixture.model.kind, fake.creates))).toBe(true);
      expect(newRows).toBe(1);
      expect(await held()).toBe(0);
    });

    it('failed: the vendor reason, nothing billed', async () => {
      const { done, newRows } = await run('failed');
      expect(done).toMatchObject({ status: 'failed', error: fixture.failed });
      expect(done.cost).toBeUndefined();
      expect(newRows).toBe(0);
      expect(await held()).toBe(0);
    });

    if (fixture.filtered) {
      it('safety-filtered or expired: failed, nothing billed', async () => {
        const { done, newRows } = await run('filtered');
        expect(done).toMatchObject({ status: 'failed', error: fixture.filtered });
        expect(newRows).toBe(0);
      });
    }

    it("the vendor's 429 and 5xx while polling: polled again after the back-off, submitted once, billed once", async () => {
      const { done, task, newRows } = await run('throttled');
      expect(done).toMatchObject({ status: 'completed', cost: { amount: fixture.cost } });
      expect(task.answered).toEqual([429, 503, 'in_progress', 'completed']);
      expect(newRows).toBe(1);
    });

    if (fixture.refused) {
      it('a create refused in an HTTP 200 (a code in the body): failed with that code, never polled, nothing billed', async () => {
        const { done, task, newRows } = await run('refused');
        expect(done).toMatchObject({ status: 'failed', error: { code: fixture.refused!.code, ...(fixture.refused!.message && { message: fixture.refused!.message }) } });
        expect(task.answered).toEqual([]);
        expect(newRows).toBe(0);
      });
    }

    if (namesMediaUrl(fixture)) {
      it('a result URL on a private address is refused: never fetched, no file, failed unbilled, never shown', async () => {
        const { done, task, newRows } = await run('private');
        expect(task.media).toBe(0);
        expect(done.file_id ?? null).toBeNull();
        // Failed, unbilled, and the private URL never shown as provider_url.
        expect({ done, newRows }).toMatchObject({ done: { status: 'failed', error: { code: 'result_unavailable', message: expect.stringContaining('private address') } }, newRows: 0 });
        expect(JSON.stringify(done)).not.toContain('https://10.0.0.1');
        expect(await held()).toBe(0);
      });
    }
  });
}
