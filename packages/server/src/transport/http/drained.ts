import type { ServerResponse } from 'node:http';

/**
 * Resolves when `stream` (the response itself, or a gzip stream in front of it) can take more, or
 * when the response is gone: the one backpressure wait of the streamed answers (event stream,
 * export). Listeners are removed either way, so a long stream does not pile them up.
 */
export function drained(stream: NodeJS.WritableStream, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.removeListener('drain', done);
      res.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    res.on('close', done);
  });
}
