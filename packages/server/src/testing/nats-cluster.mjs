// Plain JavaScript: a JetStream cluster of three `nats-server` processes on loopback, for the cluster system test and
// for a developer.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './net.mjs';

/** True when `nats-server` is on PATH. */
export function natsServerAvailable() {
  const probe = spawnSync('nats-server', ['--version'], { stdio: 'ignore' });
  return probe.status === 0;
}

/** The command line of one node (the same on a restart: same ports, same store). */
function nodeArgs(node, nodes, clusterName) {
  return [
    '-a',
    '127.0.0.1',
    '-p',
    String(node.clientPort),
    '-js',
    '-sd',
    node.storeDir,
    '-n',
    node.name,
    '--cluster_name',
    clusterName,
    '--cluster',
    `nats://127.0.0.1:${node.clusterPort}`,
    '--routes',
    nodes
      .filter((other) => other !== node)
      .map((other) => `nats://127.0.0.1:${other.clusterPort}`)
      .join(','),
    '-m',
    String(node.monitorPort),
  ];
}

/** GET http://127.0.0.1:<monitor port><pathAndQuery> as JSON, or undefined (down, slow). */
export async function monitor(node, pathAndQuery, ms = 2_000) {
  try {
    const res = await fetch(`http://127.0.0.1:${node.monitorPort}${pathAndQuery}`, { signal: AbortSignal.timeout(ms) });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    return await res.json();
  } catch {
    return undefined;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a cluster of `size` (3) nodes and waits until every running node names the same JetStream meta leader. */
export async function startNatsCluster(options = {}) {
  const size = options.size ?? 3;
  const clusterName = options.clusterName ?? 'partner_tags_test';
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'nats-cluster-'));
  const nodes = [];
  for (let i = 0; i < size; i++) {
    const name = `n${i + 1}`;
    nodes.push({
      name,
      clientPort: options.basePorts ? options.basePorts.client + i : await freePort(),
      clusterPort: options.basePorts ? options.basePorts.cluster + i : await freePort(),
      monitorPort: options.basePorts ? options.basePorts.monitor + i : await freePort(),
      storeDir: path.join(dir, name),
      process: undefined,
      output: '',
    });
  }
  for (const node of nodes) node.url = `nats://127.0.0.1:${node.clientPort}`;

  const alive = (node) =>
    node.process !== undefined && node.process.exitCode === null && node.process.signalCode === null;
  const killAllNow = () => {
    for (const node of nodes) if (alive(node)) node.process.kill('SIGKILL');
  };

  const start = async (node) => {
    if (alive(node)) return;
    let child;
    if (options.detached) {
      const { openSync } = await import('node:fs');
      const out = openSync(path.join(dir, `${node.name}.log`), 'a');
      child = spawn('nats-server', nodeArgs(node, nodes, clusterName), { stdio: ['ignore', out, out], detached: true });
      child.unref();
    } else {
      child = spawn('nats-server', nodeArgs(node, nodes, clusterName), { stdio: ['ignore', 'pipe', 'pipe'] });
      const keep = (chunk) => {
        node.output = (node.output + chunk.toString('utf8')).slice(-20_000);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
    }
    node.process = child;
    node.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    // Listening: the monitor answers /healthz (with JetStream still catching up it may answer 503).
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (!alive(node)) throw new Error(`nats-server ${node.name} exited at start:\n${node.output}`);
      const res = await fetch(`http://127.0.0.1:${node.monitorPort}/varz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.body?.cancel().then(() => r.status) ?? r.status,
        () => 0,
      );
      if (res === 200) return;
      if (Date.now() > deadline) throw new Error(`nats-server ${node.name} did not listen in time:\n${node.output}`);
      await sleep(100);
    }
  };

  /** The meta leader's name once every running node names the same one, else undefined. */
  const metaLeader = async () => {
    const running = nodes.filter(alive);
    if (running.length === 0) return undefined;
    const leaders = await Promise.all(
      running.map((node) => monitor(node, '/jsz').then((j) => j?.meta_cluster?.leader)),
    );
    const first = leaders[0];
    return first && leaders.every((l) => l === first) ? first : undefined;
  };

  const waitForMetaLeader = async (ms = 30_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const leader = await metaLeader();
      if (leader) return leader;
      if (Date.now() > deadline) {
        throw new Error(
          `no JetStream meta leader within ${ms} ms:\n${nodes.map((n) => `--- ${n.name}\n${n.output.slice(-2_000)}`).join('\n')}`,
        );
      }
      await sleep(200);
    }
  };

  // This process ends (a failed test run, Ctrl-C): no node outlives it, no store is left behind.
  const onExit = () => {
    killAllNow();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  };
  if (!options.detached) process.once('exit', onExit);

  try {
    await Promise.all(nodes.map(start));
    await waitForMetaLeader(options.timeoutMs ?? 30_000);
  } catch (error) {
    killAllNow();
    await Promise.all(nodes.map((n) => n.exited));
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
    if (!options.detached) process.off('exit', onExit);
    throw error;
  }

  const byName = (name) => {
    const node = nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  };

  return {
    dir,
    nodes,
    clusterName,
    /** Every client URL, comma-separated (EVENT_LOG_URL). */
    url: nodes.map((n) => n.url).join(','),
    alive,
    metaLeader,
    waitForMetaLeader,
    /** Sends `signal` (default SIGKILL) to one node and waits until it exited. */
    async kill(name, signal = 'SIGKILL') {
      const node = byName(name);
      if (alive(node)) node.process.kill(signal);
      await node.exited;
    },
    /** Starts a stopped node again with its ports and store (it catches up from the others). */
    restart: (name) => start(byName(name)),
    /** Kills every node and removes the directory (unless it was given). */
    async stop() {
      killAllNow();
      await Promise.all(nodes.filter((n) => n.exited).map((n) => n.exited));
      if (!options.detached) process.off('exit', onExit);
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
