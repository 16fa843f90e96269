/** The export's lines from PostgreSQL's COPY text format, byte by byte. */

const enc = (text: string) => Buffer.from(text, 'latin1');
const PREFIXES = [
  enc('{"id":"'),
  enc('","muid":"'),
  enc('","event_name":"'),
  enc('","event_time":"'),
  enc('","raw_data":"'),
  enc('","consent":"'),
];
const SUFFIX = enc('"}\n');
const HEX = enc('0123456789abcdef');
const TAB = 9;
const NEWLINE = 10;
const QUOTE = 34;
const BACKSLASH = 92;
/** The bytes after a backslash that COPY writes and JSON reads the same way. */
const SAME_ESCAPES = new Set([BACKSLASH, 110, 114, 116, 98, 102]); // \ n r t b f
const V = 118;
const FIELDS = PREFIXES.length;
/** Fixed bytes per line: the six prefixes and the suffix. */
const FIXED = PREFIXES.reduce((n, p) => n + p.length, 0) + SUFFIX.length;

let scratch = Buffer.alloc(0);

/** What COPY sent that these columns cannot hold (a NULL, an unknown escape, a short row). */
export class CopyFormatError extends Error {}

export interface NdjsonBatch {
  bytes: Buffer;
  lines: number;
  /** The buffer `bytes` lies in (`into`, or a new one when it was too small): reuse it once `bytes` is written. */
  buffer: Buffer;
}

/** `rows` COPY text rows of the six columns, as NDJSON, in `into` when it is large enough. */
export function ndjsonFromCopy(src: Buffer, rows: number, into?: Buffer): NdjsonBatch {
  // Written into one scratch buffer sized for the worst case, reused by every batch, then copied out at its exact size:
  // into the caller's buffer when it has room.
  const need = src.length * 6 + rows * FIXED;
  if (scratch.length < need) scratch = Buffer.allocUnsafe(need);
  const out = scratch;
  let o = 0;
  let i = 0;
  let lines = 0;
  const n = src.length;
  while (i < n) {
    for (let field = 0; field < FIELDS; field++) {
      // Short constants: a loop here is cheaper than a native Buffer.copy call for each.
      const prefix = PREFIXES[field] as Buffer;
      for (let k = 0; k < prefix.length; k++) out[o++] = prefix[k] as number;
      const end = field === FIELDS - 1 ? NEWLINE : TAB;
      for (;;) {
        if (i >= n) throw new CopyFormatError('a COPY row ended early');
        const b = src[i] as number;
        if (b > QUOTE && b !== BACKSLASH) {
          out[o++] = b;
          i++;
          continue;
        }
        if (b === end) {
          i++;
          break;
        }
        if (b === QUOTE) {
          out[o++] = BACKSLASH;
          out[o++] = QUOTE;
          i++;
        } else if (b === BACKSLASH) {
          const c = src[i + 1] as number;
          if (SAME_ESCAPES.has(c)) {
            out[o++] = BACKSLASH;
            out[o++] = c;
          } else if (c === V) {
            o += out.write('\\u000b', o, 'latin1');
          } else {
            throw new CopyFormatError(`unexpected COPY escape \\${String.fromCharCode(c)}`);
          }
          i += 2;
        } else if (b < 0x20) {
          if (b === TAB || b === NEWLINE) throw new CopyFormatError('a COPY row has the wrong number of columns');
          o += out.write('\\u00', o, 'latin1');
          out[o++] = HEX[b >> 4] as number;
          out[o++] = HEX[b & 15] as number;
          i++;
        } else {
          out[o++] = b;
          i++;
        }
      }
    }
    for (let k = 0; k < SUFFIX.length; k++) out[o++] = SUFFIX[k] as number;
    lines++;
  }
  if (lines !== rows) throw new CopyFormatError(`expected ${rows} COPY rows, read ${lines}`);
  const buffer = into && into.length >= o ? into : Buffer.allocUnsafe(o + (o >> 3));
  out.copy(buffer, 0, 0, o);
  return { bytes: buffer.subarray(0, o), lines, buffer };
}

/** Room for one line (a longer one gets its own buffer): the line is read as text at once. */
const LAST_LINE = Buffer.alloc(4096);

/** The NDJSON line (without its newline) of the last of the COPY text rows in `src` (at least one). */
export function lastLineOfCopy(src: Buffer): string {
  // A row's newline is its end: COPY text writes a newline inside a value as `\n`.
  const start = src.lastIndexOf(NEWLINE, src.length - 2) + 1;
  const { bytes: line } = ndjsonFromCopy(src.subarray(start), 1, LAST_LINE);
  return line.toString('utf8', 0, line.length - 1);
}
