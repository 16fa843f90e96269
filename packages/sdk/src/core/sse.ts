import { APIConnectionError, APIUserAbortError, PartnerError } from './errors.js';
import { makeAPIError } from './make-error.js';
import { backoffDelayMs, defaultSleep, isRetryableStatus, parseRetryAfterMs, type Sleep } from './retry.js';

/** One Server-Sent Events message (comments are dropped). */
export interface SSEMessage {
  /** The `id` field; `undefined` when the message set none. */
  id: string | undefined;
  /** The `event` field (`message` by default). */
  event: string;
  data: string;
  /** A `retry` field (reconnection delay the server asks for, ms). */
  retry: number | undefined;
}

/**
 * An incremental parser of the `text/event-stream` format (WHATWG HTML, "Server-sent events"):
 * feed it decoded text as it arrives, get whole messages back. Handles `\n`, `\r\n` and `\r` line
 * ends split across chunks, multi-line `data`, comments, a leading BOM, and fields without a value.
 */
export class SSEParser {
  private buffer = '';
  private started = false;
  private pendingCR = false;
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  private retry: number | undefined;
  private hasData = false;

  /** Parses `chunk`; returns the messages it completed. */
  push(chunk: string): SSEMessage[] {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A `\r` that ended the last chunk already ended its line: drop a `\n` that follows it.
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1);
    this.pendingCR = false;
    this.buffer += text;
    const out: SSEMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone `\r` at the very end may be the first half of `\r\n`.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) {
        this.pendingCR = true;
        const line = this.buffer.slice(0, match.index);
        this.buffer = '';
        const message = this.line(line);
        if (message) out.push(message);
        break;
      }
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SSEMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
    return null;
  }

  private dispatch(): SSEMessage | null {
    const message: SSEMessage | null = this.hasData
      ? { id: this.id, event: this.event || 'message', data: this.data.join('\n'), retry: this.retry }
      : null;
    this.data = [];
    this.hasData = false;
    this.event = '';
    this.retry = undefined;
    // The id persists (it is the stream's "last event id") but is reported only with its message.
    this.id = undefined;
    return message;
  }
}

/** Reads a `fetch` response body as SSE messages. */
async function* readSSE(body: ReadableStream<Uint8Array>): AsyncGenerator<SSEMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const message of parser.push(decoder.decode(value, { stream: true }))) yield message;
    }
    for (const message of parser.push(`${decoder.decode()}\n\n`)) yield message;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** What a reconnecting stream needs from the transport. */
export interface StreamConnector {
  /** Opens the stream once, resuming after `lastEventId` when set; the response is unread. */
  open(lastEventId: string | undefined, signal: AbortSignal): Promise<Response>;
}

export interface ReconnectOptions {
  signal?: AbortSignal | undefined;
  /** Failed connection attempts in a row before giving up (default: never give up). */
  maxRetries?: number | undefined;
  /** The id to resume after on the first connection. */
  lastEventId?: string | undefined;
  /** The wait between reconnections (default: a timer). */
  sleep?: Sleep | undefined;
}

/**
 * Messages of a stream that reconnects: after a dropped connection, a server that closed the
 * stream (a restart) or a final `error` message (a consumer that fell behind), it reconnects with
 * backoff and `Last-Event-ID`, so no message is missed or repeated. Ends quietly on abort. An API
 * error that retrying cannot fix (401, 404, 400...) is thrown.
 */
export async function* reconnectingSSE(
  connector: StreamConnector,
  options: ReconnectOptions = {},
): AsyncGenerator<SSEMessage & { event: string }> {
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) return;
  outer?.addEventListener('abort', onAbort, { once: true });
  const signal = controller.signal;
  let lastEventId = options.lastEventId;
  let failures = 0;
  let retryAfter: number | null = null;
  const maxRetries = options.maxRetries ?? Number.POSITIVE_INFINITY;
  try {
    for (;;) {
      if (signal.aborted) return;
      if (failures > 0) {
        if (failures > maxRetries) {
          throw new APIConnectionError(`The event stream failed ${failures} times in a row; giving up.`);
        }
        try {
          await (options.sleep ?? defaultSleep)(retryAfter ?? backoffDelayMs(failures - 1), signal);
        } catch (error) {
          if (error instanceof APIUserAbortError) return;
          throw error;
        }
        retryAfter = null;
      }
      let response: Response;
      try {
        response = await connector.open(lastEventId, signal);
      } catch (error) {
        if (signal.aborted || error instanceof APIUserAbortError) return;
        if (!(error instanceof APIConnectionError)) throw error;
        failures += 1;
        continue;
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        const apiError = makeAPIError(response.status, text, response.headers);
        if (!isRetryableStatus(response.status)) throw apiError;
        const requested = parseRetryAfterMs(response.headers);
        retryAfter = requested !== null && requested <= 60_000 ? requested : null;
        failures += 1;
        continue;
      }
      if (!response.body) throw new PartnerError('The event stream answered without a body.');
      let received = false;
      try {
        for await (const message of readSSE(response.body)) {
          if (message.id !== undefined) lastEventId = message.id;
          if (message.event === 'error') {
            // The server's last word (too slow, a database failure): reconnect from the last id.
            break;
          }
          if (!received) {
            received = true;
            failures = 0;
          }
          yield message;
          if (signal.aborted) return;
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof PartnerError) throw error;
        // A dropped connection: reconnect.
      }
      if (signal.aborted) return;
      failures += 1;
    }
  } finally {
    outer?.removeEventListener('abort', onAbort);
    // A consumer that stopped iterating (break, return) closes the connection.
    controller.abort();
  }
}
