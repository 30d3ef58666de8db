import type { ConnectionRecord, LocationRecord } from '../../model/records.ts'
import type { PlatformDeps } from '../../ports/deps.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'
import { hashSecret, matchesHashedSecret } from './hashing.ts'

type Headers = Record<string, string | string[] | undefined>
type TokenDeps = Pick<PlatformDeps, 'config' | 'secrets' | 'clock'>

/**
 * One value: a string, or, for a credential sent more than once (a repeated header, `?token=a&token=b`),
 * the empty string: present but malformed, so it matches nothing and never falls back.
 */
function single(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length === 1 && typeof value[0] === 'string' ? value[0] : ''
  return typeof value === 'string' ? value : undefined
}

/**
 * The presented source token: the `x-webhook-token` header when present (even blank or repeated:
 * a present-but-malformed credential never falls back, contract section 5 rules 2 and 4), else the
 * `token` query parameter, else null (no token at all).
 */
export function presentedSourceToken(headers: Headers, query: unknown): string | null {
  const header = single(headers['x-webhook-token'])
  if (header !== undefined) return header.trim()
  const q = query && typeof query === 'object' ? single((query as Record<string, unknown>).token) : undefined
  if (q !== undefined) return q.trim()
  return null
}

/** Constant-time check of a token against a webhook connection's current (and grace) hashes. */
export async function verifySourceToken(deps: TokenDeps, connection: ConnectionRecord, token: string): Promise<boolean> {
  const pepper = await getKeyPepper(deps)
  const hash = hashSecret(pepper, token)
  return token.length > 0 && matchesHashedSecret(hash, connection.token_hashes, deps.clock.now())
}

/** Constant-time check of a token against a partner CRM location's hashes. */
export async function verifyLocationToken(deps: TokenDeps, location: LocationRecord, token: string): Promise<boolean> {
  const pepper = await getKeyPepper(deps)
  const hash = hashSecret(pepper, token)
  return token.length > 0 && matchesHashedSecret(hash, location.token_hashes, deps.clock.now())
}
