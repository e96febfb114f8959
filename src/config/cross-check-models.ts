// Model ids as vendors use them, checked across the channel files: aliases distinct from every id and naming one model,
// one default model id per kind, a replacement that exists (same kind, no cycle), lifecycle days in order; and a warning for a model past its day.
import type { Problems } from './problems.js';
import type { CheckedFiles } from './cross-check.js';
import type { ModelConfig } from './types.js';
import type { YamlSource } from './yaml-source.js';

interface Entry {
  model: ModelConfig;
  index: number;
  source: YamlSource;
  channel: string;
}

/** Unix milliseconds at the start (UTC) of a `YYYY-MM-DD` day. */
export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`);

/** Whether `model` is past its retirement day at `now`. */
export const isRetired = (model: Pick<ModelConfig, 'retiresAt'>, now: number): boolean => model.retiresAt !== undefined && now >= dayStart(model.retiresAt);

function entriesOf(channels: CheckedFiles['channels']): Entry[] {
  return channels.flatMap(({ channel, source }) => channel.models.map((model, index) => ({ model, index, source, channel: channel.id })));
}

/** Alias to the model id it names; problems for an alias that is an id, or names two models. */
function checkAliases(entries: Entry[], problems: Problems): Map<string, string> {
  const ids = new Map(entries.map((e) => [e.model.id, e]));
  const aliases = new Map<string, string>();
  for (const { model, index, source } of entries) {
    model.aliases?.forEach((alias, i) => {
      const pointer = `/models/${index}/aliases/${i}`;
      const owner = ids.get(alias);
      const named = aliases.get(alias);
      if (owner) problems.add(source, pointer, owner.model === model ? `alias "${alias}" is the model's own id` : `alias "${alias}" of model "${model.id}" is the id of a model of channel "${owner.channel}"`);
      else if (named !== undefined && named !== model.id) problems.add(source, pointer, `alias "${alias}" of model "${model.id}" already names model "${named}"`);
      else aliases.set(alias, model.id);
    });
  }
  return aliases;
}

/** The model a replacement names (by id or alias), following replacements while they are retired; problems for what cannot hold. */
function checkReplacement(entry: Entry, byId: Map<string, Entry>, aliases: Map<string, string>, problems: Problems): void {
  const { model, index, source } = entry;
  const pointer = `/models/${index}/replacement`;
  const seen = new Set([model.id]);
  let name = model.replacement;
  while (name !== undefined) {
    const target = byId.get(aliases.get(name) ?? name);
    if (!target) return problems.add(source, pointer, `model "${model.id}" names replacement "${name}", which no channel serves`);
    if (target.model.kind !== model.kind) return problems.add(source, pointer, `model "${model.id}" is of kind ${model.kind}, its replacement "${name}" of kind ${target.model.kind}`);
    if (seen.has(target.model.id)) return problems.add(source, pointer, `model "${model.id}": replacements run in a circle through "${target.model.id}"`);
    seen.add(target.model.id);
    name = target.model.retiresAt !== undefined ? target.model.replacement : undefined;
  }
}

/** Problems for a second model id of one kind marked `defaultForKind` (fallback entries of the same id are one model). */
function checkKindDefaults(entries: Entry[], problems: Problems): void {
  const defaults = new Map<string, string>();
  for (const { model, index, source } of entries) {
    if (!model.defaultForKind) continue;
    const named = defaults.get(model.kind);
    if (named !== undefined && named !== model.id) problems.add(source, `/models/${index}/defaultForKind`, `model "${model.id}" and model "${named}" are both the default of kind ${model.kind}; mark one`);
    else defaults.set(model.kind, model.id);
  }
}

/** Checks aliases, kind defaults and lifecycles; warns (file:line:col) about every model past its deprecation or retirement day at `now`. */
export function checkModelIds(checked: CheckedFiles, problems: Problems, warnings: string[], now: number): void {
  const entries = entriesOf(checked.channels);
  const aliases = checkAliases(entries, problems);
  checkKindDefaults(entries, problems);
  const byId = new Map(entries.map((e) => [e.model.id, e]));
  const policy = checked.gateway?.channels.retiredModels ?? 'refuse';
  for (const entry of entries) {
    const { model, index, source } = entry;
    if (model.deprecatedAt && model.retiresAt && model.retiresAt < model.deprecatedAt) {
      problems.add(source, `/models/${index}/retiresAt`, `model "${model.id}" retires on ${model.retiresAt}, before its deprecation on ${model.deprecatedAt}`);
    }
    checkReplacement(entry, byId, aliases, problems);
    const at = (field: string) => `${source.locate(`/models/${index}/${field}`)} /models/${index}/${field}`;
    if (isRetired(model, now)) {
      const fate = !model.replacement ? 'requests for it are refused (no replacement is named)' : policy === 'replace' ? `requests for it are served by "${model.replacement}"` : `requests for it are refused, naming "${model.replacement}"`;
      warnings.push(`${at('retiresAt')} model "${model.id}" was retired on ${model.retiresAt}: ${fate}`);
    } else if (model.deprecatedAt && now >= dayStart(model.deprecatedAt)) {
      warnings.push(`${at('deprecatedAt')} model "${model.id}" is deprecated since ${model.deprecatedAt}${model.retiresAt ? ` and retires on ${model.retiresAt}` : ''}${model.replacement ? `; its replacement is "${model.replacement}"` : ''}`);
    }
  }
}
