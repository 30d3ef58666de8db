import type { AccountRecord } from '@lsv/shared/model/records.ts'
import type { ContactTablePage, readContact } from '@lsv/shared/domain/contacts/read.ts'
import type { MissingNote } from '@lsv/shared/domain/contacts/missing-notes.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { emptyState } from '../kit/empty-state.ts'
import { when } from '../kit/time.ts'
import { CONNECTIONS_PATH } from '../connections/paths.ts'
import { nameSourceText } from '../connections/name-source.ts'
import { pager } from '../kit/pager.ts'
import { jsonView } from '../kit/json-view.ts'

export const CONTACTS_PATH = '/portal/contacts'

/** The Contact exactly as the read contract returns it, and its list page. */
export type ContactView = Awaited<ReturnType<typeof readContact>>

export type MintResult = { ok: true; link: string; type: string } | { ok: false; error: string; destinationUrl: string; type: string }

/** docs/contact-object.md, "Reasons in `missing`", in words for the tenant. */
const MISSING_REASON_TEXT: Record<string, string> = {
  withheld_tier: 'Withheld: this data belongs to a tier (2: contact handles, 3: sensitive traits) your plan does not permit.',
  withheld_compliance: 'Withheld for compliance: this phone number is on a do-not-call list (or its status is unknown), so it is not callable.',
  unmapped: 'Unmapped: no connection maps inbound data to this custom field, and nothing else has filled it. Add a field mapping to fill it.',
  not_enriched: 'Not enriched yet: no data provider has resolved this person so far; enrichment may still fill it.',
  no_source: 'No source: the sources that wrote this person sent no value for it.',
}

export const nameOf = (c: ContactView) => c.identity.full_name ?? ([c.identity.first_name, c.identity.last_name].filter(Boolean).join(' ') || '—')

/** Rows per page of the contact table. */
export const CONTACTS_PAGE_SIZE = 25

export function contactListBody(list: ContactTablePage, lookup: { email: string; source: string; externalId: string; first: boolean }, page: number): SafeHtml {
  const rows = list.data.map(
    (c) => html`<tr>
<td><a href="/contacts/${encodeURIComponent(c.id)}">${nameOf(c)}</a></td>
<td>${c.handles.business_email ?? '—'}</td>
<td>${c.company.name ?? '—'}</td>
<td>${when(c.provenance.last_seen_at)}</td>
</tr>`,
  )
  return html`
<section aria-labelledby="lookup-h">
<h2 id="lookup-h">Find a contact</h2>
<form method="get" action="${CONTACTS_PATH}" class="card">
<label for="email">Business email</label>
<input type="text" id="email" name="email" inputmode="email" autocomplete="off" value="${lookup.email}">
<p class="hint">Or by the pushing system's id:</p>
<label for="source">Source</label>
<input type="text" id="source" name="source" autocomplete="off" value="${lookup.source}">
<label for="external_id">External id</label>
<input type="text" id="external_id" name="external_id" autocomplete="off" value="${lookup.externalId}">
<p><button type="submit">Find</button></p>
</form>
</section>
<section aria-labelledby="list-h">
<h2 id="list-h">All contacts</h2>
${
  list.data.length === 0
    ? lookup.first
      ? emptyState('No contacts yet: they appear here once your systems push them through an inbound connection.', {
          href: CONNECTIONS_PATH,
          text: 'Set up a connection to push to',
        })
      : html`<p>No contacts on this page.</p>`
    : html`<div class="table-wrap"><table>
<caption class="hint">Ordered by contact id; ${CONTACTS_PAGE_SIZE} per page.</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Business email</th><th scope="col">Company</th><th scope="col">Last seen</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
${pager({
  label: 'Contact pages',
  path: CONTACTS_PATH,
  page,
  rows: list.data.length,
  size: CONTACTS_PAGE_SIZE,
  noun: 'contacts',
  prev: list.prev_cursor ? `before=${encodeURIComponent(list.prev_cursor)}` : null,
  next: list.next_cursor ? `cursor=${encodeURIComponent(list.next_cursor)}` : null,
  firstText: 'First page',
  away: !lookup.first,
})}
</section>`
}

/** A missing key's note: its words escaped, its instants in the portal's one time format. */
const noteHtml = (note: MissingNote): SafeHtml => html`${note.map((part) => (typeof part === 'string' ? part : when(part.at)))}`

function definitionList(title: string, members: Record<string, string | null | undefined>): SafeHtml {
  const entries = Object.entries(members).filter((e): e is [string, string] => typeof e[1] === 'string')
  return html`<h3>${title}</h3>${entries.length === 0 ? html`<p class="hint">Nothing known.</p>` : html`<dl class="kv">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`}`
}

/**
 * `notes`: what is known of a missing key beyond its reason (domain/contacts/missing-notes.ts: a
 * refused value, a field pushed before its mapping existed), shown instead of the reason's
 * general words, which would then be wrong. Its instants are shown as every instant is (`when`).
 */
export function contactPageBody(
  contact: ContactView,
  account: AccountRecord,
  mint: MintResult | null,
  notes: Readonly<Record<string, MissingNote>> = {},
): SafeHtml {
  const missing = Object.entries(contact.missing)
  const emails = contact.handles.emails
  const phones = contact.handles.phones
  const defaultDestination = account.authorized_domains[0] ? `https://${account.authorized_domains[0]}/` : ''
  return html`
<p class="hint">Contact <code>${contact.id}</code> · <a href="${CONTACTS_PATH}">All contacts</a></p>
<section aria-labelledby="profile-h">
<h2 id="profile-h">Profile</h2>
<p>Subject type: <strong>${contact.subject_type}</strong></p>
${definitionList('Identity', contact.identity)}
${definitionList('Company', contact.company)}
${definitionList('Location', contact.location)}
<h3>Handles</h3>
<dl class="kv">
<dt>Business email</dt><dd>${contact.handles.business_email ?? '—'}</dd>
<dt>Emails</dt><dd>${emails.length ? emails.map((e) => html`${e.value}${e.kind ? html` (${e.kind})` : ''} `) : '—'}</dd>
<dt>Phones</dt><dd>${phones.length ? phones.map((p) => html`${p.value} `) : '—'}</dd>
</dl>
${contact.traits.length ? html`<h3>Traits</h3><dl class="kv">${contact.traits.map((t) => html`<dt>${t.label ?? t.key ?? '—'}</dt><dd>${t.value ?? '—'} <span class="hint">(${t.group})</span></dd>`)}</dl>` : ''}
</section>
<section aria-labelledby="cf-h">
<h2 id="cf-h">Custom fields</h2>
${
  contact.custom_fields.length === 0
    ? html`<p>No custom field has a value.</p>`
    : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Provenance</th></tr></thead>
<tbody>${contact.custom_fields.map((f) => html`<tr><td>${f.label} <code>${f.key}</code></td><td>${typeof f.value === 'string' ? f.value : (JSON.stringify(f.value) ?? '')}</td><td>${SOURCE_TEXT[f.source] ?? f.source}${f.enriched_at ? html`, enriched ${when(f.enriched_at)}` : ''}</td></tr>`)}</tbody>
</table></div>`
}
</section>
<section aria-labelledby="missing-h">
<h2 id="missing-h">Missing data, and why</h2>
${
  missing.length === 0
    ? html`<p>Nothing is missing: every key this contact can have has a value.</p>`
    : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Key</th><th scope="col">Reason</th></tr></thead>
<tbody>${missing.map(([key, reason]) => html`<tr><td><code>${key}</code></td><td><code>${reason}</code>: ${notes[key] ? noteHtml(notes[key]) : (MISSING_REASON_TEXT[reason] ?? '')}</td></tr>`)}</tbody>
</table></div>`
}
</section>
<section aria-labelledby="prov-h">
<h2 id="prov-h">Provenance</h2>
<dl class="kv">
<dt>First seen</dt><dd>${when(contact.provenance.first_seen_at)}</dd>
<dt>Last seen</dt><dd>${when(contact.provenance.last_seen_at)}</dd>
<dt>Name from</dt><dd>${nameSourceText(contact.provenance.name_source)}</dd>
<dt>Resolved by</dt><dd>${contact.provenance.resolved_by ?? 'not resolved by a data provider'}</dd>
</dl>
</section>
<section aria-labelledby="mint-h" id="mint">
<h2 id="mint-h">Tracked link</h2>
<p>A link to one of your authorized domains that identifies this contact when it is visited.</p>
${mint?.ok ? html`<div class="secret" role="status"><p>Tracked link (${mint.type}):</p><p><code id="minted-link">${mint.link}</code></p><button type="button" class="copy" data-copy-target="minted-link" hidden>Copy</button></div>` : ''}
<form method="post" action="/contacts/${encodeURIComponent(contact.id)}/links" class="card">
<label for="destination_url">Destination URL</label>
<input type="url" id="destination_url" name="destination_url" required value="${mint && !mint.ok ? mint.destinationUrl : defaultDestination}"${mint && !mint.ok ? html` aria-invalid="true" aria-describedby="mint-error"` : ''}>
${mint && !mint.ok ? html`<p class="field-error" id="mint-error">${mint.error}</p>` : html`<p class="hint">Must be on an authorized domain (Settings).</p>`}
<fieldset><legend>Link type</legend>
<label class="inline"><input type="radio" name="type" value="opaque"${mint?.type === 'signed' ? '' : ' checked'}> opaque (stored token)</label>
<label class="inline"><input type="radio" name="type" value="signed"${mint?.type === 'signed' ? ' checked' : ''}> signed (self-contained)</label>
</fieldset>
<p><button type="submit">Create tracked link</button></p>
</form>
</section>
<section aria-labelledby="raw-h">
<h2 id="raw-h">As the read contract returns it</h2>
<details><summary>Contact JSON (<code>GET /api/v1/contacts/${contact.id}?include=contact_handles,sensitive_traits</code>)</summary>
${jsonView(JSON.stringify(contact), { label: 'Contact JSON' })}
</details>
</section>`
}

const SOURCE_TEXT: Record<string, string> = {
  inbound_mapping: 'from an inbound push, through a field mapping',
  ai_enrichment: 'from AI enrichment',
  manual: 'entered by hand',
}
