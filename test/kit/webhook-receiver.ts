// A webhook receiver on 127.0.0.1 port 0: records every POST (headers, the raw body, when), answers from a script of
// statuses (then 200), and lets a test wait for the n-th delivery.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export class WebhookReceiver {
  readonly received: ReceivedHook[] = [];
  /** Statuses answered in turn; 200 once they run out. */
  statuses: number[] = [];
  /** Decides the status instead of `statuses` when set (given the delivery and those before it); 0 never answers. */
  decide?: (hook: ReceivedHook, before: readonly ReceivedHook[]) => number;
  /** A body sent with every non-2xx answer. */
  errorBody = '';
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver!: WebhookReceiver;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const hook = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        const status = receiver.decide ? receiver.decide(hook, receiver.received) : (receiver.statuses.shift() ?? 200);
        receiver.received.push(hook);
        if (status === 0) return;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status >= 300 ? receiver.errorBody : 'ok');
        for (const wake of receiver.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** Forgets what arrived and what to answer: the next test on a receiver that several tests share. */
  reset(): void {
    this.received.length = 0;
    this.statuses = [];
    this.decide = undefined;
    this.errorBody = '';
  }

  /** host:port, for network.allowHosts. */
  get host(): string {
    return new URL(this.url).host;
  }

  /** Resolves once `count` deliveries have arrived (fails after `ms`). */
  async waitFor(count: number, ms = 10_000): Promise<ReceivedHook[]> {
    const until = Date.now() + ms;
    while (this.received.length < count) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${count} webhook deliveries; got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.received.slice(0, count);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
