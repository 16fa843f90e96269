// A JetStream cluster of three `nats-server` processes on loopback, for running log mode against
// a cluster by hand (docs/scaling.md, "A cluster of three on one machine"):
//   node scripts/nats-cluster.mjs start   # prints the EVENT_LOG_URL to use
//   node scripts/nats-cluster.mjs status  # the meta leader and each node's state
//   node scripts/nats-cluster.mjs stop    # kills the three and removes their stores
// Ports: client 14222-14224, cluster 16222-16224, monitor 18222-18224 (NATS_CLUSTER_BASE_PORT
// moves all three ranges: client = base, cluster = base + 2000, monitor = base + 4000). Stores and
// logs in NATS_CLUSTER_DIR (default <tmp>/partner-tags-nats-cluster). Never the machine's 4222.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitor, natsServerAvailable, startNatsCluster } from '../packages/server/src/testing/nats-cluster.mjs';

const dir = process.env.NATS_CLUSTER_DIR ?? path.join(tmpdir(), 'partner-tags-nats-cluster');
const stateFile = path.join(dir, 'cluster.json');
const base = Number(process.env.NATS_CLUSTER_BASE_PORT ?? 14222);
const action = process.argv[2];

const readState = () => (existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : undefined);
const running = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

if (action === 'start') {
  if (!natsServerAvailable()) {
    console.error('nats-server is not on PATH (Debian: apt-get install nats-server)');
    process.exit(3);
  }
  const state = readState();
  if (state?.nodes.some((n) => running(n.pid))) {
    console.error(`a cluster already runs from ${dir}: node scripts/nats-cluster.mjs stop first`);
    process.exit(1);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cluster = await startNatsCluster({
    dir,
    detached: true,
    clusterName: 'partner_tags_dev',
    basePorts: { client: base, cluster: base + 2000, monitor: base + 4000 },
  });
  writeFileSync(
    stateFile,
    JSON.stringify(
      {
        url: cluster.url,
        nodes: cluster.nodes.map((n) => ({
          name: n.name,
          pid: n.process?.pid,
          clientPort: n.clientPort,
          clusterPort: n.clusterPort,
          monitorPort: n.monitorPort,
        })),
      },
      null,
      2,
    ),
  );
  console.log(`meta leader: ${await cluster.metaLeader()}; stores and logs in ${dir}`);
  console.log(`EVENT_LOG_URL=${cluster.url} EVENT_LOG_REPLICAS=3`);
} else if (action === 'status') {
  const state = readState();
  if (!state) {
    console.log('no cluster started from', dir);
    process.exit(1);
  }
  for (const n of state.nodes) {
    const jsz = running(n.pid) ? await monitor(n, '/jsz') : undefined;
    console.log(
      `${n.name} pid ${n.pid} ${running(n.pid) ? 'running' : 'down'} nats://127.0.0.1:${n.clientPort} monitor :${n.monitorPort}` +
        (jsz ? ` meta leader ${jsz.meta_cluster?.leader ?? '(none)'}, streams ${jsz.streams}` : ''),
    );
  }
  console.log(`EVENT_LOG_URL=${state.url}`);
} else if (action === 'stop') {
  const state = readState();
  for (const n of state?.nodes ?? []) if (n.pid && running(n.pid)) process.kill(n.pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while ((state?.nodes ?? []).some((n) => n.pid && running(n.pid)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const n of state?.nodes ?? []) if (n.pid && running(n.pid)) process.kill(n.pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  console.log(state ? `stopped; removed ${dir}` : `nothing started from ${dir}`);
} else {
  console.error('usage: node scripts/nats-cluster.mjs start|status|stop');
  process.exit(2);
}
