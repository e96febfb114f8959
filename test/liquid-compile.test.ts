// The compiled Liquid renderer must render exactly what liquidjs renders: every shipped template on every mapping fixture, and the edge cases.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import type { ChannelConfig, ModelRoute } from '../src/config/types.js';
import { GatewayError } from '../src/errors.js';
import { createLiquid, loadFilters, TemplateSet } from '../src/engine/liquid.js';
import { translatorFor } from '../src/engine/translators.js';
import type { TranslateContext } from '../src/engine/translator.js';
import { repoRoot } from './kit/gateway.js';

const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
config.templates.verify = true;
afterAll(() => {
  config.templates.verify = false;
});

describe('compiled templates', () => {
  it('compiles every template the shipped protocols declare', () => {
    const sources = [...(config.templates as unknown as { compiled: Map<string, { compiled?: unknown }> }).compiled].filter(([, t]) => !t.compiled).map(([s]) => s);
    expect(sources).toEqual([]);
  });

  it('renders every mapping fixture exactly as liquidjs does', () => {
    const dir = join(repoRoot, 'channels', 'protocols', 'tests');
    let rendered = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      const fixture = parse(readFileSync(join(dir, file), 'utf8')) as { protocol: string; client: string; cases: Record<string, { in: unknown; request?: object }>[] };
      const protocol = config.protocols.get(fixture.protocol)!;
      const route = { model: { id: 'm', upstream: 'u', kind: 'chat', price: { currency: 'USD', inputPerMillion: 1, outputPerMillion: 2 } }, channel: { id: 'c' } as ChannelConfig, protocol } as ModelRoute;
      const ctx: TranslateContext = { route, clientModel: 'm', requestId: 'r', usage: () => undefined, costOf: () => ({ amount: 1, currency: 'USD' }) };
      const translator = translatorFor(config, fixture.client, route);
      for (const c of fixture.cases) {
        // A refusal is fine here: verification records every divergence in `mismatches`, checked below.
        const tolerate = (fn: () => unknown) => {
          try {
            fn();
          } catch (err) {
            if (!(err instanceof GatewayError)) throw err;
          }
        };
        if (c.request) tolerate(() => translator.request(c.request.in as Record<string, unknown>, ctx));
        if (c.response) tolerate(() => translator.response(c.response.in as Record<string, unknown>, ctx));
        if (c.stream) {
          const mapper = translator.stream(ctx, { ...(c.stream.request as object), stream: true });
          tolerate(() => {
            for (const e of c.stream.in as { event?: string; data: unknown }[]) {
              const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
              mapper.push({ event: e.event, data }, () => JSON.parse(data));
            }
            mapper.end();
          });
          mapper.fail(new GatewayError('x', 502, 'upstream_error', 'cut'));
        }
        rendered++;
      }
    }
    expect(rendered).toBeGreaterThan(20);
    expect(config.templates.mismatches).toEqual([]);
  });
});

describe('compiled Liquid semantics', async () => {
  const templates = new TemplateSet(createLiquid());
  await loadFilters(templates.liquid);
  templates.verify = true;
  const scope = {
    s: 'hi', e: '', n: 0, f: 1.5, z: null, t: true, no: false, arr: [1, 'two', { a: 3 }], empty: [], obj: { size: 7, first: 'f', x: { y: 'deep' } },
    list: [{ type: 'text', text: 'a' }, { type: 'image' }, { type: 'text', text: 'b' }], key: 'x', idx: 1,
  };
  const cases = [
    '{{ s }}|{{ n }}|{{ f }}|{{ z }}|{{ t }}|{{ no }}|{{ arr }}|{{ obj }}|{{ missing.deep }}',
    '{{ s.size }} {{ s.first }} {{ arr.size }} {{ arr.first }} {{ arr.last.a }} {{ arr[idx] }} {{ arr[-1].a }} {{ obj.size }} {{ obj.first }} {{ obj[key].y }} {{ empty.first }}',
    '{% if s == "hi" and n == 0 %}A{% elsif t %}B{% else %}C{% endif %}{% if e %}D{% endif %}{% if n %}E{% endif %}{% if empty %}F{% endif %}{% if z == nil %}G{% endif %}',
    '{% if e == empty %}1{% endif %}{% if empty == empty %}2{% endif %}{% if s != nil %}3{% endif %}{% if n < 1 or f > 2 %}4{% endif %}{% if arr contains "two" %}5{% endif %}{% if s contains "h" %}6{% endif %}',
    '{% unless t %}u{% elsif n %}v{% else %}w{% endunless %}{% unless no %}x{% endunless %}',
    '{% case s %}{% when "a", "hi" %}one{% when "hi" or "b" %}two{% else %}none{% endcase %}{% case n %}{% when 1 %}x{% else %}else{% endcase %}',
    '{% for x in arr %}{{ forloop.index }}/{{ forloop.length }}:{{ x }}{% unless forloop.last %},{% endunless %}{% endfor %}{% for x in empty %}y{% else %}empty{% endfor %}{% for p in obj %}{{ p[0] }}{% endfor %}{% for c in s %}{{ c }}{% endfor %}{% for i in (1..3) %}{{ i }}{% endfor %}',
    '{% assign texts = list | where: "type", "text" %}{{ texts | map: "text" | join: "+" }} {{ list | reject: "type", "text" | size }} {% capture c %}[{{ s | json }}]{% endcapture %}{{ c | json }} {{ c.size }}',
    '{{ z | default: "d" }} {{ n | default: 5 }} {{ e | default: "e" }} {{ f | minus: 0.5 | plus: 2 }} {{ arr | concat: empty | size }} {{ obj | json }} {{ list | members: "type" }}',
    '{% for x in list %}{% assign last = x.type %}{% endfor %}{{ last }}{% for x in arr %}{% for y in list %}{{ forloop.index0 }}{% endfor %}{{ x | json }}{% endfor %}{{ x }}',
    '{% if arr.first == 1 and arr.size > 2 %}ok{% endif %}{% if not_there.size > 0 %}no{% endif %}{% if list.first.type == "text" %}t{% endif %}',
  ];
  for (const source of cases) {
    it(`renders ${source.slice(0, 60)} as liquidjs does`, () => {
      const template = templates.compile(source);
      expect(template.compiled).toBeDefined();
      expect(template.render(scope)).toBe(template.interpret(scope));
      expect(templates.mismatches).toEqual([]);
    });
  }

  it('keeps liquidjs for constructs it does not compile', () => {
    const template = templates.compile('{% for x in arr limit: 1 %}{{ x }}{% endfor %}{% raw %}{{ }}{% endraw %}');
    expect(template.compiled).toBeUndefined();
    expect(template.render(scope)).toBe('1{{ }}');
  });

  it('throws the same error liquidjs throws when a filter refuses', () => {
    const template = templates.compile('{{ s | refuse: "no %s" }}');
    let compiled: unknown;
    try {
      template.render(scope);
    } catch (err) {
      compiled = err;
    }
    expect(() => template.interpret(scope)).toThrow((compiled as Error).message);
    expect((compiled as Error).message).toContain('no "hi"');
  });
});
