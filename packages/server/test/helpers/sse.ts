import http from 'node:http';

export interface SseFrame {
  id?: string;
  /** The frame's `retry:` field (reconnection delay, ms), when it has one. */
  retry?: number;
  event: string;
  data: string;
}

export interface SseOpenOptions {
  apiKey?: string;
  lastEventId?: string;
  /** Open with the response paused: nothing is read from the socket until `resume()`. */
  paused?: boolean;
}

/**
 * A minimal SSE client over a raw HTTP request (so a test can stop reading and let the socket
 * fill). Frames and comments are collected; `waitFor` waits for a condition on them.
 */
export class SseClient {
  readonly frames: SseFrame[] = [];
  readonly comments: string[] = [];
  /** The body of a response that is not an event stream (an error). */
  body = '';
  ended = false;
  private buffer = '';
  private listeners = new Set<() => void>();
  readonly closed: Promise<void>;

  private constructor(
    private readonly req: http.ClientRequest,
    readonly res: http.IncomingMessage,
  ) {
    this.closed = new Promise((resolve) => {
      const done = () => {
        this.ended = true;
        this.changed();
        resolve();
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    res.setEncoding('utf8');
    const isStream = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
    res.on('data', (chunk: string) => {
      if (isStream) this.parse(chunk);
      else this.body += chunk;
      this.changed();
    });
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  /** `data` of every `event` frame, parsed. */
  events<T = Record<string, unknown>>(): T[] {
    return this.frames.filter((f) => f.event === 'event').map((f) => JSON.parse(f.data) as T);
  }

  static open(url: string, options: SseOpenOptions = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
      if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
      const req = http.get(url, { headers, agent: false }, (res) => {
        if (options.paused) res.pause();
        resolve(new SseClient(req, res));
      });
      req.on('error', reject);
    });
  }

  private parse(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) return;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const frame: SseFrame = { event: 'message', data: '' };
      const data: string[] = [];
      let isFrame = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        isFrame = true;
        if (field === 'id') frame.id = value;
        else if (field === 'event') frame.event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
      }
      if (isFrame) {
        frame.data = data.join('\n');
        this.frames.push(frame);
      }
    }
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Resolves once `condition()` holds; rejects after `timeoutMs` with what was received. */
  waitFor(condition: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(
            `timed out waiting for ${what}: ${this.frames.length} frames, ended=${this.ended}, last=${JSON.stringify(this.frames.at(-1))}`,
          ),
        );
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  waitForEvents(count: number, timeoutMs = 5000): Promise<void> {
    return this.waitFor(() => this.events().length >= count, timeoutMs, `${count} events`);
  }

  resume(): void {
    this.res.resume();
  }

  close(): void {
    this.req.destroy();
  }
}
