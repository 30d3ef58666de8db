import type { ConnectionView } from '@lsv/shared/contract/admin.ts'
import { ALL_SCOPES, type ApiKeyRecord, type CustomFieldDefinition, type FieldMapping, type LocationRecord } from '@lsv/shared/model/records.ts'
import { CORE_TARGETS, FALLBACK_MAPPINGS, type MappingPreview } from '@lsv/shared/domain/ingest/mapping.ts'
import type { PushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '@lsv/shared/contract/admin.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import type { FieldErrors } from '../kit/forms.ts'
import { errorOf, formError, help, textField, uid } from '../kit/ui.ts'
import { jsonView } from '../kit/json-view.ts'
import { when } from '../kit/time.ts'
import { longId } from '../kit/ids.ts'
import { droppedKeysTable } from './mapping-review.ts'
import { emptyState } from '../kit/empty-state.ts'
import { howToSendSection } from './how-to-send.ts'
import { recentPushesPath } from './recent-pushes.ts'

import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

export { CONNECTIONS_PATH, connectionPath }

const TYPE_LABEL: Record<string, string> = { api: 'API (keys)', webhook: 'Webhook source (token)', partnercrm: 'Partner CRM (locations)' }

/** The list of connections and the form to create one. */
export function listView(connections: ConnectionView[], errors: FieldErrors | null, created: SafeHtml | null, values: Record<string, string> = {}): SafeHtml {
  const rows = connections.map(
    (c) => html`<tr>
<td><a href="${connectionPath(c.id)}">${c.name ?? c.id}</a></td><td>${TYPE_LABEL[c.type] ?? c.type}</td><td><code>${c.source}</code></td>
<td>${c.active ? 'active' : 'inactive'}</td><td><code>${c.id}</code></td></tr>`,
  )
  return html`
${created ?? ''}
<section aria-labelledby="list-h">
<h2 id="list-h">Connections</h2>
${
  connections.length === 0
    ? emptyState('No connections yet: contacts come in through a connection (an API with keys, a webhook source or a partner CRM).', {
        href: '#new-h',
        text: 'Create your first connection',
      })
    : html`<div class="table-wrap"><table>
<caption class="hint">Where contacts come in: API pushes with keys, webhook sources with a token, partner CRM locations.</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Source</th><th scope="col">State</th><th scope="col">Id</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
</section>
<section aria-labelledby="new-h">
<h2 id="new-h">New connection</h2>
<form method="post" action="${CONNECTIONS_PATH}">
${formError(errors)}
<fieldset><legend>Type</legend>
${errorOf(errors, '/type') ? html`<p class="field-error">${errorOf(errors, '/type')}</p>` : ''}
${(['api', 'webhook', 'partnercrm'] as const).map((t) => html`<label class="inline"><input type="radio" name="type" value="${t}"${(values.type ?? 'api') === t ? html` checked` : ''}> ${TYPE_LABEL[t]}</label>`)}
</fieldset>
${textField({ label: 'Name (optional)', name: 'name', value: values.name, error: errorOf(errors, '/name') })}
<div class="source-field">
${textField({ label: 'Source (optional)', name: 'source', value: values.source, hint: 'The `source` of the (source, external_id) anchor: lower-case letters, digits, - and _. Default: the type.', more: 'Not for a partner CRM connection, whose source is always partnercrm.', error: errorOf(errors, '/source') })}
</div>
<p><button type="submit">Create connection</button></p>
</form>
</section>`
}

export interface DetailState {
  secret?: SafeHtml | null
  errors?: { keys?: FieldErrors | null; locations?: FieldErrors | null; mappings?: FieldErrors | null; token?: FieldErrors | null }
  /** the rows shown in the mapping editor (the saved ones unless the form was just posted) */
  rows?: FieldMapping[]
  sample?: string
  preview?: MappingPreview | null
  sampleError?: string | null
}

/** The grace periods offered (issue 29, D7): chosen from a list, not typed in seconds. The routes still take any grace the management API takes. */
const GRACE_CHOICES: readonly (readonly [number, string])[] = [
  [0, 'None: at once'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
  [604_800, '7 days'],
]

/** The grace choice of a rotation (default: the API's default grace) or a revocation (default none: at once). */
function graceField(value: number = DEFAULT_ROTATION_GRACE_SECONDS): SafeHtml {
  const id = uid('grace')
  return html`<span><label for="${id}">Grace</label><select id="${id}" name="grace_seconds">${GRACE_CHOICES.map(
    ([seconds, words]) => html`<option value="${seconds}"${seconds === value ? html` selected` : ''}>${words}</option>`,
  )}</select></span>`
}

/**
 * A key's state. A rotated or revoked key keeps working until its revoked_at (the grace period),
 * so a revoked_at still ahead reads as when it stops, not as "revoked" (issue 22, 3).
 */
function keyState(k: Pick<ApiKeyRecord, 'revoked_at' | 'expires_at'>, now: number): SafeHtml | string {
  if (k.revoked_at && Date.parse(k.revoked_at) > now) return html`stops working ${when(k.revoked_at)} (grace period)`
  if (k.revoked_at) return html`revoked ${when(k.revoked_at)}`
  if (k.expires_at && Date.parse(k.expires_at) <= now) return html`expired ${when(k.expires_at)}`
  return k.expires_at ? html`active until ${when(k.expires_at)}` : 'active'
}

function keysSection(c: ConnectionView, keys: ApiKeyRecord[], errors: FieldErrors | null | undefined, now = Date.now()): SafeHtml {
  const base = connectionPath(c.id)
  const rows = keys.map(
    (k) => html`<tr>
<td><code>${k.prefix}…</code></td><td>${k.name ?? '—'}</td><td>${k.scopes.join(', ')}</td><td>${when(k.created_at)}</td>
<td>${keyState(k, now)}</td>
<td>${
      k.revoked_at
        ? Date.parse(k.revoked_at) > now
          ? html`<form method="post" action="${base}/keys/${encodeURIComponent(k.id)}/revoke"><input type="hidden" name="grace_seconds" value="0"><button type="submit" class="danger">Revoke now</button></form>`
          : ''
        : html`<div class="actions">
<form method="post" action="${base}/keys/${encodeURIComponent(k.id)}/rotate">${graceField()}<button type="submit">Rotate</button></form>
<form method="post" action="${base}/keys/${encodeURIComponent(k.id)}/revoke">${graceField(0)}<button type="submit" class="danger">Revoke</button></form>
</div>`
    }</td></tr>`,
  )
  return html`<section aria-labelledby="keys-h">
<h2 id="keys-h">API keys</h2>
${keys.length ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>No keys yet.</p>`}
${help('Rotate: a new key now, the old one keeps working for the grace period.', 'Revoke: the key stops after the grace (none = at once). A key in its grace period can be revoked now.')}
<h3>New key</h3>
<form method="post" action="${base}/keys">
${formError(errors)}
<fieldset><legend>Scopes</legend>
${errorOf(errors, '/scopes') ? html`<p class="field-error">${errorOf(errors, '/scopes')}</p>` : ''}
${ALL_SCOPES.map((s) => html`<label class="inline"><input type="checkbox" name="scopes" value="${s}"${s === 'contacts:write' ? html` checked` : ''}> <code>${s}</code></label>`)}
</fieldset>
${textField({ label: 'Name (optional)', name: 'name', error: errorOf(errors, '/name') })}
<p><button type="submit">Create key</button></p>
</form>
</section>`
}

function tokenSection(c: ConnectionView, errors: FieldErrors | null | undefined): SafeHtml {
  return html`<section aria-labelledby="token-h">
<h2 id="token-h">Webhook source</h2>
<p>URL: <code>${c.webhook_url ?? ''}</code></p>
${help(html`Callers send the source token in <code>x-webhook-token</code>.`, 'It was shown once when the connection was created; rotate to get a new one.')}
<form method="post" action="${connectionPath(c.id)}/token/rotate" class="actions">
${formError(errors)}
${graceField()}<button type="submit">Rotate token</button>
</form>
</section>`
}

function locationsSection(c: ConnectionView, locations: LocationRecord[], webhookUrl: string, errors: FieldErrors | null | undefined): SafeHtml {
  const base = connectionPath(c.id)
  const rows = locations.map(
    (l) => html`<tr>
<td>${longId(l.location_id, 'location id')}</td><td><code>${webhookUrl}?token=…</code></td><td>${l.active ? 'active' : 'removed'}</td><td>${when(l.created_at)}</td>
<td>${
      l.active
        ? html`<div class="actions">
<form method="post" action="${base}/locations/${encodeURIComponent(l.location_id)}/rotate">${graceField()}<button type="submit">Rotate token</button></form>
<form method="post" action="${base}/locations/${encodeURIComponent(l.location_id)}/remove"><button type="submit" class="danger">Remove</button></form>
</div>`
        : ''
    }</td></tr>`,
  )
  return html`<section aria-labelledby="loc-h">
<h2 id="loc-h">Partner CRM locations</h2>
<form method="post" action="${base}/require-token" class="card">
<p><strong>Require token:</strong> ${c.require_token ? 'on — calls without a location token are refused (401).' : 'off — calls without a token are still accepted for this connection.'}</p>
<input type="hidden" name="require_token" value="${c.require_token ? 'false' : 'true'}">
<button type="submit">${c.require_token ? 'Accept token-less calls again' : 'Require a token from now on'}</button>
</form>
${locations.length ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Location</th><th scope="col">Tokenized URL</th><th scope="col">State</th><th scope="col">Added</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>No locations yet.</p>`}
<p class="hint">A location's token is shown once, in its tokenized URL, when it is added or rotated.</p>
<h3>Add a location</h3>
<form method="post" action="${base}/locations">
${formError(errors, {
  // addLocation's only conflict: the id is an active location of this connection already
  conflict:
    'That location id is already added to this connection, so nothing was changed. Its URL was shown when it was added; to get a new one, use Rotate token in its row above.',
})}
${textField({ label: 'Location id', name: 'location_id', required: true, error: errorOf(errors, '/location_id') })}
<p><button type="submit">Add location</button></p>
</form>
</section>`
}

function targetOptions(selected: string, definitions: CustomFieldDefinition[]): SafeHtml[] {
  const all = [...CORE_TARGETS, ...definitions.map((d) => `custom_fields.${d.key}`)]
  if (selected && !all.includes(selected)) all.push(selected)
  return [
    html`<option value=""${selected === '' ? html` selected` : ''}>—</option>`,
    ...all.map((t) => html`<option value="${t}"${t === selected ? html` selected` : ''}>${t}</option>`),
  ]
}

function previewView(p: MappingPreview): SafeHtml {
  const cf = p.mapped.patch.custom_fields ?? {}
  return html`<div class="card">
<h3>Preview</h3>
<p><strong>external_id:</strong> ${p.mapped.externalId === null ? html`<span class="field-error">none found — this record would not be accepted</span>` : html`<code>${p.mapped.externalId}</code>`}</p>
<div class="table-wrap"><table><caption class="hint">Each key of the sample</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Goes to</th><th scope="col">Dropped because</th></tr></thead>
<tbody>${p.keys.map((k) => html`<tr><td><code>${k.key}</code></td><td>${k.targets.length ? k.targets.map((t, i) => html`${i ? ', ' : ''}<code>${t}</code>`) : '—'}</td><td>${k.dropped ?? ''}</td></tr>`)}</tbody></table></div>
${p.ignoredMappings.length ? html`<p><strong>Mappings that take no part:</strong></p><ul>${p.ignoredMappings.map((m) => html`<li><code>${m.from} → ${m.to}</code>: ${m.reason}</li>`)}</ul>` : ''}
<p><strong>Stored contact fields:</strong></p>
${jsonView(JSON.stringify({ business_email: p.mapped.patch.business_email, identity: p.mapped.patch.identity, company: p.mapped.patch.company }), { label: 'Stored contact fields' })}
<p><strong>Custom field values as stored:</strong></p>
${Object.keys(cf).length ? html`<ul>${Object.entries(cf).map(([k, v]) => html`<li><code>${k}</code>: <code>${JSON.stringify(v.value)}</code></li>`)}</ul>` : html`<p>none</p>`}
</div>`
}

/**
 * The editor's rows: the posted ones, else the saved ones, else, for a connection without
 * mappings, the six-field fallback written out as rows. Saving any mapping ends the fallback
 * (contract 2.5); starting from the fallback's rows, a tenant who adds one custom field row saves
 * email, names, company, title and external_id with it instead of silently losing them.
 */
function editorRows(c: ConnectionView, posted: FieldMapping[] | undefined): FieldMapping[] {
  if (posted) return posted
  if (c.field_mappings.length > 0 || c.type === 'partnercrm') return c.field_mappings
  return FALLBACK_MAPPINGS.map((m) => ({ ...m }))
}

function mappingsSection(c: ConnectionView, definitions: CustomFieldDefinition[], s: DetailState, sample: PushSample | null): SafeHtml {
  const rows = [...editorRows(c, s.rows), { from: '', to: '' }, { from: '', to: '' }]
  const errors = s.errors?.mappings
  const fallbackNow = c.type !== 'partnercrm' && c.field_mappings.length === 0
  return html`<section aria-labelledby="map-h">
<h2 id="map-h">Field mappings</h2>
${help(
  c.type === 'partnercrm'
    ? 'Partner CRM records always fill the six contact fields from their aliases; only custom field targets apply here.'
    : fallbackNow
      ? 'This connection has no mappings yet: the six fields email, first_name, last_name, company, title and external_id are taken by those names.'
      : 'Only the keys named below are read; every other key is dropped.',
  `${fallbackNow ? 'The rows below are that fallback written out; once any mapping is saved, only saved rows are read, so keep the ones you need. ' : ''}Clear a row's key to remove the row. Keys match case-insensitively, ignoring everything but letters and digits. Custom field targets come from Settings. Saving shows what changes on the last push before anything is stored.`,
)}
${sample ? html`<h3>Keys your pushes carry that no mapping reads</h3>${droppedKeysTable(c, definitions, sample, [{ label: 'Now', mappings: c.field_mappings }], 'dropped-keys')}` : ''}
<form method="post" action="${connectionPath(c.id)}/mappings" id="mapping-form" data-enhance="replace:preview" data-enhance-only="preview">
${formError(errors)}
<div class="table-wrap"><table><thead><tr><th scope="col">From (record key)</th><th scope="col">To</th></tr></thead><tbody>
${rows.map((m, i) => {
  const fromId = uid('from')
  const toId = uid('to')
  const err = errorOf(errors, `/field_mappings/${i}/from`) ?? errorOf(errors, `/field_mappings/${i}/to`) ?? errorOf(errors, `/field_mappings/${i}`)
  return html`<tr><td><label for="${fromId}" class="visually-hidden">From, row ${i + 1}</label><input type="text" id="${fromId}" name="from" value="${m.from}"${err ? html` aria-invalid="true" aria-describedby="${fromId}-e"` : ''}>${err ? html`<p class="field-error" id="${fromId}-e">${err}</p>` : ''}</td>
<td><label for="${toId}" class="visually-hidden">To, row ${i + 1}</label><select id="${toId}" name="to">${targetOptions(m.to, definitions)}</select></td></tr>`
})}
</tbody></table></div>
${errorOf(errors, '/field_mappings') ? html`<p class="field-error">${errorOf(errors, '/field_mappings')}</p>` : ''}
<label for="sample">Sample record (JSON object) for the preview</label>
<p class="hint" id="sample-hint">Paste one record as your system sends it. Nothing is stored by the preview.</p>
${s.sampleError ? html`<p class="field-error" id="sample-error">${s.sampleError}</p>` : ''}
<textarea id="sample" name="sample" aria-describedby="sample-hint${s.sampleError ? ' sample-error' : ''}"${s.sampleError ? html` aria-invalid="true"` : ''}>${s.sample ?? ''}</textarea>
<div class="actions">
<button type="submit" name="action" value="preview" formaction="${connectionPath(c.id)}/preview">Preview</button>
<button type="submit" name="action" value="save">Save mappings</button>
</div>
</form>
<div id="preview" aria-live="polite">${s.preview ? previewView(s.preview) : ''}</div>
</section>`
}

export function detailView(
  c: ConnectionView,
  ctx: {
    keys: ApiKeyRecord[]
    locations: LocationRecord[]
    definitions: CustomFieldDefinition[]
    partnerCrmUrl: string
    edgeBaseUrl: string
    sample?: PushSample | null
  },
  s: DetailState = {},
): SafeHtml {
  return html`<p><a href="${CONNECTIONS_PATH}">All connections</a></p>
${s.secret ?? ''}
<dl><dt>Type</dt><dd>${TYPE_LABEL[c.type] ?? c.type}</dd><dt>Source</dt><dd><code>${c.source}</code></dd><dt>Id</dt><dd><code>${c.id}</code></dd><dt>State</dt><dd>${c.active ? 'active' : 'inactive'}</dd></dl>
<p><a href="${recentPushesPath(c.id)}">Recent pushes</a>: why a push was refused, what it carried, which key or token sent it (the inbound debugger).</p>
${c.type === 'api' ? keysSection(c, ctx.keys, s.errors?.keys) : ''}
${c.type === 'webhook' ? tokenSection(c, s.errors?.token) : ''}
${c.type === 'partnercrm' ? locationsSection(c, ctx.locations, ctx.partnerCrmUrl, s.errors?.locations) : ''}
${howToSendSection(c, ctx.edgeBaseUrl, ctx.locations)}
${mappingsSection(c, ctx.definitions, s, ctx.sample ?? null)}`
}
