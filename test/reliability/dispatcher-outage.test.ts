/**
 * Issue 20 item 7: deliveries in flight survive a webhook-dispatcher outage longer than the old
 * queue retry window, in the deployed shape (scripts/lib/cloud/platform.ts: the four services as
 * processes with Terraform's environment, Pub/Sub push through the OIDC relay, the Cloud Tasks
 * stand-in playing the queues' retry config).
 *
 * Five visits are injected; the receiver holds each delivery's request unanswered, so all five
 * tasks are in the dispatcher when its process group gets SIGKILL. The stand-in's attempts then
 * meet a closed port for OUTAGE_MS (6 s: the old config, 3 attempts 1–10 s apart, gave up after
 * ~3 s and lost 5 of 5); the dispatcher is started again with the same command and environment,
 * and every visit must reach the receiver with a 200, with no task dropped.
 * Mutation: QUEUE_RETRY_CONFIG back to { maxAttempts: 3, minBackoff 1 s, maxBackoff 10 s } ->
 * the stand-in logs "dropped" for each task and the deliveries never arrive.
 *
 * The platform restarts a service that exits at once (as Cloud Run does); here its supervisor of
 * the dispatcher is stopped in the same turn as the kill, and the test starts the new instance
 * itself once the outage has lasted OUTAGE_MS.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createServer, type ServerResponse } from 'node:http'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../scripts/lib/free-port.ts'
import { startCloudPlatform, type CloudPlatform } from '../../scripts/lib/cloud/platform.ts'
import { startServiceProcess, waitHealthy, type ServiceProcess } from '../../scripts/lib/cloud/service-processes.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { printFigure } from './support/figures.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const OUTAGE_MS = 6000
const VISITS = 5
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until<T>(what: string, probe: () => T | null | undefined | false, timeoutMs: number, detail: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const v = probe()
    if (v) return v
    await sleep(200)
  }
  throw new Error(`${what}: not within ${timeoutMs} ms\n${detail()}`)
}

/** The receiver: holds requests unanswered while `hold` is on, answers 200 otherwise; counts by webhook-id. */
async function startHoldingReceiver() {
  const held: ServerResponse[] = []
  const seen: string[] = []
  const acked = new Set<string>()
  const state = { hold: true }
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '')
      seen.push(id)
      if (state.hold) held.push(res)
      else {
        acked.add(id)
        res.writeHead(200).end('ok')
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    held,
    seen,
    acked,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const skip = !emulators.firestore || !emulators.pubsub
const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
}, 60_000)

describe.skipIf(skip)('dispatcher outage in the deployed shape', () => {
  it(`SIGKILL of the webhook-dispatcher for ${OUTAGE_MS / 1000} s with ${VISITS} deliveries in flight: every visit is delivered after the restart`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lsv-outage-'))
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    const ports = {
      'edge-ingest': await freePort(),
      'portal-api': await freePort(),
      'upsert-worker': await freePort(),
      'webhook-dispatcher': await freePort(),
    }
    const platform: CloudPlatform = await startCloudPlatform({
      root: ROOT,
      infraDir: join(ROOT, 'infra'),
      dataDir,
      project: `demo-outage-${randomSuffix(4)}`,
      ports,
      edgeDomain: 'edge.localhost',
      edgeBaseUrlTemplate: `http://{public_id}.edge.localhost:${ports['edge-ingest']}`,
      portalBaseUrl: `http://localhost:${ports['portal-api']}`,
      operatorToken: null,
      firestoreHost: emulators.firestore!,
      pubsubHost: emulators.pubsub!,
      say: () => {},
    })
    cleanups.push(() => platform.close())
    const receiver = await startHoldingReceiver()
    cleanups.push(() => receiver.close())
    const tasksLog = () => {
      const file = join(platform.logDir, 'cloud-tasks.log')
      return existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { task?: string; status?: number; error?: string; next?: string; time: string })
        : []
    }

    const portalShape = platform.shape.services.find((s) => s.name === 'portal-api')!
    const operatorToken = platform.store.version(portalShape.secretEnv.OPERATOR_TOKEN ?? 'operator-token', 'latest')!.version.data
    const headers = { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }
    const portal = `http://127.0.0.1:${ports['portal-api']}/api/v1/admin/accounts`
    const account = await fetch(portal, { method: 'POST', headers, body: JSON.stringify({ public_id: `out${randomSuffix(4)}`, name: 'Outage' }) })
    expect(account.status, await account.clone().text()).toBe(201)
    const { id: accountId } = (await account.json()) as { id: string }
    const integration = await fetch(`${portal}/${accountId}/integrations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url, payload_version: 2 }),
    })
    expect(integration.status, await integration.clone().text()).toBe(201)

    const visitIds = Array.from({ length: VISITS }, () => `vis_${randomSuffix(8)}`)
    for (const id of visitIds) {
      const visit = await fetch(`${portal}/${accountId}/visits`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ id, tier: 'company', visit: {}, resolution: { company: { name: 'Acme' }, resolved_by: 'outage-test' } }),
      })
      expect(visit.status, await visit.clone().text()).toBe(202)
    }
    // every delivery is in flight: its task is in the dispatcher, which waits on the receiver
    await until(
      '5 deliveries held at the receiver',
      () => new Set(receiver.seen).size >= VISITS,
      120_000,
      () => JSON.stringify(tasksLog()),
    )

    const supervised = platform.services.find((s) => s.name === 'webhook-dispatcher')!
    const dispatcher = supervised.current()
    const pid = dispatcher.child.pid!
    const env = Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    )
    const killedAt = Date.now()
    // SIGKILL to the group; in the same turn, tell the platform's supervisor not to start a new
    // instance at once (it would, as Cloud Run does): the outage must last OUTAGE_MS
    dispatcher.killGroup()
    const supervisorStopped = supervised.stop()
    await dispatcher.exited
    await supervisorStopped
    receiver.state.hold = false
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - killedAt)))

    const logDir = join(dataDir, 'logs', 'restarted')
    mkdirSync(logDir, { recursive: true })
    const restarted: ServiceProcess = startServiceProcess({ root: ROOT, name: 'webhook-dispatcher', port: ports['webhook-dispatcher'], env, logDir })
    cleanups.push(() => restarted.stop())
    await waitHealthy(restarted, 120_000)
    const backAt = Date.now()

    await until(
      'every visit delivered after the restart',
      () => visitIds.every((id) => receiver.acked.has(id)),
      120_000,
      () =>
        `acked ${[...receiver.acked].join(',')}\n${tasksLog()
          .map((l) => JSON.stringify(l))
          .join('\n')}`,
    )
    const deliveredAt = Date.now()
    const log = tasksLog()
    // the outage was real: the tasks' attempts met the dead dispatcher, and none was given up
    const failedDuringOutage = log.filter((l) => Date.parse(l.time) >= killedAt && Date.parse(l.time) < backAt && (l.status ?? 0) === 0)
    expect(failedDuringOutage.length).toBeGreaterThanOrEqual(VISITS)
    expect(log.filter((l) => l.next?.startsWith('dropped'))).toEqual([])
    const perTask = new Map<string, number>()
    for (const l of failedDuringOutage) perTask.set(l.task!, (perTask.get(l.task!) ?? 0) + 1)
    printFigure(
      'dispatcher outage (deployed shape)',
      `${VISITS}/${VISITS} in-flight deliveries delivered after a ${((backAt - killedAt) / 1000).toFixed(1)} s outage (SIGKILL to healthy again); ` +
        `failed attempts per task during it ${Math.min(...perTask.values())}..${Math.max(...perTask.values())} (the old config dropped a task after 3); ` +
        `last delivery ${((deliveredAt - backAt) / 1000).toFixed(1)} s after the restart`,
    )
  }, 400_000)
})
