import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { Agent } from 'undici'
import { createSafeAgent, filteringLookup, safeConnector } from '@lsv/shared/adapters/outbound-http/safe-agent.ts'
import { postOnce } from '@lsv/shared/adapters/outbound-http/send.ts'
import { takeGuardRefusals } from '../setup/loopback-only.ts'

/**
 * The connect-time DNS filter (safe-agent.ts `filteringLookup`, inside every delivery's undici
 * connector): whatever DNS answers at connect time, the socket may only use allowed addresses.
 *
 * DNS here is a stub: each name answers the rows given. The test process runs under the socket
 * guard (test/setup/loopback-only.ts), which refuses any non-loopback connect; the filter must
 * refuse the denied answers first, so each test checks the filter's own error AND that the guard
 * never had to fire. If the filter is broken, the guard stops the connection and the test fails:
 * no broken build can send a packet to these addresses.
 *
 * Mutation this catches (it survived the main suite before): letting every IPv6 answer through,
 * e.g. in filteringLookup `rows.filter((r) => r.family === 6 || isAllowedAddress(r.address, allowLoopback))`.
 */

/** denied answers of every kind, IPv6 first (the family a broken filter let through) */
const DENIED_V6 = [
  '2001:db8::1', // documentation
  'fd00::1',
  'fc00::5', // unique-local
  'fe80::1',
  'fe80::1%eth0', // link-local
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:127.0.0.1',
  '::ffff:8.8.8.8', // IPv4-mapped, refused outright
  '64:ff9b::a9fe:a9fe', // NAT64 of the metadata address
  '2002:a9fe:a9fe::1', // 6to4
  '2001::1', // Teredo
  'fec0::1', // site-local
  'ff02::1', // multicast
  '::', // unspecified
  '::a00:1', // IPv4-compatible
  '100::1', // discard
  'fd00:ec2::254', // AWS IMDS over IPv6
]
const DENIED_V4 = ['169.254.169.254', '10.0.0.1', '192.168.1.1', '172.16.0.1', '100.64.0.1', '0.0.0.0', '224.0.0.1', '192.0.2.1']
const LOOPBACK = ['127.0.0.1', '::1']

const row = (address: string): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void
/** a DNS stand-in answering `rows` for every name, as dns.lookup would (all or first) */
function stubDns(rows: LookupAddress[]) {
  return (_host: string, options: { all?: boolean }, cb: LookupCallback) => {
    if (options.all) cb(null, rows)
    else cb(null, rows[0]!.address, rows[0]!.family)
  }
}

function lookupOnce(lookup: ReturnType<typeof filteringLookup>, all: boolean) {
  return new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
    lookup('receiver.example', { all }, (err, address) => resolve({ err, address }))
  })
}

let server: Server
let port: number
let hits = 0
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++
    res.writeHead(200).end('ok')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** one delivery POST through an agent whose connector filters a stub DNS answer */
async function deliverThrough(rows: LookupAddress[], allowLoopback: boolean, host = 'receiver.example') {
  const agent = new Agent({
    connect: safeConnector({ allowLoopback, lookup: filteringLookup(allowLoopback, stubDns(rows) as never) }),
  })
  try {
    return await postOnce(agent, `http://${host}:${port}/hook`, Buffer.from('{}'), {})
  } finally {
    await agent.close()
  }
}

describe('connect-time DNS filter: denied answers never reach a socket', () => {
  it.each([...DENIED_V6, ...DENIED_V4])('the lookup refuses an answer of only %s (all and single)', async (address) => {
    for (const all of [true, false]) {
      const { err } = await lookupOnce(filteringLookup(false, stubDns([row(address)]) as never), all)
      expect(err?.code).toBe('ERR_DESTINATION_NOT_ALLOWED')
    }
  })

  it('every denied answer at once is refused; one allowed address among them is all that is kept', async () => {
    const denied = [...DENIED_V6, ...DENIED_V4].map(row)
    expect((await lookupOnce(filteringLookup(false, stubDns(denied) as never), true)).err?.code).toBe('ERR_DESTINATION_NOT_ALLOWED')
    // a public IPv6 answer among denied ones: only it survives (no connection is made here)
    const mixed = [...denied, row('2606:4700:4700::1111'), row('93.184.216.34')]
    const kept = await lookupOnce(filteringLookup(false, stubDns(mixed) as never), true)
    expect(kept.err).toBeNull()
    expect(kept.address).toEqual([row('2606:4700:4700::1111'), row('93.184.216.34')])
    // single-answer mode hands out the first allowed one, never a denied one listed before it
    const single = await lookupOnce(filteringLookup(false, stubDns(mixed) as never), false)
    expect(single.address).toBe('2606:4700:4700::1111')
  })

  it('loopback answers are denied unless loopback is allowed (local development)', async () => {
    for (const address of LOOPBACK) {
      expect((await lookupOnce(filteringLookup(false, stubDns([row(address)]) as never), true)).err?.code).toBe('ERR_DESTINATION_NOT_ALLOWED')
      expect((await lookupOnce(filteringLookup(true, stubDns([row(address)]) as never), true)).address).toEqual([row(address)])
    }
  })

  it.each(DENIED_V6)("a delivery to a name answering %s fails with the filter's error; the guard never fires", async (address) => {
    const result = await deliverThrough([row(address)], false)
    expect(result).toMatchObject({ statusCode: null, error: 'destination address not allowed' })
    expect(takeGuardRefusals()).toEqual([])
  })

  it('a delivery to a name answering every denied address at once fails the same way', async () => {
    const result = await deliverThrough([...DENIED_V6, ...DENIED_V4].map(row), false)
    expect(result).toMatchObject({ statusCode: null, error: 'destination address not allowed' })
    expect(takeGuardRefusals()).toEqual([])
  })

  it('with loopback allowed, denied IPv6 answers next to 127.0.0.1 are dropped and the delivery reaches the local receiver', async () => {
    const before = hits
    // denied IPv6 first: a filter that kept them would hand them to the socket (the guard would refuse)
    const result = await deliverThrough([...DENIED_V6.map(row), row('127.0.0.1')], true)
    expect(result).toMatchObject({ statusCode: 200, error: null, excerpt: 'ok' })
    expect(hits).toBe(before + 1)
    expect(takeGuardRefusals()).toEqual([])
  })

  it('IPv6 literals are refused by the connector before any socket (the production agent)', async () => {
    const agent = createSafeAgent({ allowLoopback: true })
    try {
      for (const literal of ['2001:db8::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '::']) {
        const result = await postOnce(agent, `http://[${literal}]:${port}/hook`, Buffer.from('{}'), {})
        expect(result, literal).toMatchObject({ statusCode: null, error: 'destination address not allowed' })
      }
    } finally {
      await agent.close()
    }
    expect(takeGuardRefusals()).toEqual([])
  })
})
