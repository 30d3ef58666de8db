import { isIP } from 'node:net'

/**
 * Loopback checks for the local-only wiring (emulator hosts, the local OIDC issuer) and for the
 * callers of internal routes in local development. Only addresses, never a header a client can set.
 */

/** An IP address on this machine's loopback: 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false
  const ip = address.replace(/^\[|\]$/g, '')
  const kind = isIP(ip)
  if (kind === 4) return ip.startsWith('127.')
  if (kind === 6) {
    const lower = ip.toLowerCase()
    if (lower === '::1' || /^0{0,4}(:0{0,4}){6}:0{0,3}1$/.test(lower)) return true
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
    return mapped !== null && mapped[1]!.startsWith('127.')
  }
  return false
}

/** A host name that can only mean this machine: `localhost`, a loopback IPv4 or `[::1]`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '')
  return h === 'localhost' || isLoopbackAddress(h)
}
