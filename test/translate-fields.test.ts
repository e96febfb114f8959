// No silent drops: every body field of the official SDKs' request types is mapped, ignored or refused by each translated
// route's field table, and docs/translation.md lists exactly those three lists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';
import { sdkRequestFields } from './kit/sdk-fields.js';

type Rule = { action: 'map' | 'ignore' | 'refuse'; reason?: string };

const sdk = sdkRequestFields([
  { module: '@anthropic-ai/sdk/resources/messages/messages', name: 'MessageCreateParamsBase' },
  { module: 'openai/resources/chat/completions/completions', name: 'ChatCompletionCreateParamsBase' },
  { module: 'openai/resources/responses/responses', name: 'ResponseCreateParamsBase' },
]);

const routes = [
  { title: 'Anthropic Messages client -> OpenAI chat channel', protocol: 'openai-chat', client: 'anthropic-messages', type: 'MessageCreateParamsBase' },
  { title: 'OpenAI chat client -> Anthropic Messages channel', protocol: 'anthropic-messages', client: 'openai-chat', type: 'ChatCompletionCreateParamsBase' },
  { title: 'Responses client -> OpenAI chat channel', protocol: 'openai-chat', client: 'openai-responses', type: 'ResponseCreateParamsBase' },
  { title: 'Responses client -> Anthropic Messages channel', protocol: 'anthropic-messages', client: 'openai-responses', type: 'ResponseCreateParamsBase' },
  { title: 'Anthropic Messages client -> Bedrock Converse channel', protocol: 'bedrock-converse', client: 'anthropic-messages', type: 'MessageCreateParamsBase' },
  { title: 'OpenAI chat client -> Bedrock Converse channel', protocol: 'bedrock-converse', client: 'openai-chat', type: 'ChatCompletionCreateParamsBase' },
  { title: 'Responses client -> Bedrock Converse channel', protocol: 'bedrock-converse', client: 'openai-responses', type: 'ResponseCreateParamsBase' },
  { title: 'OpenAI chat client -> Gemini generateContent channel', protocol: 'gemini-generate-content', client: 'openai-chat', type: 'ChatCompletionCreateParamsBase' },
  { title: 'Anthropic Messages client -> Gemini generateContent channel', protocol: 'gemini-generate-content', client: 'anthropic-messages', type: 'MessageCreateParamsBase' },
  { title: 'Responses client -> Gemini generateContent channel', protocol: 'gemini-generate-content', client: 'openai-responses', type: 'ResponseCreateParamsBase' },
];

const fieldsOf = (protocol: string, client: string): Record<string, Rule> =>
  parse(readFileSync(join(repoRoot, 'channels', 'protocols', `${protocol}.yaml`), 'utf8')).translations[client].fields;

const docs = readFileSync(join(repoRoot, 'docs', 'translation.md'), 'utf8');

/** The field names of one list line of a route's section: each `; `-separated item starts with the name in backticks. */
function listed(title: string, list: 'Mapped' | 'Ignored' | 'Refused'): string[] {
  const section = docs.slice(docs.indexOf(`### ${title}\n`));
  const line = section.split('\n').find((l) => l.startsWith(`- **${list}**`));
  if (!line) return [];
  return line
    .slice(line.indexOf(':') + 1)
    .split('; ')
    .map((item) => /^\s*`([^`]+)`/.exec(item)?.[1])
    .filter((name): name is string => !!name)
    .sort();
}

describe.each(routes)('$title', ({ title, protocol, client, type }) => {
  const fields = fieldsOf(protocol, client);

  it(`has an entry for every body field of the SDK's ${type}`, () => {
    expect(sdk[type].length).toBeGreaterThan(10);
    const missing = sdk[type].filter((name) => !fields[name]);
    expect(missing).toEqual([]);
  });

  it('is documented in docs/translation.md as the same three lists', () => {
    const by = (action: Rule['action']) => Object.keys(fields).filter((name) => fields[name].action === action).sort();
    expect(listed(title, 'Mapped')).toEqual(by('map'));
    expect(listed(title, 'Ignored')).toEqual(by('ignore'));
    expect(listed(title, 'Refused')).toEqual(by('refuse'));
  });

  it('gives a reason for every field it ignores or refuses', () => {
    const unexplained = Object.entries(fields).filter(([, rule]) => rule.action !== 'map' && !rule.reason);
    expect(unexplained).toEqual([]);
  });
});
