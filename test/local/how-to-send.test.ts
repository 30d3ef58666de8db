import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalStack, type LocalStack } from '../browser/support.ts'

const run = promisify(execFile)

/**
 * Issue 22, job 7: the "How to send" examples on a connection's page are run as a tenant would
 * run them, against `npm start`'s stack on loopback: the curl line with curl, the Node snippet
 * with node, the Python snippet with python3, each with the placeholder replaced by a real
 * secret, each answered 202. The tenant's edge host is `<public_id>.localhost`: curl resolves
 * `*.localhost` to loopback itself; node and python3 get a stand-in for DNS that maps
 * `*.localhost` to 127.0.0.1 and refuses every other name (a snippet can reach nothing else).
 *
 * Mutations that fail it: a wrong path or header name in how-to-send.ts (404/401 instead of 202);
 * the API's host instead of the account's edge host (404); the snippets escaped twice or not
 * through `html` (the extracted text no longer runs); a real key on the page (the "never the
 * secret" check).
 */
const NODE_DNS = `import dns from 'node:dns'
const lookup = dns.lookup
dns.lookup = (host, options, callback) => {
  if (!host.endsWith('.localhost')) throw new Error('only *.localhost in this test: ' + host)
  return lookup('127.0.0.1', options, callback)
}
`
const PYTHON_DNS = `import socket, sys
_lookup = socket.getaddrinfo
def _loopback(host, *args, **kwargs):
    if not str(host).endswith('.localhost'):
        raise OSError('only *.localhost in this test: ' + str(host))
    return _lookup('127.0.0.1', *args, **kwargs)
socket.getaddrinfo = _loopback
path = sys.argv[1]
exec(compile(open(path).read(), path, 'exec'))
`

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }

/** The text of `<code id="ID">` in a page, as the browser shows it (and a copy button copies it). */
function codeText(page: string, id: string): string {
  const m = new RegExp(`<code id="${id}">([\\s\\S]*?)</code>`).exec(page)
  if (!m) throw new Error(`no <code id="${id}"> on the page`)
  return m[1]!.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!)
}

describe('"How to send" examples run against the local stack', { timeout: 180_000 }, () => {
  let stack: LocalStack
  let dir: string
  const publicId = `t-${randomBytes(5).toString('hex')}`
  let cookie: string
  const operator = () => ({ authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' })
  const admin = async (path: string, body: object) => {
    const res = await fetch(`${stack.portal}/api/v1/admin${path}`, { method: 'POST', headers: operator(), body: JSON.stringify(body) })
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(201)
    return (await res.json()) as Record<string, string>
  }
  const connections: Array<{ kind: string; id: string; secret: string; placeholder: string }> = []

  beforeAll(async () => {
    stack = await startLocalStack()
    dir = mkdtempSync(join(tmpdir(), 'lsv-how-to-send-'))
    writeFileSync(join(dir, 'dns.mjs'), NODE_DNS)
    writeFileSync(join(dir, 'dns.py'), PYTHON_DNS)
    const account = await admin('/accounts', { public_id: publicId, name: 'How to send' })
    const api = await admin(`/accounts/${account.id}/connections`, { type: 'api', name: 'API' })
    const key = await admin(`/accounts/${account.id}/connections/${api.id}/keys`, {})
    const webhook = await admin(`/accounts/${account.id}/connections`, { type: 'webhook', name: 'Zapier' })
    const crm = await admin(`/accounts/${account.id}/connections`, { type: 'partnercrm', name: 'CRM' })
    const location = await admin(`/accounts/${account.id}/connections/${crm.id}/locations`, { location_id: `loc-${randomBytes(3).toString('hex')}` })
    connections.push(
      { kind: 'api', id: api.id!, secret: key.key!, placeholder: 'YOUR_API_KEY' },
      { kind: 'webhook', id: webhook.id!, secret: webhook.token!, placeholder: 'YOUR_SOURCE_TOKEN' },
      { kind: 'partnercrm', id: crm.id!, secret: location.token!, placeholder: 'YOUR_LOCATION_TOKEN' },
    )
    const link = (await admin(`/accounts/${account.id}/portal-links`, {})).url!
    const signIn = await fetch(link, { redirect: 'manual' })
    expect(signIn.status).toBe(303)
    cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!
  }, 180_000)
  afterAll(async () => {
    await stack?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const accepted = { ok: true, accepted: 1, queued: true }

  for (const kind of ['api', 'webhook', 'partnercrm']) {
    it(`${kind}: the page's curl, Node and Python examples each get 202 from the account's edge host`, async () => {
      const c = connections.find((x) => x.kind === kind)!
      const res = await fetch(`${stack.portal}/portal/connections/${encodeURIComponent(c.id)}`, { headers: { cookie } })
      expect(res.status).toBe(200)
      const page = await res.text()
      // the page shows a placeholder, never the secret
      expect(page).not.toContain(c.secret)
      // the account's own edge host (EDGE_BASE_URL_TEMPLATE, as the demo account's edge_url)
      const edgeOrigin = stack.credentials.edge_url.replace(stack.credentials.public_id, publicId)
      expect(new URL(edgeOrigin).port).toBe(String(stack.ports.edge))
      expect(codeText(page, 'send-url')).toMatch(new RegExp(`^POST ${edgeOrigin.replaceAll('.', '\\.')}/v1/contacts`))

      const examples = { curl: codeText(page, 'send-curl'), node: codeText(page, 'send-node'), python: codeText(page, 'send-python') }
      for (const text of Object.values(examples)) expect(text).toContain(c.placeholder)
      const withSecret = (text: string) => text.replaceAll(c.placeholder, c.secret)

      const curl = await run('bash', ['-c', withSecret(examples.curl)])
      expect(JSON.parse(curl.stdout)).toEqual(accepted)

      writeFileSync(join(dir, `${kind}.mjs`), withSecret(examples.node))
      const node = await run(process.execPath, ['--import', join(dir, 'dns.mjs'), join(dir, `${kind}.mjs`)])
      expect(node.stdout.trim()).toBe(`202 ${JSON.stringify(accepted)}`)

      writeFileSync(join(dir, `${kind}.py`), withSecret(examples.python))
      const python = await run('python3', [join(dir, 'dns.py'), join(dir, `${kind}.py`)])
      expect(python.stdout.trim()).toBe(`202 ${JSON.stringify(accepted)}`)
    })
  }
})
