// Plain JavaScript: the one freePort, shared by the TypeScript tests and benches and by the repository's node scripts
// that run before anything is built.
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picked it; the probe is closed). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
