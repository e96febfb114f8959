// Hardening item 9: /metrics is closed by default, and opens only to its bearer token or on its own address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { startMetricsServer, type MetricsServer } from '../src/telemetry/metrics-server.js';

const TOKEN = 'a-metrics-token-of-32-characters';

describe('/metrics by default', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ channels: {} });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('is not served to anyone, with a 404 in the typed envelope', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('metrics_disabled');
    expect(res.body).not.toContain('gateway_');
  });

  it('is not served to a valid API key either', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${gw.key}` } });
    expect(res.statusCode).toBe(404);
  });
});

describe('/metrics with metrics.token', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ channels: {}, extraConfig: `metrics:\n  token: \${HARDENING_METRICS_TOKEN}\n`, env: { HARDENING_METRICS_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers 401 without the token', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toMatchObject({ type: 'authentication_error', code: 'invalid_metrics_token' });
  });

  it('answers 401 to a wrong token and to an API key', async () => {
    expect((await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}x` } })).statusCode).toBe(401);
    expect((await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${gw.key}` } })).statusCode).toBe(401);
  });

  it('serves the metrics to the token', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('gateway_requests_total');
  });

  it('counts requests by catalogue route, the dashboard as one route, and anything else as unmatched', async () => {
    await gw.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${gw.key}` } });
    await gw.app.inject({ method: 'GET', url: '/dashboard/login' });
    await gw.app.inject({ method: 'GET', url: '/no/such/route' });
    const body = (await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
    expect(body).toMatch(/gateway_requests_total\{route="dashboard",method="GET",status="200"\} 1/);
    expect(body).toMatch(/gateway_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
    expect(body).toMatch(/gateway_requests_total\{route="[a-z-]*models[a-z-]*",method="GET",status="200"\} 1/);
  });
});

describe('/metrics on a separate address', () => {
  let gw: TestGateway;
  let server: MetricsServer;
  beforeAll(async () => {
    gw = await startGateway({ channels: {}, extraConfig: 'metrics:\n  listen: { host: 127.0.0.1, port: 0 }\n' });
    server = await startMetricsServer(gw.services.metrics, { host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await server.close();
    await gw.close();
  });

  it('serves the metrics there without a token', async () => {
    await gw.app.inject({ method: 'GET', url: '/healthz' });
    const res = await request(`${server.url}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('gateway_requests_total');
  });

  it('serves nothing else there', async () => {
    const res = await request(`${server.url}/v1/models`);
    expect(res.statusCode).toBe(404);
    await res.body.dump();
  });

  it('keeps /metrics closed on the main address', async () => {
    expect((await gw.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });
});

describe('metrics config', () => {
  it('refuses a token shorter than 16 characters at load', async () => {
    await expect(startGateway({ channels: {}, extraConfig: 'metrics:\n  token: short\n' })).rejects.toThrow(/\/metrics\/token/);
  });
});
