import fs from 'node:fs';

export class StoreLockedError extends Error {
  override name = 'StoreLockedError';
  constructor(
    message: string,
    /** Who holds the lock (when known). */
    readonly holder: { pid?: number | undefined; owner?: string | undefined } = {},
  ) {
    super(message);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes an exclusive lock file for the embedded database. */
export function acquireLock(file: string, owner: string): () => void {
  const content = JSON.stringify({ pid: process.pid, owner, since: new Date().toISOString() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, content, { flag: 'wx' });
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8') === content) fs.unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder: { pid?: number; owner?: string } = {};
      try {
        holder = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch {
        // unreadable: treat as stale
      }
      if (typeof holder.pid === 'number' && holder.pid !== process.pid && isAlive(holder.pid)) {
        throw new StoreLockedError(
          `The embedded database is in use by ${holder.owner ?? 'another process'} (pid ${holder.pid}). ` +
            'Stop it first, or point DATABASE_URL at a PostgreSQL server that both can share.',
          { pid: holder.pid, owner: holder.owner },
        );
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new StoreLockedError(`Could not take the lock ${file}`);
}
