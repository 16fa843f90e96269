// The dashboard's filters: the `filters` attribute in the API's wire form
// (`country==DE;channel==Email|SMS`, `!=` excludes, a backslash escapes `;`, `|` or itself), the
// words a filter is shown with, and the readable value of a dimension's value.
import type { StatsDimension, StatsFilter } from '@partner/sdk';

/** Each dimension the API filters on, with the word the dashboard shows it with. */
const DIMENSIONS: Record<StatsDimension, string> = {
  event_name: 'Event',
  path: 'Page',
  referrer: 'Referrer',
  utm_source: 'Source',
  utm_medium: 'Medium',
  utm_campaign: 'Campaign',
  channel: 'Channel',
  entry_page: 'Entry page',
  exit_page: 'Exit page',
  country: 'Country',
  device: 'Device',
  browser: 'Browser',
  os: 'OS',
};

export interface Filter extends StatsFilter {
  values: string[];
  not: boolean;
}

/** Splits on `separator` where no backslash escapes it; `decode`: `\x` reads as `x`. */
function split(text: string, separator: string, decode: boolean): string[] {
  const parts = [''];
  for (let i = 0; i < text.length; i++) {
    let c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      c = decode ? (text[++i] as string) : c + text[++i];
    } else if (c === separator) {
      parts.push('');
      continue;
    }
    parts[parts.length - 1] += c;
  }
  return parts;
}

/** The clauses of a `filters` attribute; a clause that is none (unknown dimension, no `==`) is left out. */
export function parseFilters(text: string | null): Filter[] {
  const filters: Filter[] = [];
  for (const clause of split(text ?? '', ';', false)) {
    const match = /^\s*([a-z_]+)\s*(==|!=)(.*)$/s.exec(clause);
    const dimension = match?.[1] as StatsDimension;
    if (!match || !Object.hasOwn(DIMENSIONS, dimension)) continue;
    // One clause per dimension: the last one given.
    const at = filters.findIndex((f) => f.dimension === dimension);
    if (at >= 0) filters.splice(at, 1);
    filters.push({ dimension, values: split(match[3] as string, '|', true), not: match[2] === '!=' });
  }
  return filters;
}

/** The wire form of `filters` (what the attribute holds). */
export function formatFilters(filters: readonly Filter[]): string {
  const escaped = (value: string) => value.replace(/[\\;|]/g, (c) => `\\${c}`);
  return filters.map((f) => `${f.dimension}${f.not ? '!=' : '=='}${f.values.map(escaped).join('|')}`).join(';');
}

let regions: Intl.DisplayNames | undefined;

/** A value as shown: a country's English name from its ISO code (the browser's data); others as given. */
export function displayValue(dimension: StatsDimension, value: string): string {
  if (dimension !== 'country' || !/^[A-Z]{2}$/.test(value)) return value;
  try {
    regions ??= new Intl.DisplayNames(['en'], { type: 'region' });
    return regions.of(value) ?? value;
  } catch {
    return value;
  }
}

/** "Country is Germany", "Channel is not Email or SMS". */
export function describeFilter(filter: Filter): string {
  const values = filter.values.map((value) => displayValue(filter.dimension, value)).join(' or ');
  return `${DIMENSIONS[filter.dimension]} ${filter.not ? 'is not' : 'is'} ${values}`;
}
