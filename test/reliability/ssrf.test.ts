import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isIP } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { Agent } from 'undici'
import { checkUrlStatically } from '@lsv/shared/domain/webhooks/ssrf.ts'
import { filteringLookup, createSafeAgent, safeConnector } from '@lsv/shared/adapters/outbound-http/safe-agent.ts'
import { isAllowedAddress } from '@lsv/shared/lib/ip-ranges.ts'
import { postOnce } from '@lsv/shared/adapters/outbound-http/send.ts'
import { createWebhookSender } from '@lsv/shared/adapters/outbound-http/webhook-sender.ts'
import { runDeliveryJob } from '@lsv/shared/domain/webhooks/deliver.ts'
import { startConnectionCounter } from './support/connection-counter.ts'
import { createOutboundDeps, createPendingDelivery } from './support/outbound-deps.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 7: SSRF. Every corpus entry is a destination URL plus the DNS answers its host gets at
 * check time and at connect time (they differ for rebinding). Three layers are driven with
 * allowLoopback false, and a dual-stack listener on the port every URL names counts the
 * connections that actually arrive on a local address:
 *   1. checkUrlStatically (integration creation, and before each delivery): must refuse every
 *      literal and non-public name, and leave names to the connect-time layers (it never resolves);
 *   2. the delivery path (runDeliveryJob: static check, then the filtering agent);
 *   3. the connect-time agent alone (filteringLookup inside an undici Agent, no prior check).
 * Addresses the agent hands to the socket are recorded too, so a denied non-local address
 * (10.x, 169.254.x) that slipped through would be counted without leaving the machine.
 */

interface Entry {
  label: string
  /** `{P}` is replaced by the counter's port */
  url: string
  /** answers at check time (resolver); omitted for IP literals */
  check?: string[]
  /** answers at connect time; defaults to `check` */
  connect?: string[]
}

const LITERALS: Array<[string, string]> = [
  // loopback in every spelling WHATWG normalizes
  ['loopback', 'http://127.0.0.1:{P}/'],
  ['loopback short', 'http://127.1:{P}/'],
  ['loopback 3-part', 'http://127.0.1:{P}/'],
  ['loopback decimal', 'http://2130706433:{P}/'],
  ['loopback hex', 'http://0x7f000001:{P}/'],
  ['loopback hex dotted', 'http://0x7f.0x0.0x0.0x1:{P}/'],
  ['loopback octal', 'http://0177.0.0.1:{P}/'],
  ['loopback octal long', 'http://017700000001:{P}/'],
  ['loopback mixed', 'http://0x7f.1:{P}/'],
  ['loopback 127.0.0.2', 'http://127.0.0.2:{P}/'],
  ['loopback 127.255.255.254', 'http://127.255.255.254:{P}/'],
  ['loopback padded octal', 'http://00000177.0.0.1:{P}/'],
  ['loopback https', 'https://127.0.0.1:{P}/'],
  ['ipv6 loopback', 'http://[::1]:{P}/'],
  ['ipv6 loopback long', 'http://[0:0:0:0:0:0:0:1]:{P}/'],
  ['ipv4-mapped loopback', 'http://[::ffff:127.0.0.1]:{P}/'],
  ['ipv4-mapped loopback hex', 'http://[::ffff:7f00:1]:{P}/'],
  ['ipv4-compatible loopback', 'http://[::127.0.0.1]:{P}/'],
  ['unspecified', 'http://0.0.0.0:{P}/'],
  ['unspecified short', 'http://0:{P}/'],
  ['ipv6 unspecified', 'http://[::]:{P}/'],
  ['this-network', 'http://0.1.2.3:{P}/'],
  // private
  ['private 10', 'http://10.0.0.1:{P}/'],
  ['private 10 decimal', 'http://167772161:{P}/'],
  ['private 10 hex', 'http://0x0a000001:{P}/'],
  ['private 172.16', 'http://172.16.0.1:{P}/'],
  ['private 172.31', 'http://172.31.255.254:{P}/'],
  ['private 192.168', 'http://192.168.1.1:{P}/'],
  ['private 192.168 octal', 'http://0300.0250.0.1:{P}/'],
  ['private mapped', 'http://[::ffff:10.0.0.1]:{P}/'],
  ['private mapped hex', 'http://[::ffff:a00:1]:{P}/'],
  // link-local and metadata
  ['metadata', 'http://169.254.169.254:{P}/latest/meta-data/'],
  ['metadata decimal', 'http://2852039166:{P}/'],
  ['metadata hex', 'http://0xa9fea9fe:{P}/'],
  ['metadata octal', 'http://0251.0376.0251.0376:{P}/'],
  ['metadata mapped', 'http://[::ffff:169.254.169.254]:{P}/'],
  ['link-local', 'http://169.254.0.1:{P}/'],
  ['aws ipv6 metadata', 'http://[fd00:ec2::254]:{P}/'],
  ['ipv6 link-local', 'http://[fe80::1]:{P}/'],
  ['ipv6 link-local zone', 'http://[fe80::1%25eth0]:{P}/'],
  ['alibaba metadata', 'http://100.100.100.200:{P}/'],
  // CGNAT
  ['cgnat low', 'http://100.64.0.1:{P}/'],
  ['cgnat high', 'http://100.127.255.254:{P}/'],
  ['cgnat mapped', 'http://[::ffff:100.64.0.1]:{P}/'],
  // IPv6 unique-local, site-local, multicast, NAT64, 6to4, teredo, documentation
  ['ula fc', 'http://[fc00::1]:{P}/'],
  ['ula fd', 'http://[fd12:3456:789a::1]:{P}/'],
  ['site-local', 'http://[fec0::1]:{P}/'],
  ['ipv6 multicast', 'http://[ff02::1]:{P}/'],
  ['nat64 loopback', 'http://[64:ff9b::7f00:1]:{P}/'],
  ['nat64 metadata', 'http://[64:ff9b::a9fe:a9fe]:{P}/'],
  ['nat64 dotted', 'http://[64:ff9b::127.0.0.1]:{P}/'],
  ['local nat64', 'http://[64:ff9b:1::a00:1]:{P}/'],
  ['6to4 loopback', 'http://[2002:7f00:1::]:{P}/'],
  ['teredo', 'http://[2001::1]:{P}/'],
  ['ipv6 documentation', 'http://[2001:db8::1]:{P}/'],
  ['ipv4-translated', 'http://[::ffff:0:7f00:1]:{P}/'],
  // other special ipv4
  ['benchmarking', 'http://198.18.0.1:{P}/'],
  ['documentation', 'http://192.0.2.1:{P}/'],
  ['ietf', 'http://192.0.0.1:{P}/'],
  ['multicast', 'http://224.0.0.1:{P}/'],
  ['reserved', 'http://240.0.0.1:{P}/'],
  ['broadcast', 'http://255.255.255.255:{P}/'],
  // schemes and credentials
  ['file scheme', 'file:///etc/passwd'],
  ['gopher', 'gopher://127.0.0.1:{P}/_x'],
  ['ftp', 'ftp://127.0.0.1:{P}/'],
  ['credentials loopback', 'http://user:pass@127.0.0.1:{P}/'],
  ['at-confusion', 'http://hooks.example.com@127.0.0.1:{P}/'],
  ['localhost name', 'http://localhost:{P}/'],
  ['localhost trailing dot', 'http://localhost.:{P}/'],
  ['sub.localhost', 'http://api.localhost:{P}/'],
  ['LOCALHOST', 'http://LOCALHOST:{P}/'],
  ['single label', 'http://metadata:{P}/'],
  ['gcp metadata name', 'http://metadata.google.internal:{P}/'],
  ['.local', 'http://printer.local:{P}/'],
  ['.internal', 'http://db.corp.internal:{P}/'],
]

/** names whose answer is denied both at check and at connect time */
const DENIED_ANSWERS: Array<[string, string[]]> = [
  ['loopback', ['127.0.0.1']],
  ['loopback 2', ['127.0.0.2']],
  ['ipv6 loopback', ['::1']],
  ['mapped loopback', ['::ffff:127.0.0.1']],
  ['unspecified', ['0.0.0.0']],
  ['ipv6 unspecified', ['::']],
  ['private 10', ['10.1.2.3']],
  ['private 172', ['172.20.0.5']],
  ['private 192', ['192.168.0.10']],
  ['metadata', ['169.254.169.254']],
  ['link-local', ['169.254.1.1']],
  ['cgnat', ['100.100.100.100']],
  ['ula', ['fd00::5']],
  ['ipv6 link-local', ['fe80::abcd']],
  ['nat64', ['64:ff9b::a9fe:a9fe']],
  ['mapped private', ['::ffff:192.168.1.1']],
  ['site-local', ['fec0::2']],
  ['multicast', ['239.1.2.3']],
  ['6to4', ['2002:a00:1::1']],
  ['reserved', ['250.1.2.3']],
  // one bad answer among good ones: the whole name is refused at check time, the bad one dropped at connect time
  ['mixed public+loopback', ['93.184.216.34', '127.0.0.1']],
  ['mixed loopback first', ['127.0.0.1', '93.184.216.34']],
  ['mixed v6 public+ula', ['2606:2800:220:1::1', 'fd00::1']],
  ['mixed public+metadata', ['8.8.8.8', '169.254.169.254']],
  ['many private', ['10.0.0.1', '10.0.0.2', '172.16.0.1', '192.168.0.1']],
]

/** names that pass the check with a public answer and rebind to a denied one at connect time */
const REBINDING: Array<[string, string[]]> = [
  ['rebind loopback', ['127.0.0.1']],
  ['rebind ipv6 loopback', ['::1']],
  ['rebind metadata', ['169.254.169.254']],
  ['rebind private', ['10.0.0.7']],
  ['rebind mapped', ['::ffff:127.0.0.1']],
  ['rebind unspecified', ['0.0.0.0']],
  ['rebind cgnat', ['100.64.1.1']],
  ['rebind ula', ['fd00::7']],
  ['rebind nat64', ['64:ff9b::7f00:1']],
  ['rebind 127.0.0.2', ['127.0.0.2']],
]

function buildCorpus(): Entry[] {
  const out: Entry[] = LITERALS.map(([label, url]) => ({ label, url }))
  DENIED_ANSWERS.forEach(([label, answers], i) => {
    out.push({ label: `dns ${label}`, url: `http://denied-${i}.attacker.example:{P}/hook`, check: answers })
    out.push({ label: `dns ${label} (https, trailing dot)`, url: `https://denied-${i}.attacker.example.:{P}/`, check: answers })
  })
  REBINDING.forEach(([label, answers], i) => {
    out.push({ label, url: `http://rebind-${i}.attacker.example:{P}/`, check: ['93.184.216.34'], connect: answers })
  })
  return out
}

const corpus = buildCorpus()

describe('reliability 7: SSRF corpus makes no connection to a denied address', () => {
  let counter: Awaited<ReturnType<typeof startConnectionCounter>>
  const urlOf = (e: Entry) => e.url.replaceAll('{P}', String(counter.port))
  const hostOf = (e: Entry) => {
    try {
      return new URL(urlOf(e)).hostname.replace(/\.$/, '').toLowerCase()
    } catch {
      return ''
    }
  }
  /** what the socket was handed by the filtering lookup, per layer */
  const handedOut: string[] = []

  /** The connect-time DNS for one entry, behind the policy's filteringLookup, recording what passes. */
  function agentFor(e: Entry): Agent {
    const answers = e.connect ?? e.check ?? []
    const base = (_h: string, _o: unknown, cb: (err: NodeJS.ErrnoException | null, rows: LookupAddress[]) => void) => {
      if (answers.length === 0) return cb(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), [])
      cb(
        null,
        answers.map((address) => ({ address, family: isIP(address) })),
      )
    }
    const filtered = filteringLookup(false, base as never)
    // What passes the filter is recorded, then the attempt stops there: with loopback denied, an
    // address that passes is a public one (the mixed entries), and no test may send traffic off
    // this machine (test/setup/loopback-only.ts would refuse it and fail the test).
    const recording = (h: string, o: { all?: boolean }, cb: (err: NodeJS.ErrnoException | null, a: string | LookupAddress[], f?: number) => void) =>
      filtered(h, o as never, (err, a, f) => {
        if (err) return cb(err, a, f)
        for (const row of Array.isArray(a) ? a : [{ address: a as string }]) handedOut.push(row.address)
        cb(Object.assign(new Error('stopped after the lookup (tests never connect off this machine)'), { code: 'ETESTSTOPPED' }), '')
      })
    return new Agent({
      connect: safeConnector({ allowLoopback: false, lookup: recording as never, timeoutMs: 1_000 }),
      headersTimeout: 2_000,
      bodyTimeout: 2_000,
    })
  }

  beforeAll(async () => {
    counter = await startConnectionCounter()
  })
  afterAll(async () => {
    await counter.close()
  })

  it('the corpus holds at least 100 URLs and DNS answers across every category', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(100)
  })

  it("layer 1: checkUrlStatically refuses every literal and non-public name (names with DNS answers are the connect-time layers' job)", () => {
    const misclassified: string[] = []
    for (const e of corpus) {
      const r = checkUrlStatically(urlOf(e), false)
      const resolved = e.check !== undefined
      if (r.ok !== resolved) misclassified.push(`${e.label} ${urlOf(e)} -> ${JSON.stringify(r)}`)
    }
    printFigure('ssrf-check', `${corpus.length - misclassified.length}/${corpus.length} corpus entries classified as expected by checkUrlStatically`)
    expect(misclassified).toEqual([])
  })

  it('layer 2: the delivery path (runDeliveryJob) makes 0 connections to a denied address', async () => {
    const od = await createOutboundDeps({ allowLoopback: false })
    try {
      const before = counter.count()
      handedOut.length = 0
      const outcomes: string[] = []
      for (const e of corpus) {
        const { delivery } = await createPendingDelivery(od.deps, urlOf(e))
        const agent = agentFor(e)
        try {
          outcomes.push(
            (await runDeliveryJob({ ...od.deps, webhookSender: createWebhookSender(agent) }, { v: 1, delivery_id: delivery.id, seq: 1, attempt: 1 }, () => 0.5))
              .outcome,
          )
        } finally {
          await agent.close()
        }
        const stored = await od.deps.deliveries.get(delivery.id)
        expect(stored?.attempts[0]?.status_code ?? null, e.label).toBeNull()
      }
      const connections = counter.count() - before
      const denied = handedOut.filter((a) => !isAllowedAddress(a, false))
      printFigure(
        'ssrf-delivery',
        `${connections + denied.length} connections to a denied address over ${corpus.length} deliveries (${connections} arrived on a local listener, ${denied.length} denied addresses handed to a socket)`,
      )
      expect(outcomes.every((o) => o === 'retrying')).toBe(true)
      expect(connections).toBe(0)
      expect(denied).toEqual([])
    } finally {
      await od.cleanup()
    }
  })

  it('layer 3: the connect-time agent alone (no prior URL check) makes 0 connections to a denied address', async () => {
    const before = counter.count()
    handedOut.length = 0
    const through: string[] = []
    for (const e of corpus) {
      const url = urlOf(e)
      let parsed: URL
      try {
        parsed = new URL(url)
      } catch {
        continue
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') continue // undici refuses other schemes itself
      const n = counter.count()
      const agent = agentFor(e)
      try {
        await postOnce(agent, url, Buffer.from('{}'), {})
      } finally {
        await agent.close()
      }
      if (counter.count() > n) through.push(`${e.label} (${hostOf(e)})`)
    }
    const connections = counter.count() - before
    const denied = handedOut.filter((a) => !isAllowedAddress(a, false))
    printFigure(
      'ssrf-agent',
      `${connections + denied.length} connections to a denied address through the safe agent alone${through.length ? ` (got through: ${through.join(', ')})` : ''}`,
    )
    expect(denied).toEqual([])
    expect(through).toEqual([])
  })

  it('redirects to internal addresses are never followed', async () => {
    const { createServer } = await import('node:http')
    const internal = await startConnectionCounter()
    const targets = [
      `http://127.0.0.1:${internal.port}/`,
      `http://[::1]:${internal.port}/`,
      `http://localhost:${internal.port}/`,
      `http://169.254.169.254/latest/meta-data/`,
      `http://2130706433:${internal.port}/`,
      `http://0.0.0.0:${internal.port}/`,
    ]
    const statuses = [301, 302, 303, 307, 308]
    let answered = 0
    // the redirector plays a public receiver; it has to be reachable, so this agent allows
    // loopback: a followed redirect to the internal listener would then connect and be counted
    const redirector = createServer((req, res) => {
      const i = answered++
      req.resume()
      req.on('end', () => {
        res.writeHead(statuses[i % statuses.length]!, { location: targets[Math.floor(i / statuses.length) % targets.length]! })
        res.end()
      })
    })
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r))
    const port = (redirector.address() as { port: number }).port
    const agent = createSafeAgent({ allowLoopback: true, connectTimeoutMs: 1_000 })
    const codes: Array<number | null> = []
    try {
      for (let i = 0; i < statuses.length * targets.length; i++) {
        codes.push((await postOnce(agent, `http://127.0.0.1:${port}/hook`, Buffer.from('{}'), {})).statusCode)
      }
    } finally {
      await agent.close()
      redirector.closeAllConnections()
      await new Promise<void>((r) => redirector.close(() => r()))
    }
    printFigure('ssrf-redirects', `${internal.count()} connections to internal redirect targets after ${codes.length} 3xx answers`)
    await internal.close()
    expect(codes.every((c) => c !== null && c >= 300 && c < 400)).toBe(true)
    expect(internal.count()).toBe(0)
  })
})
