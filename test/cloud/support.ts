/**
 * Driving `npm run start:cloud` from a test: a real `node scripts/start-cloud.ts` process on free
 * ports, against the emulators the test command started, with its own project id and data
 * folder; a temp copy of infra/ to break on purpose; the relay's log; a service's pid (to kill
 * it as a crash would); pushing contacts on the demo tenant's edge host; stopping by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'node:http'
import { freePort } from '../../scripts/lib/free-port.ts'
import { descendantsOf, killTree } from '../../scripts/lib/process-tree.ts'
import type { DemoCredentials } from '../../scripts/lib/demo-tenant.ts'
import type { RelayLogLine } from '../../scripts/lib/cloud/push-relay.ts'
import { randomSuffix } from '../helpers/embedded.ts'

export const ROOT = join(import.meta.dirname, '..', '..')
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Ports {
  edge: number
  portal: number
  worker: number
  dispatcher: number
}

export interface CloudRun {
  child: ChildProcess
  dataDir: string
  project: string
  ports: Ports
  output(): string
  exited: Promise<number | null>
  /** pids of everything it started, as seen in /proc while it ran (sampled twice a second) */
  tree(): number[]
}

const runs = new Set<CloudRun>()
const temps: string[] = []
/** each run's Pub/Sub topics and subscriptions being deleted once it has exited */
const forgetting = new Map<CloudRun, Promise<void>>()

/** the names of `kind` (topics, subscriptions) the shared Pub/Sub emulator holds for `project` */
export async function pubsubNames(project: string, kind: 'topics' | 'subscriptions'): Promise<string[]> {
  const res = await fetch(`http://${process.env.PUBSUB_EMULATOR_HOST}/v1/projects/${project}/${kind}?pageSize=1000`)
  const body = (await res.json()) as Record<string, Array<{ name: string }> | undefined>
  return (body[kind] ?? []).map((x) => x.name)
}

/**
 * Deletes a stopped run's subscriptions and topics from the emulator the whole test run shares:
 * each subscription that has carried messages keeps an emulator thread waking for the rest of the
 * run (measured: about 0.016 s of CPU a minute each, nine per stack), and nothing reads a stopped
 * run's project again (it is the run's own).
 */
async function forgetPubsub(project: string): Promise<void> {
  if (!process.env.PUBSUB_EMULATOR_HOST) return
  for (const kind of ['subscriptions', 'topics'] as const)
    for (const name of await pubsubNames(project, kind)) await fetch(`http://${process.env.PUBSUB_EMULATOR_HOST}/v1/${name}`, { method: 'DELETE' })
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}

/** A copy of infra/ to modify; `edit` replaces text that must be there (else the test is void). */
export function infraCopy(edits: Array<{ file: string; from: string | RegExp; to: string }>): string {
  const dir = join(tempDir('lsv-infra-'), 'infra')
  cpSync(join(ROOT, 'infra'), dir, { recursive: true })
  for (const { file, from, to } of edits) {
    const path = join(dir, file)
    const text = readFileSync(path, 'utf8')
    const next = text.replace(from, to)
    if (next === text) throw new Error(`infra copy: ${String(from)} not found in ${file}; the broken-wiring case would test nothing`)
    writeFileSync(path, next)
  }
  return dir
}

export async function startCloud(options: { infraDir?: string; env?: Record<string, string> } = {}): Promise<CloudRun> {
  const ports: Ports = { edge: await freePort(), portal: await freePort(), worker: await freePort(), dispatcher: await freePort() }
  const dataDir = tempDir('lsv-cloud-')
  // a project of its own: its topics, subscriptions and documents collide with no other test's
  const project = `demo-cloud-${randomSuffix(4)}`
  const child = spawn(process.execPath, ['scripts/start-cloud.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST,
      PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST,
      GOOGLE_CLOUD_PROJECT: project,
      CLOUD_DATA_DIR: dataDir,
      EDGE_PORT: String(ports.edge),
      PORTAL_PORT: String(ports.portal),
      UPSERT_WORKER_PORT: String(ports.worker),
      WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
      ...(options.infraDir ? { INFRA_DIR: options.infraDir } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const seen = new Set<number>()
  const sample = () => {
    if (child.exitCode === null && child.pid) for (const pid of descendantsOf(child.pid)) seen.add(pid)
  }
  const sampler = setInterval(sample, 500)
  const run: CloudRun = {
    child,
    dataDir,
    project,
    ports,
    exited,
    output: () => output,
    tree: () => {
      sample()
      return [...seen]
    },
  }
  runs.add(run)
  forgetting.set(
    run,
    exited.then(async () => {
      clearInterval(sampler)
      runs.delete(run)
      await forgetPubsub(project).catch(() => {})
    }),
  )
  return run
}

/** Waits for the banner's last line; throws with the output when the command exits first. */
export async function waitForBanner(run: CloudRun, timeoutMs = 150_000): Promise<DemoCredentials> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (run.output().includes('Stop with Ctrl-C.')) {
      run.tree()
      return JSON.parse(readFileSync(join(run.dataDir, 'demo-credentials.json'), 'utf8')) as DemoCredentials
    }
    if (run.child.exitCode !== null) throw new Error(`start:cloud exited with ${run.child.exitCode} before its banner:\n${run.output()}`)
    await sleep(200)
  }
  throw new Error(`start:cloud printed no banner within ${timeoutMs} ms:\n${run.output()}`)
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** SIGTERM by pid; resolves with the exit code and the pids of its tree still alive afterwards. */
export async function stopCloud(run: CloudRun, timeoutMs = 40_000): Promise<{ code: number | null | 'timeout'; leftovers: number[] }> {
  const tree = run.tree()
  run.child.kill('SIGTERM')
  const code = await Promise.race([run.exited, sleep(timeoutMs).then(() => 'timeout' as const)])
  if (code === 'timeout' && run.child.pid) await killTree(run.child.pid)
  await sleep(200)
  await forgetting.get(run)
  return { code, leftovers: tree.filter(alive) }
}

/** After the file: whatever a failed assertion left running is stopped by pid, temp folders removed. */
export async function cleanUp(): Promise<void> {
  for (const run of [...runs]) {
    const tree = run.tree()
    if (run.child.pid && run.child.exitCode === null) await killTree(run.child.pid, 15_000)
    for (const pid of tree) if (alive(pid)) process.kill(pid, 'SIGKILL')
  }
  await Promise.all(forgetting.values())
  for (const dir of temps) rmSync(dir, { recursive: true, force: true })
}

export function relayLog(run: CloudRun): RelayLogLine[] {
  const file = join(run.dataDir, 'logs', 'push-relay.log')
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RelayLogLine)
}

/** Waits until the relay has forwarded a push of `subscription` and the service answered. */
export async function waitForRelayed(run: CloudRun, subscription: string, timeoutMs = 60_000): Promise<RelayLogLine> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const line = relayLog(run).find((l) => l.subscription === subscription)
    if (line) return line
    await sleep(200)
  }
  throw new Error(`no push of ${subscription} reached the relay within ${timeoutMs} ms:\n${run.output()}`)
}

/** The copy-paste curl commands of the banner (a command continues while a line ends in `\`). */
export function curlCommands(banner: string): string[] {
  const commands: string[] = []
  let current: string | null = null
  for (const line of banner.split('\n')) {
    if (current !== null) current += `\n${line}`
    else if (/^\s+curl /.test(line)) current = line
    if (current !== null && !line.endsWith('\\')) {
      commands.push(current.trim())
      current = null
    }
  }
  return commands
}

/** Pids of the running instance(s) of `service`: processes of the run whose command is its server.ts. */
export function servicePids(run: CloudRun, service: string): number[] {
  const pids: number[] = []
  for (const pid of run.tree()) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(`services/${service}/src/server.ts`)) pids.push(pid)
    } catch {
      // gone
    }
  }
  return pids
}

/** POST /v1/contacts on the demo tenant's edge host (fetch cannot set Host; node:http can, as any client may). */
export function pushContacts(run: CloudRun, c: DemoCredentials, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: run.ports.edge,
        path: '/v1/contacts',
        method: 'POST',
        headers: {
          host: `${c.public_id}.edge.localhost:${run.ports.edge}`,
          authorization: `Bearer ${c.api_key}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (r) => {
        let text = ''
        r.on('data', (d: Buffer) => (text += d.toString('utf8')))
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
