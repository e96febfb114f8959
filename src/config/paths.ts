// Where something is in a JSON document, written in protocol files as Liquid output naming one variable and its members
// ("{{ answer.usage }}", "{{ event.message['usage'] }}", "{{ answer.data[0] }}"): the same language as every mapping.
// Parsed once at load into the segments a reader follows.

const PATH = /^\{\{\s*([A-Za-z_]\w*)((?:\.[A-Za-z_][\w-]*|\[\d+\]|\['[^']*'\]|\["[^"]*"\])*)\s*\}\}$/;
const SEGMENT = /\.([A-Za-z_][\w-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g;
/** Liquid's own properties of every list and object: a plain reader would look for a member of that name instead. */
const LIQUID_PROPERTIES = new Set(['first', 'last', 'size']);

/** The member names `text` walks from `root`, or why it is not such a path. */
export function parsePath(text: string, root: string): { segments: string[] } | { problem: string } {
  const match = PATH.exec(text);
  if (!match || match[1] !== root) {
    let hint = `must be a Liquid path such as "{{ ${root}.usage }}"`;
    if (/^[\w-]+(\.[\w-]+)*$/.test(text)) hint = `"${text}" is a dot path; paths are Liquid now: write "{{ ${root}.${text} }}"`;
    else if (match) hint = `starts at "${match[1]}", which is not in scope here: write "{{ ${root}${match[2]} }}"`;
    return { problem: `${hint} (one variable, ${root}, then its members: .name, [0], ['name'])` };
  }
  const members = [...match[2].matchAll(SEGMENT)];
  const special = members.find((m) => m[1] !== undefined && LIQUID_PROPERTIES.has(m[1]))?.[1];
  if (special) return { problem: `".${special}" is a property Liquid gives every list and object; a path reads members only: write [0] for the first item, or ['${special}'] for a member of that name` };
  const segments = members.map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]);
  return { segments };
}

/** The members a path checked at load walks from its variable (whichever variable its schema asked for). */
export function pathSegments(text: string): string[] {
  const root = PATH.exec(text)?.[1] ?? '';
  const parsed = parsePath(text, root);
  if ('problem' in parsed) throw new Error(`${text}: ${parsed.problem}`);
  return parsed.segments;
}
