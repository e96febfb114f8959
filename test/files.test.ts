// The file store through HTTP, on both blob stores: upload, type sniffing, the size limit, list, inspect, delete, isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobDrivers, blobKeys, fileRowCount, multipart, startFilesGateway, uploadForm, type FilesGateway } from './kit/files.js';
import { acceptedSamples, html, png, zip } from './kit/media-samples.js';

const MiB = 1024 * 1024;

describe.each(blobDrivers)('file store on %s blobs', (driver) => {
  let gw: FilesGateway;
  const auth = () => ({ authorization: `Bearer ${gw.key}` });
  const upload = (form: { payload: Buffer; headers: Record<string, string> }, headers: Record<string, string> = auth()) =>
    gw.app.inject({ method: 'POST', url: '/v1/files', headers: { ...headers, ...form.headers }, payload: form.payload });

  beforeAll(async () => {
    gw = await startFilesGateway(driver);
  });
  afterAll(async () => {
    await gw.close();
  });

  it.each(acceptedSamples)('accepts $name as $contentType, typed by its bytes', async (sample) => {
    const res = await upload(uploadForm(sample.bytes, sample.name, 'vision', 'application/octet-stream'));
    expect(res.statusCode).toBe(200);
    const file = res.json();
    expect(file).toMatchObject({ object: 'file', bytes: sample.bytes.length, filename: sample.name, purpose: 'vision', content_type: sample.contentType, source: 'upload', status: 'processed' });
    expect(file.id).toMatch(/^file_/);
    expect(file.expires_at - file.created_at).toBe(30 * 86400);
    expect(file.url).toMatch(new RegExp(`/api/v1/files/${file.id}/content\\?token=`));
    const content = await gw.app.inject({ method: 'GET', url: new URL(file.url).pathname + new URL(file.url).search });
    expect(content.statusCode).toBe(200);
    expect(content.rawPayload.equals(sample.bytes)).toBe(true);
    expect(content.headers['content-type']).toBe(sample.contentType);
  });

  it('stores a PNG labelled JPEG as PNG', async () => {
    const res = await upload(uploadForm(png(), 'photo.jpg', 'vision', 'image/jpeg'));
    expect(res.statusCode).toBe(200);
    expect(res.json().content_type).toBe('image/png');
    expect(res.json().filename).toBe('photo.jpg');
  });

  it('refuses HTML labelled PNG with 415 and keeps nothing', async () => {
    const rows = await fileRowCount(gw);
    const keys = await blobKeys(gw);
    const res = await upload(uploadForm(html, 'innocent.png', 'vision', 'image/png'));
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toMatchObject({ code: 'unsupported_media_type', param: 'file' });
    expect(res.json().error.message).toContain('PNG, JPEG');
    expect(await fileRowCount(gw)).toBe(rows);
    expect(await blobKeys(gw)).toEqual(keys);
  });

  it('refuses other formats (a zip archive, an empty file) with 415', async () => {
    expect((await upload(uploadForm(zip, 'a.zip'))).statusCode).toBe(415);
    expect((await upload(uploadForm(Buffer.alloc(0), 'empty.png'))).statusCode).toBe(415);
  });

  it('accepts exactly 25 MiB and refuses one byte more with 413, leaving no bytes and no row', async () => {
    const exact = png(25 * MiB);
    expect(exact.length).toBe(25 * MiB);
    const ok = await upload(uploadForm(exact, 'big.png'));
    expect(ok.statusCode).toBe(200);
    expect(ok.json().bytes).toBe(25 * MiB);
    const rows = await fileRowCount(gw);
    const keys = await blobKeys(gw);
    const over = await upload(uploadForm(png(25 * MiB + 1), 'bigger.png'));
    expect(over.statusCode).toBe(413);
    expect(over.json().error).toMatchObject({ code: 'file_too_large', param: 'file' });
    expect(await fileRowCount(gw)).toBe(rows);
    expect(await blobKeys(gw)).toEqual(keys);
    const served = await gw.app.inject({ method: 'GET', url: `/v1/files/${ok.json().id}/content`, headers: auth() });
    expect(served.rawPayload.equals(exact)).toBe(true);
  });

  it('takes purpose before or after the file, and refuses an unknown or missing purpose with 400 keeping nothing', async () => {
    const first = await upload(multipart([{ name: 'purpose', value: 'user_data' }, { name: 'file', value: png(), filename: 'p.png' }]));
    expect(first.json().purpose).toBe('user_data');
    const rows = await fileRowCount(gw);
    const keys = await blobKeys(gw);
    const bad = await upload(uploadForm(png(), 'p.png', 'fine-tune'));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ param: 'purpose', code: 'invalid_purpose' });
    const missing = await upload(multipart([{ name: 'file', value: png(), filename: 'p.png' }]));
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toContain('purpose');
    const noFile = await upload(multipart([{ name: 'purpose', value: 'vision' }]));
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json().error.param).toBe('file');
    expect(await fileRowCount(gw)).toBe(rows);
    expect(await blobKeys(gw)).toEqual(keys);
  });

  it('refuses a JSON body with 415', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/files', headers: auth(), payload: { purpose: 'vision' } });
    expect(res.statusCode).toBe(415);
  });

  it('keeps the filename only as a label, without a path', async () => {
    const res = await upload(uploadForm(png(), '../../etc/passwd.png'));
    expect(res.json().filename).toBe('passwd.png');
  });

  it('needs the files.write scope on every route', async () => {
    const chatOnly = await gw.newKey({ scopes: ['llm.chat'] });
    const headers = { authorization: `Bearer ${chatOnly}` };
    expect((await upload(uploadForm(png(), 'a.png'), headers)).statusCode).toBe(403);
    expect((await gw.app.inject({ method: 'GET', url: '/v1/files', headers })).statusCode).toBe(403);
    const res = await gw.app.inject({ method: 'GET', url: '/api/v1/files', headers });
    expect(res.json().error).toMatchObject({ code: 'missing_scope', param: 'files.write' });
  });

  it('inspects a file with a fresh signed URL each time, on both path forms', async () => {
    const id = (await upload(uploadForm(png(), 'a.png'))).json().id;
    const a = await gw.app.inject({ method: 'GET', url: `/v1/files/${id}`, headers: auth() });
    const b = await gw.app.inject({ method: 'GET', url: `/api/v1/files/${id}`, headers: auth() });
    expect(a.statusCode).toBe(200);
    expect(b.json()).toMatchObject({ id, object: 'file', content_type: 'image/png', source: 'upload' });
    expect(new URL(a.json().url).searchParams.get('token')).toMatch(/^[\w-]+\.\d+\.[\w-]{43}$/);
  });

  it('builds signed URLs from the configured listen address, not the Host, when server.publicUrl is empty', async () => {
    const id = (await upload(uploadForm(png(), 'a.png'))).json().id;
    const res = await gw.app.inject({ method: 'GET', url: `/v1/files/${id}`, headers: { ...auth(), host: 'files.example.test:8443' } });
    expect(res.json().url.startsWith(`http://127.0.0.1:8080/api/v1/files/${id}/content?token=`)).toBe(true);
  });

  it('answers 404 for another workspace’s file exactly as for an unknown id', async () => {
    const id = (await upload(uploadForm(png(), 'mine.png'))).json().id;
    const other = await gw.newKey({ workspace: await gw.newWorkspace(`other-${driver}`) });
    const headers = { authorization: `Bearer ${other}` };
    const unknownId = `file_${'0'.repeat(28)}`;
    for (const [method, suffix] of [['GET', ''], ['DELETE', ''], ['GET', '/content']] as const) {
      const theirs = await gw.app.inject({ method, url: `/v1/files/${id}${suffix}`, headers });
      const unknown = await gw.app.inject({ method, url: `/v1/files/${unknownId}${suffix}`, headers });
      expect(theirs.statusCode).toBe(404);
      expect(unknown.statusCode).toBe(404);
      expect(theirs.json().error.message.replace(id, 'ID')).toBe(unknown.json().error.message.replace(unknownId, 'ID'));
    }
    const list = await gw.app.inject({ method: 'GET', url: '/v1/files', headers });
    expect(list.json().data).toEqual([]);
    expect((await gw.app.inject({ method: 'GET', url: `/v1/files/${id}`, headers: auth() })).statusCode).toBe(200);
  });

  it('deletes the row and the bytes', async () => {
    const id = (await upload(uploadForm(png(), 'gone.png'))).json().id;
    const key = `${gw.workspace.id}/${id}`;
    expect(await blobKeys(gw)).toContain(key);
    const res = await gw.app.inject({ method: 'DELETE', url: `/api/v1/files/${id}`, headers: auth() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id, object: 'file', deleted: true });
    expect(await blobKeys(gw)).not.toContain(key);
    expect((await gw.app.inject({ method: 'GET', url: `/v1/files/${id}`, headers: auth() })).statusCode).toBe(404);
    expect((await gw.app.inject({ method: 'DELETE', url: `/v1/files/${id}`, headers: auth() })).statusCode).toBe(404);
  });

  it('lists with limit, after, order and purpose in the cursor page shape', async () => {
    const ws = await gw.newWorkspace(`lister-${driver}`);
    const headers = { authorization: `Bearer ${await gw.newKey({ workspace: ws })}` };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await upload(uploadForm(png(), `f${i}.png`, i % 2 ? 'user_data' : 'vision'), headers);
      ids.push(res.json().id);
    }
    const list = (query: string) => gw.app.inject({ method: 'GET', url: `/v1/files?${query}`, headers }).then((r) => r.json());
    const page1 = await list('limit=2');
    expect(page1).toMatchObject({ object: 'list', first_id: ids[4], last_id: ids[3], has_more: true });
    expect(page1.data.map((f: { id: string }) => f.id)).toEqual([ids[4], ids[3]]);
    const page3 = await list(`limit=2&after=${ids[2]}`);
    expect(page3.data.map((f: { id: string }) => f.id)).toEqual([ids[1], ids[0]]);
    expect(page3.has_more).toBe(false);
    const asc = await list(`order=asc&after=${ids[0]}`);
    expect(asc.data.map((f: { id: string }) => f.id)).toEqual(ids.slice(1));
    const userData = await list('purpose=user_data');
    expect(userData.data.map((f: { id: string }) => f.id)).toEqual([ids[3], ids[1]]);
    const none = await list('purpose=video_generation');
    expect(none).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses a limit outside 1 to 100, a bad order and a bad cursor with 400', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=ten', 'order=up', 'after=nope', 'purpose=a&purpose=b']) {
      const res = await gw.app.inject({ method: 'GET', url: `/v1/files?${query}`, headers: auth() });
      expect(res.statusCode, query).toBe(400);
    }
    expect((await gw.app.inject({ method: 'GET', url: '/v1/files?limit=100', headers: auth() })).statusCode).toBe(200);
  });
});
