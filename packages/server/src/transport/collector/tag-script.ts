import { createHash } from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { TagConsent } from '../../features/tags/consent.js';
import { TtlCache } from '../../kernel/ttl-cache.js';

const SOURCE_PATH = new URL('./script/tag.js', import.meta.url);

/** The script source with comment lines and indentation dropped (the file keeps them for reading). */
function scriptTemplate(): string {
  return fs
    .readFileSync(SOURCE_PATH, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))
    .join('\n');
}

export interface TagScript {
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  etag: string;
}

let template: string | undefined;

/** The tag script of one tag (its id and consent settings baked in), compressed once for gzip and brotli. */
function buildTagScript(tagId: string, consent: TagConsent): TagScript {
  template ??= scriptTemplate();
  const config = JSON.stringify({ mode: consent.mode, gpc: consent.respectGpc, cookieless: consent.cookieless });
  const body = Buffer.from(template.replace('__TAG_ID__', tagId).replace('__TAG_CONSENT__', config), 'utf8');
  return {
    body,
    gzip: zlib.gzipSync(body, { level: 9 }),
    brotli: zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    // Weak: the same validator for every content encoding of the same script.
    etag: `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

const scripts = new TtlCache<string, TagScript>(10_000);

/** `buildTagScript`, kept for an hour per tag and consent settings. */
export function tagScript(tagId: string, consent: TagConsent): TagScript {
  const key = `${tagId}:${consent.mode}:${consent.respectGpc}:${consent.cookieless}`;
  let script = scripts.get(key);
  if (!script) {
    script = buildTagScript(tagId, consent);
    scripts.set(key, script, 3_600_000);
  }
  return script;
}

/** The encoding to answer with for an Accept-Encoding header: brotli, then gzip, else none. */
export function pickEncoding(header: string | undefined): 'br' | 'gzip' | null {
  const accepted = new Map<string, number>();
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return null;
}
