import { timingSafeEqual } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import { hashOpaqueToken, OPAQUE_TOKEN_PATTERN } from './opaque.ts'
import { parseSignedToken, verifyLinkToken } from './signed.ts'
import { getVerificationKey } from './signing-keys.ts'

export interface ResolvedLink {
  accountId: string
  contactId: string
}

export interface ResolveLinkOptions {
  /** when given, a token minted for another account resolves to null */
  accountId?: string
}

async function resolveOpaque(deps: PlatformDeps, token: string): Promise<ResolvedLink | null> {
  const hash = hashOpaqueToken(token)
  // The lookup is by hash, so its timing says nothing about the token; the comparison below
  // keeps any adapter-level near-match (case folding, prefix scans) from counting as a hit.
  const record = await deps.linkTokens.get(hash)
  if (!record) return null
  const stored = Buffer.from(record.hash, 'hex')
  const computed = Buffer.from(hash, 'hex')
  if (stored.length !== computed.length || !timingSafeEqual(stored, computed)) return null
  return { accountId: record.account_id, contactId: record.contact_id }
}

async function resolveSigned(deps: PlatformDeps, token: string): Promise<ResolvedLink | null> {
  const parsed = parseSignedToken(token)
  if (!parsed) return null
  const key = await getVerificationKey(deps, parsed.kid)
  if (!key) return null
  const claims = verifyLinkToken(parsed, key, deps.clock.now())
  return claims ? { accountId: claims.acc, contactId: claims.sub } : null
}

/** Whether `token` has the shape of a link token we mint (opaque `a.…` or signed `s.…`); says nothing of whether it resolves. */
export function isLinkTokenShape(token: string): boolean {
  return OPAQUE_TOKEN_PATTERN.test(token) || parseSignedToken(token) !== null
}

/**
 * The account and contact a link token (the `lsv` of a visit) was minted for, or null when the
 * token is malformed, unknown, tampered with, expired, signed by an unknown key, or (with
 * `options.accountId`) minted for another account. Only infrastructure failures throw (contact
 * store or secrets unreachable), so a caller can retry instead of losing the attribution.
 */
export async function resolveLinkToken(deps: PlatformDeps, token: string, options: ResolveLinkOptions = {}): Promise<ResolvedLink | null> {
  if (typeof token !== 'string') return null
  let resolved: ResolvedLink | null = null
  if (OPAQUE_TOKEN_PATTERN.test(token)) resolved = await resolveOpaque(deps, token)
  else if (token.startsWith('s.')) resolved = await resolveSigned(deps, token)
  if (!resolved) return null
  if (options.accountId !== undefined && resolved.accountId !== options.accountId) return null
  return resolved
}
