/**
 * The two ways to run the platform, started as a user starts them, on free ports with a temp
 * data folder and a known operator token: `npm start` (scripts/start-local.ts, embedded adapters:
 * the emulator variables are removed from its environment) and `npm run start:cloud`
 * (scripts/start-cloud.ts on the emulators the test command started, a project of its own;
 * spawned by test/cloud/support.ts). The suite sees only their URLs.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from '../../scripts/lib/free-port.ts'
import { npmStartArgs } from '../../scripts/lib/local-stack.ts'
import { descendantsOf, killTree } from '../../scripts/lib/process-tree.ts'
import { OPERATOR_TOKEN } from '../management/harness.ts'
import { alive, cleanUp as cleanUpCloud, ROOT, sleep, startCloud, stopCloud, tempDir, waitForBanner } from '../cloud/support.ts'

export interface Stack {
  /** `http://{public_id}.edge.localhost:<port>`, as the services are configured */
  edgeTemplate: string
  portalUrl: string
  output(): string
  /** SIGTERM by pid; the exit code and the pids of its process tree still alive afterwards */
  stop(): Promise<{ code: number | null | 'timeout'; leftovers: number[] }>
}

const locals = new Set<ChildProcess>()

/** After the file: whatever a failed assertion left running is stopped by pid, temp folders removed. */
export async function cleanUpStacks(): Promise<void> {
  for (const child of locals) if (child.pid && child.exitCode === null) await killTree(child.pid, 15_000)
  await cleanUpCloud()
}

export async function startLocalStack(): Promise<Stack> {
  const ports = { edge: await freePort(), portal: await freePort(), worker: await freePort(), dispatcher: await freePort() }
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: tempDir('lsv-blackbox-local-'),
    LOG_LEVEL: 'warn',
    OPERATOR_TOKEN,
    EDGE_PORT: String(ports.edge),
    PORTAL_PORT: String(ports.portal),
    UPSERT_WORKER_PORT: String(ports.worker),
    WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
  }
  // embedded adapters: no emulator, whatever the test command's environment holds
  delete env.FIRESTORE_EMULATOR_HOST
  delete env.PUBSUB_EMULATOR_HOST
  const child = spawn(process.execPath, npmStartArgs(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  locals.add(child)
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      locals.delete(child)
      resolve(code)
    }),
  )
  const deadline = Date.now() + 90_000
  while (!output.includes('Stop with Ctrl-C.')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.pid && child.exitCode === null) await killTree(child.pid)
      throw new Error(`npm start did not become ready:\n${output}`)
    }
    await sleep(100)
  }
  return {
    edgeTemplate: `http://{public_id}.edge.localhost:${ports.edge}`,
    portalUrl: `http://localhost:${ports.portal}`,
    output: () => output,
    async stop() {
      const tree = child.pid ? [child.pid, ...descendantsOf(child.pid)] : []
      child.kill('SIGTERM')
      const code = await Promise.race([exited, sleep(20_000).then(() => 'timeout' as const)])
      if (code === 'timeout' && child.pid) await killTree(child.pid)
      await sleep(200)
      return { code, leftovers: tree.filter(alive) }
    },
  }
}

export async function startCloudStack(): Promise<Stack> {
  const run = await startCloud({ env: { OPERATOR_TOKEN } })
  await waitForBanner(run)
  return {
    edgeTemplate: `http://{public_id}.edge.localhost:${run.ports.edge}`,
    portalUrl: `http://localhost:${run.ports.portal}`,
    output: run.output,
    stop: () => stopCloud(run),
  }
}
