import type { PlatformDeps } from '../../ports/deps.ts'
import { CONTRACT_VERSION } from '../../contract/version.ts'
import type { EmittedContact } from '../../contract/contact.ts'
import type { EmittedContactList } from '../../contract/contact-list.ts'
import { AppError } from '../../errors/app-error.ts'
import { assembleContact } from './assemble.ts'
import { loadAccountContactContext } from './caller.ts'
import { decodeContactCursor, decodeKeysetCursor, encodeContactCursor, encodeKeysetCursor } from './cursor.ts'
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

/** A page of the portal's contact table (issue 22): both ways, so a table of 10,000 rows can be walked back. */
export interface ContactTablePage {
  data: EmittedContact[]
  /** pass as `cursor` for the next page; null on the last page */
  next_cursor: string | null
  /** pass as `before` for the previous page; null on the first page */
  prev_cursor: string | null
}

const encodePrevCursor = (firstId: string) => encodeKeysetCursor('c1p', firstId)

/**
 * One page of the contact table, ordered by contact id as the read contract's list is: after
 * `cursor` (a next_cursor, the contract's own) or, with `before` (a prev_cursor), the page just
 * before it. One read of `limit` + 1 rows tells whether another page lies in the direction read;
 * the other direction is known from where the page starts (a page after a cursor has one before
 * it, a page before a cursor has one after it), so nothing is counted.
 */
export async function readContactPage(
  deps: PlatformDeps,
  accountId: string,
  options: { include: string | undefined; cursor: string | undefined; before: string | undefined; limit: number },
): Promise<ContactTablePage> {
  const caller = await callerFor(deps, accountId, options.include)
  const before = decodeKeysetCursor('c1p', options.before)
  if (before !== undefined) {
    const rows = await deps.contacts.list(accountId, { before, limit: options.limit + 1 })
    const page = rows.slice(-options.limit)
    return {
      data: page.map((r) => assembleContact(r, caller).contact),
      next_cursor: page.length ? encodeContactCursor(page[page.length - 1]!.id) : null,
      prev_cursor: rows.length > options.limit ? encodePrevCursor(page[0]!.id) : null,
    }
  }
  const after = decodeContactCursor(options.cursor)
  const rows = await deps.contacts.list(accountId, { ...(after !== undefined ? { after } : {}), limit: options.limit + 1 })
  const page = rows.slice(0, options.limit)
  return {
    data: page.map((r) => assembleContact(r, caller).contact),
    next_cursor: rows.length > options.limit ? encodeContactCursor(page[page.length - 1]!.id) : null,
    prev_cursor: after !== undefined && page.length ? encodePrevCursor(page[0]!.id) : null,
  }
}
