import { afterAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { freePort } from '../../scripts/lib/free-port.ts'
import { freeLocalStackPorts } from '../../scripts/lib/local-stack.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { DemoCredentials } from '../../scripts/lib/demo-tenant.ts'
import { Webhook } from 'standardwebhooks'
import { emulators, randomSuffix, tempDataDir } from '../helpers/embedded.ts'
import { startReceiver } from '../outbound/harness.ts'
import { contractValidator } from '../outbound/schema.ts'
import { spawnLocalStack, type LocalStackPorts, type LocalStackProcess } from './local-stack.ts'

const run = promisify(execFile)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Stack = LocalStackProcess
type Ports = LocalStackPorts

const dataDirs: Array<{ cleanup(): void }> = []
afterAll(() => {
  for (const d of dataDirs) d.cleanup()
})

function startStack(data: { dir: string }, ports: Ports, extraEnv: Record<string, string>): Stack {
  return spawnLocalStack(data.dir, ports, extraEnv)
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200
  } catch {
    return false
  }
}

/** Waits until all four services answer /healthz and the banner is printed. */
async function waitReady(stack: Stack, ports: Ports): Promise<void> {
  for (let i = 0; i < 300 && stack.child.exitCode === null; i++) {
    const all = await Promise.all([ports.edge, ports.portal, ports.worker, ports.dispatcher].map(healthy))
    if (all.every(Boolean) && stack.output().includes('Stop with Ctrl-C.')) return
    await sleep(100)
  }
  throw new Error(`local stack did not become ready:\n${stack.output()}`)
}

/** SIGTERM must drain and exit 0 within Cloud Run's 10 s (the same budget locally). */
async function stop(stack: Stack): Promise<number | null | 'timeout'> {
  stack.child.kill('SIGTERM')
  const code = await Promise.race([stack.exited, sleep(10_000).then(() => 'timeout' as const)])
  if (code === 'timeout' && stack.child.pid) process.kill(stack.child.pid, 'SIGKILL')
  return code
}

/** The copy-paste curl commands of the banner (a command continues while a line ends in `\`). */
function curlCommands(banner: string): string[] {
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

async function sh(command: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', command], { timeout: 20_000 })
  return stdout
}

async function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers })
  return { status: res.status, body: await res.json().catch(() => null) }
}

/** The worker applies a batch asynchronously: poll the read API until the contact is there. */
async function waitForContact(c: DemoCredentials, contactId: string): Promise<Record<string, unknown>> {
  const url = `${c.portal_url.replace('localhost', '127.0.0.1')}/api/v1/contacts/${contactId}?include=contact_handles`
  for (let i = 0; i < 200; i++) {
    const res = await getJson(url, { authorization: `Bearer ${c.api_key}` })
    if (res.status === 200) return res.body as Record<string, unknown>
    expect(res.status, JSON.stringify(res.body)).toBe(404)
    await sleep(100)
  }
  throw new Error(`contact ${contactId} was never stored`)
}

async function connectionSources(c: DemoCredentials, ports: Ports): Promise<string[]> {
  const res = await getJson(`http://127.0.0.1:${ports.portal}/api/v1/admin/accounts/${c.account_id}/connections`, {
    authorization: `Bearer ${c.operator_token}`,
  })
  expect(res.status).toBe(200)
  return (JSON.stringify(res.body).match(/"source":"[^"]+"/g) ?? []).map((m) => m.slice(10, -1)).sort()
}

const variants = [
  { name: 'embedded adapters', skip: false, env: (): Record<string, string> => ({}) },
  {
    name: 'Firestore and Pub/Sub emulators',
    skip: !emulators.firestore || !emulators.pubsub,
    // own topic names, so this stack never consumes another test's messages on the shared emulator
    env: (): Record<string, string> => ({
      FIRESTORE_EMULATOR_HOST: emulators.firestore!,
      PUBSUB_EMULATOR_HOST: emulators.pubsub!,
      GOOGLE_CLOUD_PROJECT: emulators.project,
      PUBSUB_NAME_PREFIX: `local-${randomSuffix(4)}-`,
    }),
  },
]

for (const variant of variants)
  describe.skipIf(variant.skip)(`npm start (scripts/start-local.ts) on ${variant.name}`, () => {
    let first: DemoCredentials
    let firstFile: string
    let ports: Ports
    let sourcesAfterFirstRun: string[] = []
    const data = tempDataDir('lsv-local-')
    dataDirs.push(data)
    const env = variant.env()

    it('starts the four services, creates the demo tenant, and the printed curl commands work', async () => {
      ports = await freeLocalStackPorts()
      const stack = startStack(data, ports, env)
      await waitReady(stack, ports)
      firstFile = readFileSync(join(data.dir, 'demo-credentials.json'), 'utf8')
      first = JSON.parse(firstFile) as DemoCredentials
      expect(first).toMatchObject({
        public_id: 'demo',
        edge_url: `http://demo.edge.localhost:${ports.edge}`,
        portal_url: `http://localhost:${ports.portal}`,
        webhook_url: expect.stringMatching(new RegExp(`^http://demo\\.edge\\.localhost:${ports.edge}/v1/contacts/`)),
      })
      expect(first.api_key).toMatch(/^lsk_/)
      expect(first.webhook_token).toMatch(/^lst_/)
      // on a shared emulator `demo` may exist from an earlier run: then new connections are added to it
      expect(stack.output()).toContain('Demo tenant created')
      for (const secret of [first.api_key, first.webhook_token, first.operator_token]) expect(stack.output()).toContain(secret)

      const [push, mint, webhook] = curlCommands(stack.output())
      expect(push, stack.output()).toContain('/v1/contacts')
      expect(JSON.parse(await sh(push!))).toEqual({ ok: true, accepted: 1, queued: true })
      const ada = await waitForContact(first, contactIdFor(first.account_id, first.api_source, 'ada-1'))
      expect(ada).toMatchObject({ identity: { first_name: 'Ada', last_name: 'Lovelace' } })

      const minted = JSON.parse(await sh(mint!)) as { ok: boolean; link: string }
      expect(minted.ok, JSON.stringify(minted)).toBe(true)
      expect(minted.link).toMatch(/^https:\/\/example\.com\/pricing\?lsv=a\./)

      // a visit carrying the minted link's token reaches a local receiver as a signed, schema-valid
      // visitor.identified for Ada (issue 5: push, mint, visit, delivery on the local stack)
      const receiver = await startReceiver()
      try {
        const portal = `http://127.0.0.1:${ports.portal}/api/v1/admin/accounts/${first.account_id}`
        const operator = { authorization: `Bearer ${first.operator_token}`, 'content-type': 'application/json' }
        const created = await fetch(`${portal}/integrations`, {
          method: 'POST',
          headers: operator,
          body: JSON.stringify({ url: receiver.url, payload_version: 2 }),
        })
        expect(created.status, await created.clone().text()).toBe(201)
        const { signing_secret: secret } = (await created.json()) as { signing_secret: string }
        const lsv = new URL(minted.link).searchParams.get('lsv')!
        const visitId = `vis_${randomSuffix(8)}`
        const visit = await fetch(`${portal}/visits`, {
          method: 'POST',
          headers: operator,
          body: JSON.stringify({ id: visitId, tier: 'person', visit: { captured_url: minted.link }, lsv }),
        })
        expect(visit.status, await visit.clone().text()).toBe(202)
        for (let i = 0; i < 200 && receiver.requests.length === 0; i++) await sleep(100)
        const [delivery] = receiver.requests
        expect(delivery, 'no webhook delivered').toBeDefined()
        const verified = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as Record<string, unknown>
        expect(verified).toMatchObject({ event: 'visitor.identified', id: visitId, subject: { id: contactIdFor(first.account_id, first.api_source, 'ada-1') } })
        expect(delivery!.headers['x-service-idempotency-key']).toBe(visitId)
        ;(await contractValidator()).assertWebhookEvent(verified)
      } finally {
        await receiver.close()
      }

      expect(JSON.parse(await sh(webhook!))).toEqual({ ok: true, accepted: 1, queued: true })
      await waitForContact(first, contactIdFor(first.account_id, first.webhook_source, 'grace-1'))

      // the demo tenant's connections (a shared emulator may hold more from earlier runs)
      sourcesAfterFirstRun = await connectionSources(first, ports)
      expect(sourcesAfterFirstRun).toEqual(expect.arrayContaining([first.api_source, first.webhook_source]))
      expect(await stop(stack), stack.output()).toBe(0)
    }, 90_000)

    it('keeps the demo tenant across restarts and drains again on SIGTERM; a start keeps its compiled modules', async () => {
      expect(first, 'the first test must have run').toBeTruthy()
      // a temp folder of its own: npm start's compile cache (scripts/lib/compile-cache.ts) goes
      // to <tmpdir>/node-compile-cache, and nothing in the stack's clean environment turns it on
      // otherwise (the preload left out of package.json's start leaves the folder empty)
      const tmp = tempDataDir('lsv-local-tmpdir-')
      dataDirs.push(tmp)
      const stack = startStack(data, ports, { ...env, TMPDIR: tmp.dir })
      await waitReady(stack, ports)
      expect(stack.output()).toContain('Demo tenant loaded')
      expect(stack.output()).not.toContain('Demo tenant created')
      // not recreated: same file, the same key still reads the contact, and no connection was added
      expect(readFileSync(join(data.dir, 'demo-credentials.json'), 'utf8')).toBe(firstFile)
      await waitForContact(first, contactIdFor(first.account_id, first.api_source, 'ada-1'))
      expect(await connectionSources(first, ports)).toEqual(sourcesAfterFirstRun)
      expect(await stop(stack), stack.output()).toBe(0)
      const cache = join(tmp.dir, 'node-compile-cache')
      expect(existsSync(cache) ? readdirSync(cache, { recursive: true }).length : 0, 'compiled modules kept for the next start').toBeGreaterThan(10)
    }, 60_000)
  })

describe('npm start when a port is taken', () => {
  it('says so and exits 1 instead of hanging half-started', async () => {
    const data = tempDataDir('lsv-local-busy-')
    dataDirs.push(data)
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '0.0.0.0', resolve))
    try {
      const taken = (busy.address() as { port: number }).port
      const ports = { edge: await freePort(), portal: taken, worker: await freePort(), dispatcher: await freePort() }
      const stack = startStack(data, ports, {})
      const code = await Promise.race([stack.exited, sleep(20_000).then(() => 'timeout' as const)])
      if (code === 'timeout' && stack.child.pid) process.kill(stack.child.pid, 'SIGKILL')
      expect(code, stack.output()).toBe(1)
      expect(stack.output()).toMatch(/EADDRINUSE/)
    } finally {
      await new Promise((resolve) => busy.close(resolve))
    }
  }, 30_000)
})
