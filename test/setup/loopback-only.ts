/**
 * Test-process socket guard: no test can open a connection to an address off this machine, even
 * when the code under test is broken (an SSRF filter that lets an address through, a URL built
 * from the wrong host). Installed by every vitest config (setupFiles).
 *
 * `net.Socket.prototype.connect` is where every TCP/TLS client connection of this process starts:
 * `net.connect`/`net.createConnection`, `tls.connect` (it calls `connect` on its TLSSocket),
 * `http(s).request` through their agents, undici (and so `fetch`) and gRPC all end up there. The
 * guard lets through unix sockets and loopback destinations (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104)
 * only:
 * - an IP literal anywhere else throws before any socket exists;
 * - a host name is resolved by the caller's lookup (or dns.lookup) as usual, and the guard checks
 *   every address that lookup answers before the socket may use it: a non-loopback answer fails
 *   the connection with the guard's error, so a name whose lookup is a stub cannot leak either.
 * Each refusal is also recorded, and any test during which one happened fails (afterEach), even
 * if the code under test swallowed the error. Tests of the guard itself take the record with
 * `takeGuardRefusals()`. Child processes (servers a test spawns) are not covered: they are the
 * product under test, bound to loopback by their configuration.
 */
import dns from 'node:dns'
import net from 'node:net'
import { afterEach } from 'vitest'

export const GUARD_ERROR_CODE = 'ERR_TEST_NON_LOOPBACK_CONNECT'

interface GuardState {
  refusals: string[]
}

// one record per process, whatever module instance of this file a test file gets
const STATE_KEY = Symbol.for('lsv.test.loopbackGuard')
const INSTALLED = Symbol.for('lsv.test.loopbackGuard.installed')
const globals = globalThis as unknown as Record<symbol, GuardState | undefined>
const state: GuardState = (globals[STATE_KEY] ??= { refusals: [] })

const loopback = new net.BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')
loopback.addSubnet('::ffff:127.0.0.0', 104, 'ipv6')

/** Whether an IP literal is a loopback address (anything that is not an IP is not). */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!
  const family = net.isIP(bare)
  if (family === 0) return false
  return loopback.check(bare, family === 4 ? 'ipv4' : 'ipv6')
}

/** The refusals recorded since the last call (tests of the guard itself). */
export function takeGuardRefusals(): string[] {
  return state.refusals.splice(0)
}

function refusal(destination: string): NodeJS.ErrnoException {
  state.refusals.push(destination)
  const err = new Error(`test guard: connection to ${destination} refused (tests may only connect to loopback)`) as NodeJS.ErrnoException
  err.code = GUARD_ERROR_CODE
  return err
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | dns.LookupAddress[], family?: number) => void
type LookupFn = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void

/** The caller's lookup, with every answer checked before the socket sees it. */
function guardedLookup(base: LookupFn, port: unknown): LookupFn {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family)
      const answers = Array.isArray(address) ? address.map((a) => a.address) : [address as string]
      const denied = answers.filter((a) => !isLoopbackAddress(a))
      if (denied.length > 0) return callback(refusal(`${hostname} -> ${denied.join(', ')} port ${String(port)}`))
      callback(null, address, family)
    })
  }
}

interface ConnectOptions {
  host?: string
  port?: unknown
  path?: string
  lookup?: LookupFn
  [k: string]: unknown
}

/** The options a `connect(...)` call names, and how to rebuild the call with other options. */
function splitArgs(args: unknown[]): { options: ConnectOptions; rebuild(options: ConnectOptions): unknown[] } {
  const first = args[0]
  // net.connect hands over its already-normalized [options, callback] array (with a private marker)
  if (Array.isArray(first)) {
    return {
      options: (first[0] ?? {}) as ConnectOptions,
      rebuild: (o) => {
        first[0] = o
        return args
      },
    }
  }
  if (first !== null && typeof first === 'object') {
    return { options: first as ConnectOptions, rebuild: (o) => [o, ...args.slice(1)] }
  }
  // (path[, cb]) for a pipe name, else (port[, host][, cb])
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { options: { path: first }, rebuild: () => args }
  const host = typeof args[1] === 'string' ? args[1] : undefined
  const rest = args.slice(host === undefined ? 1 : 2)
  return { options: { port: first, host }, rebuild: (o) => [o, ...rest] }
}

function install(): void {
  const proto = net.Socket.prototype as unknown as Record<symbol, boolean> & { connect: (...args: unknown[]) => net.Socket }
  if (proto[INSTALLED]) return
  const original = proto.connect
  proto.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const { options, rebuild } = splitArgs(args)
    if (typeof options.path === 'string' || options.fd !== undefined) return original.apply(this, args)
    const host = options.host ?? 'localhost'
    if (net.isIP(host) !== 0) {
      if (!isLoopbackAddress(host)) throw refusal(`${host} port ${String(options.port)}`)
      return original.apply(this, args)
    }
    const lookup = guardedLookup(options.lookup ?? (dns.lookup as unknown as LookupFn), options.port)
    return original.apply(this, rebuild({ ...options, lookup }))
  }
  proto[INSTALLED] = true
}

install()

afterEach(() => {
  const refused = takeGuardRefusals()
  if (refused.length > 0) {
    throw new Error(`this test tried to connect off this machine (refused by test/setup/loopback-only.ts): ${refused.join('; ')}`)
  }
})
