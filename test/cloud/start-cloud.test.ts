/**
 * `npm run start:cloud` end to end, as a user meets it: the printed curl lines push a contact on
 * the edge, Pub/Sub pushes the batch (through the OIDC relay) to upsert-worker, the contact is in
 * Firestore and readable through the read contract, its change row is on the contact-changes
 * subscription (BigQuery's, here a pull subscription), a visit injected through the management
 * API reaches a local receiver as a signed webhook (Pub/Sub push to the dispatcher, a Cloud Tasks
 * task with the tasks-invoker token), and a replay from the management API delivers it again.
 *
 * Then the wiring is broken on purpose in a copy of infra/, each time as Terraform would deploy it,
 * and the run shows the failure: push subscriptions with `no_wrapper` (400, no contact), a push
 * identity other than the one the worker accepts, even with Cloud Run's invoker grant (401, no
 * contact), a push identity without the
 * invoker grant on the worker's Cloud Run service (Cloud Run's 403, no contact), and a service
 * environment without PUSH_AUDIENCE (upsert-worker refuses to start; start:cloud names it and
 * exits 1). Those four stacks, and the run stopped by a port in use, start together (each on its
 * own ports, project and data folder): each waits for its own outcome (the worker's or Cloud
 * Run's answer in the relay's log, or the exit), and one after the other they took 13–20 s each.
 */
import { afterAll, describe, expect, it, type ExpectStatic } from 'vitest'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { promisify } from 'node:util'
import { Firestore } from '@google-cloud/firestore'
import { Webhook } from 'standardwebhooks'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { pullMessages } from '../../scripts/lib/cloud/pubsub-setup.ts'
import { readDeployedShape } from '../../scripts/lib/cloud/deployed-shape.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { listeningAddresses } from '../helpers/listening.ts'
import { startReceiver } from '../outbound/harness.ts'
import { contractValidator } from '../outbound/schema.ts'
import {
  alive,
  cleanUp,
  curlCommands,
  ROOT,
  infraCopy,
  relayLog,
  sleep,
  startCloud,
  stopCloud,
  waitForBanner,
  waitForRelayed,
  type CloudRun,
} from './support.ts'

const sh = async (command: string) => (await promisify(execFile)('sh', ['-c', command], { timeout: 30_000 })).stdout

afterAll(cleanUp, 60_000)

async function firestoreContact(run: CloudRun, accountId: string, contactId: string): Promise<Record<string, unknown> | null> {
  const fs = new Firestore({ projectId: run.project })
  try {
    const snap = await fs.collection('accounts').doc(accountId).collection('contacts').doc(contactId).get()
    return snap.exists ? (snap.data() as Record<string, unknown>) : null
  } finally {
    await fs.terminate()
  }
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const v = await probe()
    if (v !== null && v !== undefined) return v
    await sleep(250)
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`)
}

const skip = !emulators.firestore || !emulators.pubsub

describe.skipIf(skip)('npm run start:cloud (the deployed shape on this machine)', () => {
  it("push → Firestore → change row → visit → signed delivery → replay, with the banner's curl lines; SIGTERM stops everything", async () => {
    const run = await startCloud()
    const c = await waitForBanner(run)
    expect(c).toMatchObject({ edge_url: `http://demo.edge.localhost:${run.ports.edge}`, portal_url: `http://localhost:${run.ports.portal}` })
    expect(run.output()).toContain(`logs in ${run.dataDir}/logs`)
    // the demo tenant's portal sign-in link, as npm start prints it (test/portal/start-banner.test.ts); it signs in
    const signIn = /^Sign in to the portal as the demo tenant[^\n]*\n\s+(\S+)$/m.exec(run.output())?.[1]
    expect(signIn, run.output()).toMatch(new RegExp(`^http://localhost:${run.ports.portal}/portal/sign-in\\?token=[A-Za-z0-9_-]{43}$`))
    expect((await fetch(signIn!.replace('//localhost:', '//127.0.0.1:'), { redirect: 'manual' })).status).toBe(303)
    // four processes, each with exactly Terraform's environment plus its secrets and the local wiring
    const shape = await readDeployedShape({
      infraDir: join(ROOT, 'infra'),
      project: run.project,
      ports: { 'edge-ingest': run.ports.edge, 'portal-api': run.ports.portal, 'upsert-worker': run.ports.worker, 'webhook-dispatcher': run.ports.dispatcher },
      edgeDomain: 'edge.localhost',
      edgeBaseUrlTemplate: `http://{public_id}.edge.localhost:${run.ports.edge}`,
      portalBaseUrl: `http://localhost:${run.ports.portal}`,
    })
    const wiring = [
      'PORT',
      'LOCAL_WIRING',
      'FIRESTORE_EMULATOR_HOST',
      'PUBSUB_EMULATOR_HOST',
      'CLOUD_TASKS_EMULATOR_HOST',
      'SECRET_MANAGER_EMULATOR_HOST',
      'OIDC_ISSUER',
      'OIDC_JWKS_URL',
      'ALLOW_LOOPBACK_WEBHOOKS',
      'METADATA_SERVER_DETECTION',
      // no OTEL_EXPORTER_OTLP_ENDPOINT here: each service keeps its last spans in DATA_DIR/traces
      'DATA_DIR',
      'LISTEN_HOST',
    ]
    const processes = run.tree().map((pid) => ({ pid, cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') }))
    let workerEnv: Record<string, string> = {}
    for (const service of shape.services) {
      const proc = processes.filter((p) => p.cmd.includes(`services/${service.name}/src/server.ts`))
      expect(proc, service.name).toHaveLength(1)
      const environ = Object.fromEntries(
        readFileSync(`/proc/${proc[0]!.pid}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      )
      // the played front end's secret goes to the services that trust it (INTERNAL_AUTH=front-end)
      const frontEnd = service.env.INTERNAL_AUTH === 'front-end' ? ['LOCAL_FRONT_END_SECRET'] : []
      expect(Object.keys(environ).sort(), service.name).toEqual([...Object.keys(service.env), ...Object.keys(service.secretEnv), ...wiring, ...frontEnd].sort())
      if (service.name === 'upsert-worker') workerEnv = environ
      expect(environ, service.name).toMatchObject({ ...service.env, PORT: String(service.port), LOCAL_WIRING: 'true', LISTEN_HOST: '127.0.0.1' })
      // this machine only, as npm start (mutation: no LISTEN_HOST in the wiring → server.ts's
      // Cloud Run default, every interface: 00000000)
      expect(listeningAddresses(service.port), service.name).toEqual(['0100007F'])
    }

    const [push, mint] = curlCommands(run.output())
    expect(JSON.parse(await sh(push!))).toEqual({ ok: true, accepted: 1, queued: true })
    const contactId = contactIdFor(c.account_id, c.api_source, 'ada-1')

    // Pub/Sub pushed the batch through the relay with the pubsub-push identity, and the worker took it
    const relayed = await waitForRelayed(run, 'contact-batches-push')
    expect(relayed).toMatchObject({
      identity: `pubsub-push@${run.project}.iam.gserviceaccount.com`,
      target: `http://127.0.0.1:${run.ports.worker}/pubsub/contact-batches`,
    })
    expect(relayed.status, JSON.stringify(relayLog(run))).toBeLessThan(300)
    // another process on this machine sending the worker a stripped token with the push identity's
    // claims, straight to its port: refused (mutation: no X-Local-Front-End check → 204)
    const now = Math.floor(Date.now() / 1000)
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
    const claims = {
      iss: workerEnv.OIDC_ISSUER,
      aud: workerEnv.PUSH_AUDIENCE,
      email: workerEnv.PUSH_SERVICE_ACCOUNT,
      email_verified: true,
      iat: now,
      exp: now + 600,
    }
    const forged = await fetch(`http://127.0.0.1:${run.ports.worker}/pubsub/contact-batches`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.SIGNATURE_REMOVED_BY_GOOGLE`,
      },
      body: JSON.stringify({ message: { data: '', messageId: 'forged-1', publishTime: new Date().toISOString() }, subscription: 'projects/x/subscriptions/y' }),
    })
    expect(forged.status).toBe(401)
    const stored = await until('contact in Firestore', () => firestoreContact(run, c.account_id, contactId))
    expect(JSON.stringify(stored)).toContain('Lovelace')
    const read = await fetch(`http://127.0.0.1:${run.ports.portal}/api/v1/contacts/${contactId}?include=contact_handles`, {
      headers: { authorization: `Bearer ${c.api_key}` },
    })
    expect(read.status).toBe(200)
    expect(await read.json()).toMatchObject({
      id: contactId,
      identity: { first_name: 'Ada', last_name: 'Lovelace' },
      handles: { business_email: 'ada@example.com' },
    })

    // the change row BigQuery would get, read from the pull subscription standing in for it
    const row = await until('change row', async () => {
      const messages = await pullMessages(emulators.pubsub!, run.project, 'contact-changes-bigquery')
      return messages.map((m) => JSON.parse(m.data) as Record<string, unknown>).find((r) => r.contact_id === contactId)
    })
    expect(row).toMatchObject({ account_id: c.account_id, contact_id: contactId, source: c.api_source, external_id: 'ada-1', op: 'upsert', first_name: 'Ada' })
    // TIMESTAMP columns as the subscription's writer takes them: integer microseconds (docs/deploy.md)
    for (const column of ['changed_at', 'first_seen_at', 'last_seen_at', 'updated_at'])
      expect(Number.isSafeInteger(row[column]), `${column}: ${JSON.stringify(row[column])}`).toBe(true)

    const minted = JSON.parse(await sh(mint!)) as { ok: boolean; link: string }
    expect(minted.ok, JSON.stringify(minted)).toBe(true)

    const receiver = await startReceiver()
    try {
      const admin = `http://127.0.0.1:${run.ports.portal}/api/v1/admin/accounts/${c.account_id}`
      const operator = { authorization: `Bearer ${c.operator_token}`, 'content-type': 'application/json' }
      const created = await fetch(`${admin}/integrations`, {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ url: receiver.url, payload_version: 2 }),
      })
      expect(created.status, await created.clone().text()).toBe(201)
      const { id: integrationId, signing_secret: secret } = (await created.json()) as { id: string; signing_secret: string }
      const visitId = `vis_${randomSuffix(8)}`
      const visit = await fetch(`${admin}/visits`, {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ id: visitId, tier: 'person', visit: { captured_url: minted.link }, lsv: new URL(minted.link).searchParams.get('lsv') }),
      })
      expect(visit.status, await visit.clone().text()).toBe(202)

      const first = await until('first delivery', async () => receiver.requests[0], 90_000)
      const verified = new Webhook(secret).verify(first.body, first.headers as Record<string, string>) as Record<string, unknown>
      expect(verified).toMatchObject({ event: 'visitor.identified', id: visitId, subject: { id: contactId } })
      ;(await contractValidator()).assertWebhookEvent(verified)
      expect((await waitForRelayed(run, 'visit-events-push')).status).toBeLessThan(300)

      // replay from the management API: portal-api creates the task, Cloud Tasks calls the dispatcher
      const deliveries = await until('delivery logged as succeeded', async () => {
        const res = await fetch(`${admin}/integrations/${integrationId}/deliveries`, { headers: operator })
        const body = (await res.json()) as { data: Array<{ id: string; event_id: string; status: string }> }
        return body.data.find((d) => d.event_id === visitId && d.status === 'succeeded')
      })
      const replay = await fetch(`${admin}/integrations/${integrationId}/deliveries/${deliveries.id}/replay`, { method: 'POST', headers: operator })
      expect(replay.status, await replay.clone().text()).toBe(202)
      const second = await until('replayed delivery', async () => receiver.requests[1], 90_000)
      const again = new Webhook(secret).verify(second.body, second.headers as Record<string, string>) as Record<string, unknown>
      expect(again).toMatchObject({ event: 'visitor.identified', id: visitId, subject: { id: contactId } })
      expect(second.headers['x-service-idempotency-key']).toBe(visitId)
    } finally {
      await receiver.close()
    }

    // only what infra/ declares exists on the emulator: no service created a subscription of its own
    const listed = (await (await fetch(`http://${emulators.pubsub}/v1/projects/${run.project}/subscriptions`)).json()) as {
      subscriptions?: Array<{ name: string }>
    }
    expect((listed.subscriptions ?? []).map((s) => s.name.split('/').pop()).sort()).toEqual(shape.subscriptions.map((s) => s.name).sort())

    const stopped = await stopCloud(run)
    expect(stopped.code, run.output()).toBe(0)
    expect(stopped.leftovers, 'processes left running after SIGTERM').toEqual([])
  }, 240_000)

  /**
   * Pushes one contact with the demo key and waits for the worker's answer to the relayed push.
   * `expect` is the test's own: the broken-wiring tests run concurrently.
   */
  async function pushAndSeeRefused(expect: ExpectStatic, run: CloudRun, expectedStatus: number): Promise<void> {
    const c = await waitForBanner(run)
    // the demo tenant's edge host (fetch cannot set Host; node:http can, as any client may)
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: run.ports.edge,
          path: '/v1/contacts',
          method: 'POST',
          headers: { host: `demo.edge.localhost:${run.ports.edge}`, authorization: `Bearer ${c.api_key}`, 'content-type': 'application/json' },
        },
        (r) => {
          let body = ''
          r.on('data', (d: Buffer) => (body += d.toString('utf8')))
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }))
        },
      )
      req.on('error', reject)
      req.end(JSON.stringify({ contacts: [{ external_id: 'ada-1', email: 'ada@example.com', first_name: 'Ada' }] }))
    })
    expect(res.status, res.body).toBe(202)
    const relayed = await waitForRelayed(run, 'contact-batches-push')
    expect(relayed.status, JSON.stringify(relayLog(run))).toBe(expectedStatus)
    const contactId = contactIdFor(c.account_id, c.api_source, 'ada-1')
    // the refusal is the whole story: no push of that subscription was ever accepted, nothing stored
    expect(relayLog(run).filter((l) => l.subscription === 'contact-batches-push' && l.status < 300)).toEqual([])
    expect(await firestoreContact(run, c.account_id, contactId)).toBeNull()
    const read = await fetch(`http://127.0.0.1:${run.ports.portal}/api/v1/contacts/${contactId}`, { headers: { authorization: `Bearer ${c.api_key}` } })
    expect(read.status).toBe(404)
    const stopped = await stopCloud(run)
    expect(stopped.code, run.output()).toBe(0)
    expect(stopped.leftovers).toEqual([])
  }

  // the broken stacks start together (test.concurrent, each with its own expect): a whole stack
  // each, so a longer bound than one alone needs
  it.concurrent('broken on purpose: push subscriptions with no_wrapper get a 400 from the worker and the contact never arrives', async ({ expect }) => {
    // every push subscription (the dead-letter alerts' too: g)
    const infra = infraCopy([{ file: 'pubsub.tf', from: /push_config \{\n/g, to: 'push_config {\n    no_wrapper {\n      write_metadata = false\n    }\n' }])
    await pushAndSeeRefused(expect, await startCloud({ infraDir: infra }), 400)
  }, 300_000)

  it.concurrent('broken on purpose: Pub/Sub pushing as tasks-invoker instead of pubsub-push (Cloud Run letting it in) gets a 401 from the worker and the contact never arrives', async ({
    expect,
  }) => {
    const infra = infraCopy([
      {
        file: 'pubsub.tf',
        // every push subscription's identity (g)
        from: /service_account_email = google_service_account\.pubsub_push\.email/g,
        to: 'service_account_email = google_service_account.tasks_invoker.email',
      },
      // the invoker grant follows the identity, so the push passes Cloud Run's IAM and meets the worker's own check
      {
        file: 'cloud-run.tf',
        from: /(resource "google_cloud_run_v2_service_iam_member" "pubsub_invoker" \{[\s\S]*?)google_service_account\.pubsub_push\.email/,
        to: '$1google_service_account.tasks_invoker.email',
      },
    ])
    const run = await startCloud({ infraDir: infra })
    await pushAndSeeRefused(expect, run, 401)
    expect(relayLog(run)[0]!.identity).toBe(`tasks-invoker@${run.project}.iam.gserviceaccount.com`)
  }, 300_000)

  it.concurrent('broken on purpose: without the pubsub-push invoker grant on the pushed services, Cloud Run answers 403 and the contact never arrives', async ({
    expect,
  }) => {
    const infra = infraCopy([{ file: 'cloud-run.tf', from: /resource "google_cloud_run_v2_service_iam_member" "pubsub_invoker" \{[\s\S]*?\n\}\n/, to: '' }])
    const run = await startCloud({ infraDir: infra })
    await pushAndSeeRefused(expect, run, 403)
    const refused = relayLog(run).find((l) => l.subscription === 'contact-batches-push')!
    expect(refused.identity).toBe(`pubsub-push@${run.project}.iam.gserviceaccount.com`)
    expect(refused.error).toMatch(/run\.routes\.invoke on service upsert-worker/)
  }, 300_000)

  it.concurrent('broken on purpose: without PUSH_AUDIENCE upsert-worker refuses to start, and start:cloud says which service and why, exit 1', async ({
    expect,
  }) => {
    const infra = infraCopy([{ file: 'service-env.tf', from: /\n\s*PUSH_AUDIENCE\s*=\s*local\.service_url\["upsert-worker"\]/, to: '' }])
    const run = await startCloud({ infraDir: infra })
    const code = await Promise.race([run.exited, sleep(120_000).then(() => 'timeout' as const)])
    expect(code, run.output()).toBe(1)
    expect(run.output()).toMatch(/upsert-worker exited with code 78/)
    expect(run.output()).toMatch(/configuration error: PUSH_AUDIENCE/)
    expect(run.output()).not.toContain('Stop with Ctrl-C.')
    await sleep(500)
    expect(run.tree().length, 'the services were started').toBeGreaterThanOrEqual(1)
    expect(run.tree().filter(alive), 'processes left running').toEqual([])
  }, 300_000)

  it.concurrent('a port already taken (npm start still running, say) stops the run before anything starts, naming the service', async ({ expect }) => {
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '0.0.0.0', resolve))
    try {
      const taken = (busy.address() as { port: number }).port
      const run = await startCloud({ env: { PORTAL_PORT: String(taken) } })
      const code = await Promise.race([run.exited, sleep(60_000).then(() => 'timeout' as const)])
      expect(code, run.output()).toBe(1)
      expect(run.output()).toContain(`port ${taken} of portal-api is in use`)
    } finally {
      await new Promise((resolve) => busy.close(resolve))
    }
  }, 90_000)
})
