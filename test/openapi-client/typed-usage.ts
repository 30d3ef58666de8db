/**
 * Hand-written consumer code over the generated types, compiled with the generated calls: what
 * a client author writes with the read operations' answers (contract 2.1, 2.3) and the failure
 * envelope. With open-object answers (`{[key: string]: unknown}`) `one.handles` is `unknown` and
 * this does not compile.
 */
export const TYPED_USAGE = `import createClient from 'openapi-fetch'
import type { components, paths } from './api'

type Contact = components['schemas']['Contact']
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' })

export async function readOne(id: string) {
  const { data: one, error } = await client.GET('/api/v1/contacts/{id}', { params: { path: { id }, query: { include: 'contact_handles' } } })
  if (error) {
    const text: string = error.error
    const ok: false = error.ok
    return { text, ok }
  }
  const emails: Array<string | null> = one.handles.emails?.map((e) => e.value) ?? []
  const callable: boolean[] = one.handles.phones?.map((p) => p.callable) ?? []
  const fullName: string | null | undefined = one.identity.full_name
  const reasons: string[] = Object.values(one.missing)
  const version: '2026-09-04' = one.contract_version
  const contact: Contact = one
  return { emails, callable, fullName, reasons, version, contact }
}

export async function listPage(cursor?: string) {
  const { data: page } = await client.GET('/api/v1/contacts', { params: { query: { limit: 10, cursor } } })
  if (!page) return null
  const ids: string[] = page.data.map((c) => c.id)
  const firstEmail: string | null | undefined = page.data[0]?.handles.business_email
  const more: boolean = page.has_more
  const next: string | null | undefined = page.next_cursor
  return { ids, firstEmail, more, next }
}

export async function mint(contactId: string) {
  const { data, error } = await client.POST('/api/contacts/links', { body: { destinationUrl: 'https://example.com/', contactId, type: 'signed', expSeconds: 600 } })
  // a 400 may list validation issues; the other failures are the plain envelope
  if (error) return ('issues' in error ? error.issues?.map((i) => i.path) : undefined) ?? [error.error]
  const link: string = data.link
  const type: 'opaque' | 'signed' = data.type
  return [link, type]
}
`

/**
 * Calls the generated types must refuse, one per line (a wrong body member type, a missing path
 * parameter, a member the Contact does not have): proof that the type check can fail.
 */
export const WRONG_USAGE = `import createClient from 'openapi-fetch'
import type { paths } from './api'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' })

export async function wrong() {
  await client.POST('/api/contacts/links', { body: { destinationUrl: 42, contactId: 'c' } })
  await client.GET('/api/v1/contacts/{id}', {})
  const { data } = await client.GET('/api/v1/contacts/{id}', { params: { path: { id: 'c' } } })
  return data?.handles.fax
}
`
