// The shipped detectors find what they name and not its near misses (a card failing Luhn, an IBAN failing its checksum),
// and no text, nor an operator's pattern, can make a scan backtrack for long: the shipped candidates are linear by
// construction, the operator's run on RE2 (re2js).
import { describe, expect, it } from 'vitest';
import { shippedDetector, DETECTOR_NAMES, type Span } from '../src/guardrails/detectors.js';
import { compilePattern } from '../src/guardrails/patterns.js';
import { candidatesOf } from '../src/guardrails/candidates.js';
import type { Detector } from '../src/guardrails/detectors.js';

const found = (name: string, text: string, region = 'US'): string[] => {
  const spans: Span[] = [];
  shippedDetector(name, region)!.find(text, spans);
  return spans.map((s) => text.slice(s.start, s.end));
};

describe('shipped detectors', () => {
  it('email: addresses, not handles or half addresses', () => {
    expect(found('email', 'write to jane.doe+x@mail.example.co.uk or @jane, not a@b')).toEqual(['jane.doe+x@mail.example.co.uk']);
  });

  it('payment-card: numbers passing Luhn and an issuer pattern, spaced or not; not one digit off', () => {
    expect(found('payment-card', 'visa 4111 1111 1111 1111, mc 5555555555554444, bad 4111 1111 1111 1112, order 1234567890123')).toEqual(['4111 1111 1111 1111', '5555555555554444']);
  });

  it('iban: checksummed account numbers, grouped or not', () => {
    expect(found('iban', 'pay DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432, not DE89370400440532013001')).toEqual(['DE89 3704 0044 0532 0130 00', 'GB82WEST12345698765432']);
  });

  it('phone: numbers valid in their numbering plan, with or without +code', () => {
    expect(found('phone', 'call +44 20 7946 0958 or (415) 555-2671; order 12345678 is not one')).toEqual(['+44 20 7946 0958', '(415) 555-2671']);
  });

  it('secret: vendor key shapes, whole, and not words that share a prefix', () => {
    const keys = ['sk-proj-Abcdefghijklmnopqrstuvwx0123456789', 'AKIAIOSFODNN7EXAMPLE', 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB', 'xoxb-1234567890-abcdefghij', `sk-ant-api03-${'a'.repeat(93)}`];
    expect(found('secret', `keys: ${keys.join(' , ')}; a task-list and sk-short are not`)).toEqual(keys);
  });

  it('private-key: a PEM block, and an unterminated one to the end', () => {
    const block = '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----';
    expect(found('private-key', `here ${block} there`)).toEqual([block]);
    expect(found('private-key', 'cut -----BEGIN PRIVATE KEY-----\nMIIE')).toEqual(['-----BEGIN PRIVATE KEY-----\nMIIE']);
  });

  it('finds each match whole at the very start and end of a text and beside punctuation (the windows of the one candidate scan)', () => {
    expect(found('phone', '+44 20 7946 0958')).toEqual(['+44 20 7946 0958']);
    expect(found('phone', 'tel:(415) 555-2671.')).toEqual(['(415) 555-2671']);
    expect(found('payment-card', '4111-1111-1111-1111')).toEqual(['4111-1111-1111-1111']);
    expect(found('iban', 'GB82WEST12345698765432')).toEqual(['GB82WEST12345698765432']);
    expect(found('iban', 'iban:DE89 3704 0044 0532 0130 00.')).toEqual(['DE89 3704 0044 0532 0130 00']);
    expect(found('secret', 'AKIAIOSFODNN7EXAMPLE')).toEqual(['AKIAIOSFODNN7EXAMPLE']);
    expect(found('secret', '"sk-proj-Abcdefghijklmnopqrstuvwx0123456789",')).toEqual(['sk-proj-Abcdefghijklmnopqrstuvwx0123456789']);
    expect(found('secret', 'token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB')).toEqual(['ghp_0123456789abcdefghijklmnopqrstuvwxyzAB']);
  });

  it('looks at none of the prose between candidates: a date, an amount and a time start no phone, card or IBAN scan', () => {
    const prose = 'Revenue rose 12% to 4,200 units; order 88123 shipped on 2026-11-02 at 10:30 in room 4B. ';
    expect(candidatesOf(prose.repeat(40))).toMatchObject({ upper: [], tokens: [] });
    expect(candidatesOf(prose.repeat(40)).numbers.every((w) => w.digits < 9 && !w.plus)).toBe(true);
  });

  it('no adversarial text of 256 KiB keeps any detector busy for long', () => {
    const hostile = ['a'.repeat(1 << 18), `${'a.'.repeat(1 << 17)}@`, `${'1 '.repeat(1 << 17)}x`, `${'-----BEGIN '.repeat(1 << 14)}`, `${'+1 ('.repeat(1 << 16)}`, `${'sk-'.repeat(1 << 16)}`, `${'DE89 '.repeat(1 << 16)}`];
    for (const name of DETECTOR_NAMES) {
      for (const text of hostile) {
        const started = performance.now();
        shippedDetector(name, 'US')!.find(text, []);
        expect(performance.now() - started, `${name} on ${text.slice(0, 8)}...`).toBeLessThan(1500);
      }
    }
  });
});

describe("the operator's patterns (RE2)", () => {
  it('finds every match of a pattern, by its name', () => {
    const detector = compilePattern({ name: 'ticket', regex: 'TICKET-[0-9]{4}', caseInsensitive: true }) as Detector;
    const spans: Span[] = [];
    detector.find('see ticket-1234 and TICKET-9876', spans);
    expect(spans).toEqual([
      { start: 4, end: 15, detector: 'ticket' },
      { start: 20, end: 31, detector: 'ticket' },
    ]);
  });

  it('runs a catastrophic-backtracking pattern in linear time', () => {
    const detector = compilePattern({ name: 'evil', regex: '(a+)+$', caseInsensitive: false }) as Detector;
    const started = performance.now();
    detector.find(`${'a'.repeat(100_000)}!`, []);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses a pattern that matches the empty text', () => {
    expect(compilePattern({ name: 'all', regex: 'x*', caseInsensitive: false })).toEqual({ problem: 'the pattern matches the empty text; it would match everywhere' });
  });
});
