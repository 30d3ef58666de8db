import type { AccountRecord } from '../../model/records.ts'
import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'

/**
 * Hosts already parsed: every push of a tenant names the same one, and parsing it (trim, case,
 * port, two patterns) was about 1 % of a small push's CPU. Bounded, since the Host header is the
 * caller's to choose: at most MAX_REMEMBERED_HOSTS, each no longer than a DNS name with a port.
 */
const publicIds = new Map<string, string | null>()
const MAX_REMEMBERED_HOSTS = 1_000
const MAX_REMEMBERED_HOST_LENGTH = 260

/**
 * The public id named by an edge Host header: its first label, when the rest is the configured
 * edge domain (`<public_id>.edge.localhost:8080` locally). Null for any other host.
 */
export function publicIdFromHost(host: string | undefined, edgeDomain: string): string | null {
  if (!host) return null
  if (host.length > MAX_REMEMBERED_HOST_LENGTH) return parsePublicId(host, edgeDomain)
  const key = `${edgeDomain}\n${host}` // no header value holds a line break
  let publicId = publicIds.get(key)
  if (publicId === undefined) {
    if (publicIds.size >= MAX_REMEMBERED_HOSTS) publicIds.clear()
    publicIds.set(key, (publicId = parsePublicId(host, edgeDomain)))
  }
  return publicId
}

function parsePublicId(host: string, edgeDomain: string): string | null {
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '')
  const suffix = `.${edgeDomain.toLowerCase()}`
  if (!name.endsWith(suffix)) return null
  const label = name.slice(0, -suffix.length)
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label)) return null
  return label
}

/** The active account of an edge request, else 404 `not found` (unknown or inactive subdomain). */
export async function resolveEdgeAccount(deps: Pick<PlatformDeps, 'config' | 'tenantLookups'>, host: string | undefined): Promise<AccountRecord> {
  const publicId = publicIdFromHost(host, deps.config.edgeDomain)
  if (publicId === null) throw new AppError('not_found')
  const account = await deps.tenantLookups.getAccountByPublicId(publicId)
  if (!account || !account.active) throw new AppError('not_found')
  return account
}
