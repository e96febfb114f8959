import autocannon from 'autocannon';
import { FakeUpstream } from '../test/kit/fake-upstream.js';
import { chatChannel, startGateway } from '../test/kit/gateway.js';
const fake = await FakeUpstream.start();
const gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`) }, listen: true });
const body = JSON.stringify({ model: 'fake-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
async function run(url: string, headers: Record<string,string>) {
  const r = await autocannon({ url, method: 'POST', connections: 32, duration: 5, headers: { 'content-type': 'application/json', ...headers }, body });
  return r.requests.average;
}
console.log('direct', await run(`${fake.url}/v1/chat/completions`, {}));
console.log('gw', await run(`${gw.url}/v1/chat/completions`, { authorization: `Bearer ${gw.key}` }));
await gw.close(); await fake.close();
