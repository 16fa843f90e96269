import type { ServerResponse } from 'node:http';

/** Resolves when `stream` can take more, or when the response is gone. */
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
