import type { PlatformDeps } from '../../ports/deps.ts'
import type { AccountRecord, ContactRecord } from '../../model/records.ts'
import type { LinkType, MintLinkBody, MintLinkResponse } from '../../contract/links.ts'
import { AppError, isAppError } from '../../errors/app-error.ts'
import { isoAt } from '../../model/clock.ts'
import { checkDestination } from './destination.ts'
import { hashOpaqueToken, newOpaqueToken } from './opaque.ts'
import { signLinkToken, type LinkClaims } from './signed.ts'
import { getSigningKeys, SigningKeysUnavailableError } from './signing-keys.ts'
import { tagLink } from './tag-link.ts'

/** `contactId` wins over (`source`, `externalId`); the schema guarantees one of the two is there. */
async function findContact(deps: PlatformDeps, accountId: string, body: MintLinkBody): Promise<ContactRecord> {
  let contact: ContactRecord | null = null
  if (body.contactId !== undefined) contact = await deps.contacts.get(accountId, body.contactId)
  else if (body.source !== undefined && body.externalId !== undefined) contact = await deps.contacts.getByAnchor(accountId, body.source, body.externalId)
  if (!contact || contact.account_id !== accountId) throw new AppError('contact_not_found')
  return contact
}

async function mintOpaque(deps: PlatformDeps, accountId: string, contactId: string): Promise<string> {
  const token = newOpaqueToken()
  await deps.linkTokens.put({ hash: hashOpaqueToken(token), account_id: accountId, contact_id: contactId, created_at: isoAt(deps.clock) })
  return token
}

async function mintSigned(deps: PlatformDeps, accountId: string, contactId: string, expSeconds: number | undefined): Promise<string> {
  let keys
  try {
    keys = await getSigningKeys(deps)
  } catch (cause) {
    if (cause instanceof SigningKeysUnavailableError) throw new AppError('signed_links_unavailable', { cause })
    throw cause
  }
  const iat = Math.floor(deps.clock.now() / 1000)
  const claims: LinkClaims = { acc: accountId, sub: contactId, iat }
  if (expSeconds !== undefined) claims.exp = iat + expSeconds
  return signLinkToken(keys.current, keys.keys.get(keys.current)!, claims)
}

/**
 * Mints a token and a tagged link for one contact of `account` (contract 4.2), after the caller
 * authenticated and counted the request. Order of checks: destination (400s, no I/O), contact
 * (404), signing keys for `signed` (503), token write. Any failure without a contract code is
 * 500 `mint failed` (the cause is logged, never sent). `expSeconds` is ignored for `opaque`.
 */
export async function mintContactLink(deps: PlatformDeps, account: AccountRecord, body: MintLinkBody): Promise<MintLinkResponse> {
  try {
    const destination = checkDestination(body.destinationUrl, account.authorized_domains)
    const contact = await findContact(deps, account.id, body)
    const type: LinkType = body.type ?? 'opaque'
    const token = type === 'signed' ? await mintSigned(deps, account.id, contact.id, body.expSeconds) : await mintOpaque(deps, account.id, contact.id)
    return { ok: true, contactId: contact.id, type, token, link: tagLink(destination, token) }
  } catch (err) {
    if (isAppError(err)) throw err
    throw new AppError('mint_failed', { cause: err })
  }
}
