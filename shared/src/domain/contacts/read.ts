import type { PlatformDeps } from '../../ports/deps.ts'
import { CONTRACT_VERSION } from '../../contract/version.ts'
import type { EmittedContact } from '../../contract/contact.ts'
import type { EmittedContactList } from '../../contract/contact-list.ts'
import { AppError } from '../../errors/app-error.ts'
import { assembleContact } from './assemble.ts'
import { loadAccountContactContext } from './caller.ts'
import { decodeContactCursor, encodeContactCursor } from './cursor.ts'
import { parseInclude } from './include.ts'

async function callerFor(deps: PlatformDeps, accountId: string, include: string | undefined) {
  const tiers = parseInclude(include)
  const account = await deps.tenantLookups.getAccount(accountId)
  if (!account) throw new AppError('unauthorized')
  const context = await loadAccountContactContext(deps.tenantLookups, account)
  return {
    permittedTiers: account.permitted_tiers,
    contactHandles: tiers.contactHandles,
    sensitiveTraits: tiers.sensitiveTraits,
    definitions: context.definitions,
    mappedCustomFieldKeys: context.mappedCustomFieldKeys,
    portalBaseUrl: deps.config.portalBaseUrl,
  }
}

/** GET /api/v1/contacts/{id}: the Contact for this caller; `include` is validated before any read. */
export async function readContact(deps: PlatformDeps, accountId: string, contactId: string, include: string | undefined): Promise<EmittedContact> {
  const caller = await callerFor(deps, accountId, include)
  const record = await deps.contacts.get(accountId, contactId)
  if (!record) throw new AppError('contact_not_found')
  return assembleContact(record, caller).contact
}

/** GET /api/v1/contacts: one keyset page ordered by contact id; `next_cursor` is null on the last page. */
export async function readContactList(
  deps: PlatformDeps,
  accountId: string,
  options: { include: string | undefined; cursor: string | undefined; limit: number },
): Promise<EmittedContactList> {
  const caller = await callerFor(deps, accountId, options.include)
  const after = decodeContactCursor(options.cursor)
  // one extra row tells whether another page exists without a second query
  const rows = await deps.contacts.list(accountId, { ...(after !== undefined ? { after } : {}), limit: options.limit + 1 })
  const hasMore = rows.length > options.limit
  const page = rows.slice(0, options.limit)
  return {
    object: 'list',
    data: page.map((r) => assembleContact(r, caller).contact),
    has_more: hasMore,
    contract_version: CONTRACT_VERSION,
    next_cursor: hasMore ? encodeContactCursor(page[page.length - 1]!.id) : null,
  }
}
