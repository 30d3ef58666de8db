/**
 * One redaction policy for every sink (issue 28 item 5; shared/src/logging/redact.ts), checked as
 * an attacker reads a running stack: `npm start` (scripts/start-local.ts) with debug logging and
 * its spans written to DATA_DIR/traces, sent each credential kind through every door it can take:
 * - an API key (`lsk_…`) in `Authorization`, in `x-api-key`, in a record's key and value, and in
 *   a URL path;
 * - a source token (`lst_…`) in `?token=`, in `x-webhook-token`, in a record's value;
 * - a sign-in link's token (`/portal/sign-in?token=…`), the session cookie it gives (`Cookie`),
 *   a reveal page's id (`/portal/reveal/<id>`);
 * - a webhook signing secret (`whsec_…`) echoed by a receiver in its answer's headers and body;
 * - a receiver URL's query and userinfo.
 * Then every sink is read: the process's log output, the trace files, the inbound debugger's and
 * the delivery debugger's portal pages, the audit page, and the operational events (logged lines).
 * None holds a secret in clear. Before the span processor, the trace file held the sign-in token,
 * the reveal id and the source token (`url.full`, `url.query`, `url.path`, `http.target`).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freeLocalStackPorts } from '../../scripts/lib/local-stack.ts'
import { readDemoCredentials } from '../../scripts/lib/demo-tenant.ts'
import { randomSuffix, tempDataDir } from '../helpers/embedded.ts'
import { spawnLocalStack, type LocalStackProcess } from '../local/local-stack.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const dir = tempDataDir()
let receiver: Server | undefined
afterAll(async () => {
  await new Promise((r) => (receiver ? receiver.close(r) : r(undefined)))
  dir.cleanup()
})

/** a request to a `*.localhost` edge URL: sent to loopback with the URL's Host (this machine's resolver may not know `*.localhost`) */
function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<number> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: u.port, path: `${u.pathname}${u.search}`, method: init.method ?? 'GET', headers: { ...init.headers, host: u.host } },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, output: () => string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await probe().catch(() => null)
    if (v) return v
    await sleep(100)
  }
  throw new Error(`${what} never happened:\n${output().slice(-4000)}`)
}

/** a receiver that answers every delivery 500, echoing `echo` in a header, a cookie and its body */
async function startEchoReceiver(echo: () => string): Promise<{ port: number; hits: number }> {
  const state = { port: 0, hits: 0 }
  receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      state.hits++
      res.writeHead(500, { 'content-type': 'text/plain', 'x-echo': echo(), 'set-cookie': `rsess=${echo()}` })
      res.end(`rejected: ${echo()}`)
    })
  })
  await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r))
  state.port = (receiver.address() as AddressInfo).port
  return state
}

describe('no sink keeps a credential in clear', () => {
  it('sends every credential kind through every door, then greps logs, traces, both debuggers, audit and operational events', async () => {
    const ports = await freeLocalStackPorts()
    // as `npm start` runs it: OpenTelemetry preloaded (package.json "start")
    const preload = join(import.meta.dirname, '..', '..', 'scripts', 'lib', 'telemetry-preload.ts')
    // refused doors traced too (an unknown reveal id, a wrong token): the policy must hold for whatever an operator chooses to trace
    const stack: LocalStackProcess = spawnLocalStack(dir.dir, ports, {
      LOG_LEVEL: 'debug',
      TRACE_EXPORTER: 'file',
      TRACE_REFUSED_REQUESTS: 'true',
      NODE_OPTIONS: `--import ${preload}`,
    })
    await until('the banner', async () => stack.output().includes('Stop with Ctrl-C.'), stack.output)
    const creds = readDemoCredentials(dir.dir)!
    const portal = creds.portal_url.replace(/\/+$/, '')
    const admin = `${portal}/api/v1/admin/accounts/${creds.account_id}`
    const operator = { authorization: `Bearer ${creds.operator_token}`, 'content-type': 'application/json' }

    // a sign-in link of our own (the banner's is printed to the log on purpose: the operator's copy)
    const link = (await (await fetch(`${admin}/portal-links`, { method: 'POST', headers: operator, body: '{}' })).json()) as { url: string }
    const signInToken = new URL(link.url).searchParams.get('token')!
    const signIn = await fetch(link.url, { redirect: 'manual' })
    const sessionCookie = /lsv_portal=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')?.[1]
    expect(sessionCookie, `sign-in answered ${signIn.status}`).toBeTruthy()
    const cookie = `lsv_portal=${sessionCookie}`
    const revealId = randomSuffix(11) // 22 characters, as a reveal id's base64url

    // the receiver: its URL carries a password and a query credential; it echoes the signing secret
    let signingSecret = ''
    const rcv = await startEchoReceiver(() => signingSecret)
    const receiverPassword = `rcvpw${randomSuffix(12)}`
    const receiverQuery = `rcvq${randomSuffix(12)}`
    const receiverUrl = `http://hook:${receiverPassword}@127.0.0.1:${rcv.port}/hook?auth=${receiverQuery}`
    let created = await fetch(`${admin}/integrations`, { method: 'POST', headers: operator, body: JSON.stringify({ url: receiverUrl, payload_version: 2 }) })
    let userinfo = true
    if (created.status !== 201) {
      // a URL with userinfo may be refused at the door: then the query alone is the receiver's credential
      userinfo = false
      created = await fetch(`${admin}/integrations`, {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ url: receiverUrl.replace(`hook:${receiverPassword}@`, ''), payload_version: 2 }),
      })
    }
    expect(created.status, await created.clone().text()).toBe(201)
    const integration = (await created.json()) as { id: string; signing_secret: string }
    signingSecret = integration.signing_secret

    // the doors of the edge: headers, query, body (keys and values), path
    const edge = creds.edge_url.replace(/\/+$/, '')
    const records = JSON.stringify({
      records: [{ external_id: `r-${randomSuffix(6)}`, note: `${creds.api_key} ${creds.webhook_token}`, [creds.api_key]: 'x' }],
    })
    const json = { 'content-type': 'application/json' }
    const doors: Array<[string, { method?: string; headers?: Record<string, string>; body?: string }]> = [
      [`${edge}/v1/contacts`, { method: 'POST', headers: { ...json, authorization: `Bearer ${creds.api_key}` }, body: records }],
      [`${edge}/v1/contacts`, { method: 'POST', headers: { ...json, 'x-api-key': creds.api_key }, body: records }],
      [`${edge}/v1/contacts`, { method: 'POST', headers: { ...json, authorization: `Bearer ${creds.api_key}`, 'x-api-key': creds.api_key }, body: records }],
      [creds.webhook_url, { method: 'POST', headers: json, body: records }],
      [
        creds.webhook_url.replace(/token=[^&]+/, 'token=lst_wrongwrongwrongwrong'),
        { method: 'POST', headers: { ...json, 'x-webhook-token': creds.webhook_token }, body: records },
      ],
      [`${edge}/v1/contacts/${creds.api_key}?token=${creds.webhook_token}`, { method: 'POST', headers: json, body: records }],
      [`${portal}/portal/reveal/${revealId}`, { headers: { cookie } }],
      [`${portal}/portal/?token=${signInToken}`, { headers: { cookie } }],
    ]
    for (const [url, init] of doors) await send(url, init)

    // a delivery to the receiver (a visit of the account), answered with the echo
    const visit = {
      id: `evt-${randomSuffix(8)}`,
      tier: 'company',
      visit: { captured_url: 'https://example.com/' },
      resolution: { company: { name: 'Acme' }, resolved_by: 'test' },
    }
    expect((await fetch(`${admin}/visits`, { method: 'POST', headers: operator, body: JSON.stringify(visit) })).status).toBe(202)
    await until('a delivery attempt', async () => rcv.hits > 0, stack.output)
    const deliveries = `${admin}/integrations/${integration.id}/deliveries`
    const delivery = await until(
      'the attempt recorded',
      async () => {
        const page = (await (await fetch(deliveries, { headers: operator })).json()) as { data: Array<{ id: string; attempts: unknown[] }> }
        return page.data.find((d) => d.attempts.length > 0)
      },
      stack.output,
    )

    // the sinks: the debuggers' pages, the audit page, then logs and traces (after the batch export)
    const page = async (path: string) => (await fetch(`${portal}${path}`, { headers: { cookie } })).text()
    const connections = await page('/portal/connections')
    const connectionIds = [...new Set([...connections.matchAll(/\/portal\/connections\/([A-Za-z0-9_-]+)/g)].map((m) => m[1]!))]
    // the inbound debugger writes its entries a few seconds after the answers, in batches
    const pushPages = await until(
      'the inbound debugger showing the pushes',
      async () => {
        const pages = await Promise.all(connectionIds.map((id) => page(`/portal/connections/${id}/pushes`)))
        return pages.every((p) => !p.includes('No pushes in the last')) ? pages : null
      },
      stack.output,
    )
    const deliveryPage = await page(`/portal/webhooks/${integration.id}/deliveries/${encodeURIComponent(delivery.id)}`)
    expect(deliveryPage).toContain(`127.0.0.1:${rcv.port}/hook`) // the receiver's URL is still shown
    const auditPage = await page('/portal/audit')
    const tracesDir = join(dir.dir, 'traces')
    const traces = await until(
      'the spans of the doors',
      async () => {
        const text = existsSync(tracesDir)
          ? readdirSync(tracesDir)
              .map((f) => readFileSync(join(tracesDir, f), 'utf8'))
              .join('\n')
          : ''
        return text.includes('/portal/reveal/') && text.includes('/hook') ? text : null
      },
      stack.output,
    )
    // the banner prints the demo's credentials on purpose (the operator's own copy): the log lines follow it
    const logs = stack.output().slice(stack.output().indexOf('Stop with Ctrl-C.'))
    const operationalEvents = logs
      .split('\n')
      .filter((l) => l.includes('operational_event'))
      .join('\n')

    const secrets: Record<string, string> = {
      'API key': creds.api_key,
      'source token': creds.webhook_token,
      'sign-in token': signInToken,
      'session cookie': sessionCookie!,
      'reveal id': revealId,
      'signing secret': signingSecret,
      "receiver URL's query": receiverQuery,
      ...(userinfo ? { "receiver URL's password": receiverPassword } : {}),
    }
    const sinks: Record<string, string> = {
      'log output': logs,
      'trace files': traces,
      'inbound debugger': pushPages.join('\n'),
      'delivery debugger': deliveryPage,
      'audit page': auditPage,
      'operational events': operationalEvents,
    }
    const found: string[] = []
    for (const [sink, text] of Object.entries(sinks))
      for (const [kind, secret] of Object.entries(secrets)) if (text.includes(secret)) found.push(`${kind} in ${sink}`)
    expect(found).toEqual([])
    stack.child.kill('SIGTERM')
    await stack.exited
  }, 180_000)
})
