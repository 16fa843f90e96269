import { describe, expect, it } from 'vitest';
import { CopyFormatError, lastLineOfCopy, ndjsonFromCopy } from '../../src/features/events/read/ndjson-from-copy.js';

/**
 * A value as PostgreSQL's COPY TO writes it in text format (copyto.c, CopyAttributeOutText):
 * backslash and the control characters \b \f \n \r \t \v escaped; every other byte as it is.
 */
function copyText(value: string): string {
  const escapes: Record<string, string> = {
    '\\': '\\\\',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
  };
  return value.replace(/[\\\b\f\n\r\t\v]/g, (c) => escapes[c] as string);
}

type Row = { id: string; muid: string; event_name: string; event_time: string; raw_data: string; consent: string };
const COLUMNS = ['id', 'muid', 'event_name', 'event_time', 'raw_data', 'consent'] as const;

const copyRows = (rows: Row[]) =>
  Buffer.from(rows.map((row) => `${COLUMNS.map((c) => copyText(row[c])).join('\t')}\n`).join(''));

/** Strings from every class that matters: controls, quotes, backslashes, multi-byte, separators. */
function randomText(random: () => number): string {
  const pool = [
    'a',
    'Z',
    '0',
    ' ',
    '"',
    '\\',
    '\t',
    '\n',
    '\r',
    '\b',
    '\f',
    '\v',
    '\u0000'.slice(1),
    '\u0001',
    '\u001f',
    '\u007f',
    'é',
    '€',
    '😀',
    '\u2028',
    '/',
    '{',
    '}',
    ':',
    ',',
  ];
  let out = '';
  const length = Math.floor(random() * 24);
  for (let i = 0; i < length; i++) out += pool[Math.floor(random() * pool.length)];
  return out;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('ndjsonFromCopy', () => {
  it('makes each COPY row into exactly JSON.stringify of the event', () => {
    const random = seeded(16);
    const rows: Row[] = [];
    for (let i = 0; i < 2_000; i++) {
      rows.push({
        id: randomText(random),
        muid: randomText(random),
        event_name: randomText(random),
        event_time: '2026-01-05T00:00:00.000Z',
        raw_data: JSON.stringify({ s: randomText(random), n: i }),
        consent: ['not_required', 'granted', 'implied', 'cookieless'][i % 4] as string,
      });
    }
    const made = ndjsonFromCopy(copyRows(rows), rows.length);
    const expected = rows.map((row) => JSON.stringify(row));
    expect(made.lines).toBe(rows.length);
    expect(made.bytes.toString().split('\n').slice(0, -1)).toEqual(expected);
    // The last row alone (the export's next position), escapes and all.
    expect(lastLineOfCopy(copyRows(rows))).toBe(expected.at(-1));
    expect(lastLineOfCopy(copyRows(rows.slice(0, 1)))).toBe(expected[0]);
  });

  it('gives nothing for no rows, and a batch that is its own copy (the scratch buffer is reused)', () => {
    const none = ndjsonFromCopy(Buffer.alloc(0), 0);
    expect({ bytes: none.bytes, lines: none.lines }).toEqual({ bytes: Buffer.alloc(0), lines: 0 });
    const one = { id: 'a', muid: 'b', event_name: 'c', event_time: 'd', raw_data: '"e"', consent: 'granted' };
    const first = ndjsonFromCopy(copyRows([one]), 1).bytes;
    ndjsonFromCopy(copyRows([{ ...one, id: 'zzzz' }]), 1);
    expect(first.toString()).toBe(`${JSON.stringify(one)}\n`);
  });

  it('writes into the buffer it is given when it has room, else into a new one with room to spare', () => {
    const one = { id: 'a', muid: 'b', event_name: 'c', event_time: 'd', raw_data: '"e"', consent: 'granted' };
    const line = `${JSON.stringify(one)}\n`;
    const roomy = Buffer.alloc(1024, 0x2a);
    const made = ndjsonFromCopy(copyRows([one]), 1, roomy);
    expect(made.buffer).toBe(roomy);
    expect(made.bytes.buffer).toBe(roomy.buffer);
    expect(made.bytes.toString()).toBe(line);
    // What lies past the lines is left as it was.
    expect(roomy[Buffer.byteLength(line)]).toBe(0x2a);

    const small = Buffer.alloc(4);
    const grown = ndjsonFromCopy(copyRows([one, one]), 2, small);
    expect(grown.buffer).not.toBe(small);
    expect(grown.buffer.length).toBeGreaterThan(2 * Buffer.byteLength(line));
    expect(grown.bytes.toString()).toBe(line + line);
    expect(small.equals(Buffer.alloc(4))).toBe(true);
  });

  it('refuses what the six columns cannot be: a NULL, a short row, an extra column, a wrong count', () => {
    const cases: [string, number][] = [
      ['a\tb\t\\N\td\te\tf\n', 1],
      ['a\tb\tc\td\te\n', 1],
      ['a\tb\tc\td\te\tf\tg\n', 1],
      ['a\tb\tc\td\te\tf', 1],
      ['a\tb\tc\td\te\tf\n', 2],
      ['a\tb\tc\td\t\\x41\tf\n', 1],
    ];
    for (const [text, rows] of cases) {
      expect(() => ndjsonFromCopy(Buffer.from(text), rows), JSON.stringify(text)).toThrow(CopyFormatError);
    }
  });
});
