import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { Agent, buildConnector } from 'undici'
import { classifyAddress, isAllowedAddress } from '../../lib/ip-ranges.ts'

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void
type LookupFn = (hostname: string, options: LookupOptions, callback: LookupCallback) => void

function refused(label: string): NodeJS.ErrnoException {
  const err = new Error(`destination address not allowed (${label})`) as NodeJS.ErrnoException
  err.code = 'ERR_DESTINATION_NOT_ALLOWED'
  return err
}

/**
 * A DNS lookup that drops every address the SSRF policy refuses, so the socket can only ever
 * connect to an allowed address (the check happens on what is actually connected to, not on
 * an earlier answer that may have changed: DNS rebinding).
 */
export function filteringLookup(allowLoopback: boolean, base: LookupFn = dnsLookup as unknown as LookupFn): LookupFn {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, result) => {
      if (err) return callback(err, '')
      const rows = (Array.isArray(result) ? result : [{ address: result as string, family: isIP(result as string) }]) as LookupAddress[]
      const allowed = rows.filter((r) => isAllowedAddress(r.address, allowLoopback))
      if (allowed.length === 0) return callback(refused(rows[0] ? classifyAddress(rows[0].address).label : 'no address'), '')
      if (options.all) return callback(null, allowed)
      callback(null, allowed[0]!.address, allowed[0]!.family)
    })
  }
}

export interface SafeConnectorOptions {
  allowLoopback: boolean
  timeoutMs?: number
  /** the lookup used for host names (default: the system resolver behind filteringLookup) */
  lookup?: LookupFn
}

/**
 * The connect function of every outbound socket. A host name goes through the filtering
 * lookup; an IP literal (which Node connects to without any lookup, including the decimal,
 * hex and octal IPv4 forms the URL parser normalizes) is checked here, before any socket.
 */
export function safeConnector(options: SafeConnectorOptions): buildConnector.connector {
  const inner = buildConnector({
    lookup: options.lookup ?? filteringLookup(options.allowLoopback),
    timeout: options.timeoutMs ?? 10_000,
  })
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host) !== 0 && !isAllowedAddress(host, options.allowLoopback)) {
      callback(refused(classifyAddress(host).label), null)
      return
    }
    inner(opts, callback)
  }
}

export interface SafeAgentOptions {
  allowLoopback: boolean
  connectTimeoutMs?: number
  /** keep-alive connections per origin */
  connections?: number
}

/**
 * The undici dispatcher every delivery goes through: filtered DNS, connect timeout, no
 * redirect handling (undici's `request` never follows redirects without the redirect
 * interceptor, so a 3xx is an unacknowledged answer).
 */
export function createSafeAgent(options: SafeAgentOptions): Agent {
  return new Agent({
    connect: safeConnector({ allowLoopback: options.allowLoopback, timeoutMs: options.connectTimeoutMs ?? 10_000 }),
    connections: options.connections ?? 64,
    keepAliveTimeout: 10_000,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  })
}
