import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { AppError, isAppError } from '@lsv/shared/errors/app-error.ts'
import { readContact, readContactPage } from '@lsv/shared/domain/contacts/read.ts'
import { missingNotes } from '@lsv/shared/domain/contacts/missing-notes.ts'
import { consumeLinkMintQuota } from '@lsv/shared/domain/links/rate-limit.ts'
import { mintContactLink } from '@lsv/shared/domain/links/mint.ts'
import type { LinkType } from '@lsv/shared/contract/links.ts'
import { Uuid } from '@lsv/shared/contract/common.ts'
import { sendPage } from '../kit/page.ts'
import { redirectToReveal } from '../reveal.ts'
import { sessionOf } from '../session.ts'
import { formOf, fieldValue } from '../kit/forms.ts'
import { BAD_PAGE_LINK, PageLinkValue, pageNumberOf } from '../kit/pager.ts'
import { contactListBody, contactPageBody, CONTACTS_PAGE_SIZE, CONTACTS_PATH, nameOf, type ContactView, type MintResult } from './views.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { auditOf } from '../kit/audited.ts'

/** Tiers the portal asks for: the account's permitted tiers then decide what is released. */
const ALL_TIERS = 'contact_handles,sensitive_traits'

const ListQuery = Type.Object({
  cursor: PageLinkValue,
  before: PageLinkValue,
  page: PageLinkValue,
  email: Type.Optional(Type.String({ maxLength: 320 })),
  source: Type.Optional(Type.String({ maxLength: 64 })),
  external_id: Type.Optional(Type.String({ maxLength: 256 })),
  flash: Type.Optional(Type.String({ maxLength: 64 })),
})
const ContactParams = Type.Object({ contactId: Uuid() })

/**
 * Contacts (docs/portal.md, "Contacts"): the list with keyset paging, lookup by email or by
 * (source, external_id), and the contact's page at exactly the `links.portal` URL of the read
 * contract (`/contacts/{id}` on the portal origin) with a tracked-link form. Reads go through
 * the read contract's own functions (readContactList, readContact); minting through 4.2's
 * (the per-customer window, then mintContactLink).
 */
function registerContactScreens(scope: App, deps: PlatformDeps): void {
  scope.get(CONTACTS_PATH, { schema: { hide: true, querystring: ListQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const q = request.query
    const email = q.email?.trim() ?? ''
    const source = q.source?.trim() ?? ''
    const externalId = q.external_id?.trim() ?? ''
    let lookupMessage: string | null = null
    // a lookup that cannot run as typed answers the list again with what was typed and why (4xx)
    let lookupRefused = false
    if (email !== '' || source !== '' || externalId !== '') {
      if (email === '' && (source === '' || externalId === '')) {
        lookupMessage = 'Give an email, or both a source and an external id.'
        lookupRefused = true
      } else if (email !== '' && (source !== '' || externalId !== '')) {
        // one lookup at a time: finding by the email would leave the source and external id unread
        lookupMessage =
          'Find by the business email or by the source and external id, not both: clear the email to find by the source and external id, or clear those to find by the email.'
        lookupRefused = true
      } else {
        const found =
          email !== ''
            ? await deps.contacts.findByBusinessEmail(account.id, email.toLowerCase())
            : await deps.contacts.getByAnchor(account.id, source, externalId)
        if (found && found.account_id === account.id) return reply.redirect(`/contacts/${encodeURIComponent(found.id)}`, 303)
        lookupMessage = email !== '' ? `No contact with the business email ${email}.` : `No contact with source ${source} and external id ${externalId}.`
      }
    }
    const first = q.cursor === undefined && q.before === undefined
    const pageNo = pageNumberOf(q.page)
    const list =
      pageNo === null
        ? null
        : await readContactPage(deps, account.id, { include: undefined, cursor: q.cursor, before: q.before, limit: CONTACTS_PAGE_SIZE }).catch(
            (err: unknown) => {
              // a page link that was edited or cut short: said in words, with the way back to page 1
              if (isAppError(err) && err.code === 'invalid_cursor') return null
              throw err
            },
          )
    if (list === null) {
      return sendPage(reply, {
        status: 400,
        account,
        current: CONTACTS_PATH,
        error: BAD_PAGE_LINK,
        title: 'Contacts',
        body: contactListBody({ data: [], next_cursor: null, prev_cursor: null }, { email, source, externalId, first: false }, 1),
      })
    }
    return sendPage(reply, {
      status: lookupRefused ? 400 : 200,
      account,
      current: CONTACTS_PATH,
      error: lookupMessage,
      title: 'Contacts',
      body: contactListBody(list, { email, source, externalId, first }, pageNo ?? 1),
    })
  })

  scope.get('/contacts/:contactId', { schema: { hide: true, params: ContactParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const contact = await readContact(deps, account.id, request.params.contactId, ALL_TIERS).catch(notFoundAs404)
    const notes = await missingNotes(deps, account.id, contact.id, contact.missing)
    return sendPage(reply, { status: 200, account, current: CONTACTS_PATH, title: contactTitle(contact), body: contactPageBody(contact, account, null, notes) })
  })

  // contract 4.2 through the session: the same window and the same mint function
  scope.post('/contacts/:contactId/links', { schema: { hide: true, params: ContactParams } }, async (request, reply) => {
    const session = sessionOf(request)
    const { account } = session
    const contact = await readContact(deps, account.id, request.params.contactId, ALL_TIERS).catch(notFoundAs404)
    const fields = formOf(request.body)
    const destinationUrl = fieldValue(fields, 'destination_url').trim()
    const type: LinkType = fieldValue(fields, 'type') === 'signed' ? 'signed' : 'opaque'
    let result: MintResult
    try {
      await consumeLinkMintQuota(deps, account.id)
      const minted = await mintContactLink(deps, account, { destinationUrl, contactId: contact.id, type })
      await auditOf(deps, request).record({ action: 'link.minted', target: { contact_id: contact.id }, details: { type } })
      result = { ok: true, link: minted.link, type }
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err
      result = { ok: false, error: mintErrorText(err), destinationUrl, type }
    }
    // a redirect (issue 22): a reload mints no second link; the link is shown once on the reveal page
    if (result.ok) {
      return redirectToReveal(deps, request, reply, {
        title: 'Tracked link created',
        label: `Tracked link (${result.type})`,
        secret: result.link,
        note: 'whoever opens it is taken for this contact: give it to them only.',
        back: { path: `/contacts/${encodeURIComponent(contact.id)}`, text: 'Back to the contact' },
        // a link cannot be rotated: once shown, the page says to make a new one (reveal.ts)
        kind: 'tracked_link',
      })
    }
    return sendPage(reply, {
      status: 400,
      account,
      current: CONTACTS_PATH,
      flash: null,
      title: contactTitle(contact),
      body: contactPageBody(contact, account, result),
    })
  })
}

function contactTitle(contact: ContactView): string {
  const name = nameOf(contact)
  return name !== '—' ? name : (contact.handles.business_email ?? `Contact ${contact.id}`)
}

/** The read contract's 404 (`contact not found`) is the screens' 404 page. */
function notFoundAs404(err: unknown): never {
  if (isAppError(err) && err.status === 404) throw new AppError('not_found')
  throw err
}

function mintErrorText(err: AppError): string {
  if (err.status === 429) return 'Too many links minted this minute for this account (120 per minute). Try again in a minute.'
  const detail = err.issues?.length ? err.issues.map((i) => i.message).join('; ') : err.message
  return `The link could not be minted: ${detail}.`
}

/** Contacts: the list, one contact, tracked links. */
export const contactsScreen: ScreenDeclaration = {
  path: CONTACTS_PATH,
  nav: 'Contacts',
  flashes: { 'link-minted': 'Tracked link created.' },
  register: registerContactScreens,
}
