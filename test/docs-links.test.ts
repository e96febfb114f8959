import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { marked, type Token } from 'marked';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';

/** The markdown a newcomer reads: README.md and everything under docs/. */
const pages = [join(repoRoot, 'README.md'), ...readdirSync(join(repoRoot, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => join(repoRoot, 'docs', f))];

/** The text of inline tokens as a reader sees it (code spans without their backticks). */
const plain = (tokens: Token[] = []): string => tokens.map((t) => ('tokens' in t && t.tokens ? plain(t.tokens) : 'text' in t ? String(t.text) : '')).join('');

function walk(tokens: Token[], visit: (token: Token) => void): void {
  for (const token of tokens) {
    visit(token);
    if ('tokens' in token && token.tokens) walk(token.tokens, visit);
    if (token.type === 'list') for (const item of token.items) walk(item.tokens, visit);
    if (token.type === 'table') for (const cell of [...token.header, ...token.rows.flat()]) walk(cell.tokens, visit);
  }
}

const parsed = new Map<string, { anchors: Set<string>; links: string[] }>();
/** A page's heading anchors as GitHub makes them (github-slugger, duplicates numbered) and the targets it links to. */
function read(file: string) {
  let page = parsed.get(file);
  if (!page) {
    const slugger = new GithubSlugger();
    page = { anchors: new Set(), links: [] };
    walk(marked.lexer(readFileSync(file, 'utf8')), (token) => {
      if (token.type === 'heading') page!.anchors.add(slugger.slug(plain(token.tokens)));
      if (token.type === 'link' || token.type === 'image') page!.links.push(token.href);
    });
    parsed.set(file, page);
  }
  return page;
}

/** Why `href` in `file` does not resolve, or undefined when it does. Links off the site (a scheme) are not followed. */
function broken(file: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined;
  const [path, anchor] = href.split('#', 2);
  const target = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
  if (!existsSync(target)) return `${relative(repoRoot, target)} does not exist`;
  if (anchor === undefined || statSync(target).isDirectory()) return undefined;
  if (!target.endsWith('.md')) return `#${anchor} points into a file that is not markdown`;
  return read(target).anchors.has(decodeURIComponent(anchor)) ? undefined : `${relative(repoRoot, target)} has no heading whose anchor is #${anchor}`;
}

describe('links in README.md and docs/', () => {
  for (const file of pages) {
    it(`every relative link and anchor in ${relative(repoRoot, file)} resolves`, () => {
      const problems = read(file).links.flatMap((href) => {
        const why = broken(file, href);
        return why ? [`(${href}): ${why}`] : [];
      });
      expect(problems).toEqual([]);
    });
  }
});
