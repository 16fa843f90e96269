// The goals card's CSV, made in the browser, follows the server's CSV rules
// (packages/server/src/transport/rest/stats-csv.ts): RFC 4180 quoting, CRLF, formulas defused.
import { describe, expect, it } from 'vitest';
import { csvField, csvTable, goalsCsv } from '../src/csv.js';
import { durationWords } from '../src/view.js';

describe('CSV', () => {
  it('quotes a field with a quote, comma or line break, doubling its quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('cr\rlf')).toBe('"cr\rlf"');
    expect(csvField(0.25)).toBe('0.25');
  });

  it('prefixes text a spreadsheet would run as a formula with a quote', () => {
    expect(csvField('=HYPERLINK("http://evil.example","x")')).toBe('"\'=HYPERLINK(""http://evil.example"",""x"")"');
    for (const text of ['=1', '+1', '-2+3', '@sum', '\tx']) expect(csvField(text)).toBe(`'${text}`);
    expect(csvField('\rx')).toBe(`"'\rx"`);
    // Numbers are numbers, a negative one too.
    expect(csvField(-1)).toBe('-1');
  });

  it('writes a header and rows, each line ended by CRLF', () => {
    expect(csvTable(['a', 'b'], [[1, 'x,y']])).toBe('a,b\r\n1,"x,y"\r\n');
    expect(csvTable(['a'], [])).toBe('a\r\n');
  });

  it('writes every figure of the goals', () => {
    const goals = [
      { goalId: 'g1', name: 'Signed up', conversions: 3, visitors: 2, conversionRate: 0.5 },
      { goalId: 'g2', name: '=Bought, "twice"', conversions: 0, visitors: 0, conversionRate: 0 },
    ];
    expect(goalsCsv(goals)).toBe(
      'goal_id,name,conversions,visitors,conversion_rate\r\ng1,Signed up,3,2,0.5\r\ng2,"\'=Bought, ""twice""",0,0,0\r\n',
    );
  });
});

describe('funnel window in words', () => {
  it.each([
    ['P1D', '1 day'],
    ['P2DT12H', '2 days 12 hours'],
    ['PT30M', '30 minutes'],
    ['PT1H1M1S', '1 hour 1 minute 1 second'],
    ['P90D', '90 days'],
    ['bogus', 'bogus'],
  ])('%s: %s', (iso, words) => {
    expect(durationWords(iso)).toBe(words);
  });
});
