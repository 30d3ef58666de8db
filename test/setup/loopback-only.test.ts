import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import tls from 'node:tls'
import { Agent, request } from 'undici'
import { GUARD_ERROR_CODE, isLoopbackAddress, takeGuardRefusals } from './loopback-only.ts'

/**
 * The socket guard every test runs under (test/setup/loopback-only.ts). The refused destinations
 * used here are the unspecified addresses 0.0.0.0 and ::, which Linux connects to this machine:
 * even a broken guard could not send these tests' traffic anywhere else.
 */

let server: net.Server
let port: number
beforeAll(async () => {
  server = net.createServer((s) => {
    s.on('error', () => {}) // the clients here hang up at once
    s.end('hi')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  port = (server.address() as net.AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** the error a connection attempt ends with (thrown at once, or emitted) */
async function connectError(open: () => net.Socket): Promise<NodeJS.ErrnoException | null> {
  let socket: net.Socket
  try {
    socket = open()
  } catch (err) {
    return err as NodeJS.ErrnoException
  }
  try {
    await once(socket, 'connect')
    socket.destroy()
    return null
  } catch (err) {
    return err as NodeJS.ErrnoException
  }
}

const stubLookup = (answer: string | Array<{ address: string; family: number }>) =>
  ((_host: string, options: { all?: boolean }, cb: (e: null, a: unknown, f?: number) => void) => {
    if (Array.isArray(answer)) return options.all ? cb(null, answer) : cb(null, answer[0]!.address, answer[0]!.family)
    return options.all ? cb(null, [{ address: answer, family: net.isIP(answer) }]) : cb(null, answer, net.isIP(answer))
  }) as never

describe('test socket guard: the address classifier', () => {
  it.each(['127.0.0.1', '127.1.2.3', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '[::1]', '::ffff:127.0.0.1'])('%s is loopback', (a) => {
    expect(isLoopbackAddress(a)).toBe(true)
  })
  it.each([
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '93.184.216.34',
    '8.8.8.8',
    '128.0.0.1',
    '126.255.255.255',
    '2001:db8::1',
    'fd00::1',
    'fe80::1',
    '::ffff:10.0.0.1',
    '::ffff:8.8.8.8',
    '::2',
    '2606:4700:4700::1111',
    'localhost',
    'example.com',
    '',
  ])('%s is not', (a) => {
    expect(isLoopbackAddress(a)).toBe(false)
  })
})

describe('test socket guard: every client path is refused off loopback', () => {
  it('net.connect / net.createConnection / Socket#connect with an IP literal throw before any socket connects', async () => {
    for (const host of ['0.0.0.0', '::']) {
      for (const open of [
        () => net.connect({ host, port }),
        () => net.connect(port, host),
        () => net.createConnection({ host, port }),
        () => new net.Socket().connect({ host, port }),
        () => new net.Socket().connect(port, host),
      ]) {
        expect((await connectError(open))?.code).toBe(GUARD_ERROR_CODE)
      }
    }
    expect(takeGuardRefusals()).toHaveLength(10)
  })

  it('tls.connect, http.request, fetch and undici are refused too', async () => {
    expect((await connectError(() => tls.connect({ host: '0.0.0.0', port, rejectUnauthorized: false })))?.code).toBe(GUARD_ERROR_CODE)
    const viaHttp = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      try {
        http
          .get({ host: '0.0.0.0', port, path: '/' }, (res) => {
            res.resume()
            resolve(null)
          })
          .on('error', (e) => resolve(e))
      } catch (err) {
        resolve(err as NodeJS.ErrnoException)
      }
    })
    expect(viaHttp?.code).toBe(GUARD_ERROR_CODE)
    const viaFetch = await fetch(`http://0.0.0.0:${port}/`).then(
      () => null,
      (e: Error & { cause?: NodeJS.ErrnoException }) => e.cause ?? e,
    )
    expect((viaFetch as NodeJS.ErrnoException | null)?.code).toBe(GUARD_ERROR_CODE)
    const agent = new Agent({ connect: { lookup: stubLookup('0.0.0.0') } })
    try {
      const viaUndici = await request(`http://receiver.example:${port}/`, { dispatcher: agent }).then(
        () => null,
        (e: Error & { cause?: NodeJS.ErrnoException }) => e,
      )
      expect((viaUndici as NodeJS.ErrnoException | null)?.code ?? (viaUndici as { cause?: { code?: string } })?.cause?.code).toBe(GUARD_ERROR_CODE)
    } finally {
      await agent.close()
    }
    expect(takeGuardRefusals().length).toBeGreaterThanOrEqual(4)
  })

  it('a host name: every address its lookup answers is checked, a stub lookup included', async () => {
    for (const answer of [
      '0.0.0.0',
      '::',
      [
        { address: '127.0.0.1', family: 4 },
        { address: '0.0.0.0', family: 4 },
      ],
      [
        { address: '::', family: 6 },
        { address: '127.0.0.1', family: 4 },
      ],
    ]) {
      const err = await connectError(() => net.connect({ host: 'receiver.example', port, lookup: stubLookup(answer as never) }))
      expect(err?.code).toBe(GUARD_ERROR_CODE)
    }
    expect(takeGuardRefusals()).toHaveLength(4)
  })
})

describe('test socket guard: loopback and unix sockets are untouched', () => {
  it('connects to 127.0.0.1, to localhost and through a lookup answering loopback', async () => {
    for (const open of [
      () => net.connect({ host: '127.0.0.1', port }),
      () => net.connect(port, '127.0.0.1'),
      () => net.connect(port),
      () => net.connect({ host: 'localhost', port, family: 4 }),
      () => net.connect({ host: 'receiver.example', port, lookup: stubLookup('127.0.0.1') }),
    ]) {
      expect(await connectError(open)).toBeNull()
    }
    expect(takeGuardRefusals()).toEqual([])
  })

  it('the guard fails a test whose code swallowed the refusal', async () => {
    // what afterEach sees: a refusal recorded during the test (taken here so this test passes)
    await connectError(() => net.connect({ host: '0.0.0.0', port }))
    expect(takeGuardRefusals()).toEqual([`0.0.0.0 port ${port}`])
  })
})
