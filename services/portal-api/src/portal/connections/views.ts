import type { ConnectionView } from '@lsv/shared/contract/admin.ts'
import type { ApiKeyRecord, CustomFieldDefinition, LocationRecord } from '@lsv/shared/model/records.ts'
import type { PushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import type { FieldErrors } from '../kit/forms.ts'
import { errorOf, formError, textField } from '../kit/ui.ts'
import { emptyState } from '../kit/empty-state.ts'
import { howToSendSection } from './how-to-send.ts'
import { recentPushesPath } from './recent-pushes.ts'
import { keysSection, locationsSection, tokenSection, type KeyFormValues } from './credential-views.ts'
import { mappingsSection, type EditorState } from './mapping-editor.ts'
import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

const TYPE_LABEL: Record<string, string> = { api: 'API (keys)', webhook: 'Webhook source (token)', partnercrm: 'Partner CRM (locations)' }

/** The list of connections, and the new-connection form (after a refusal: its errors and the values sent). */
interface ListView {
  connections: ConnectionView[]
  errors: FieldErrors | null
  values: Record<string, string>
}

export function listView({ connections, errors, values }: ListView): SafeHtml {
  const rows = connections.map(
    (c) => html`<tr>
<td><a href="${connectionPath(c.id)}">${c.name ?? c.id}</a></td><td>${TYPE_LABEL[c.type] ?? c.type}</td><td><code>${c.source}</code></td>
<td>${c.active ? 'active' : 'inactive'}</td><td><code>${c.id}</code></td></tr>`,
  )
  return html`
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

/** What the connection's page shows besides the stored data: a refused form's errors, and the mapping editor's state. */
export interface DetailState extends Omit<EditorState, 'errors'> {
  errors?: { keys?: FieldErrors | null; locations?: FieldErrors | null; mappings?: FieldErrors | null; token?: FieldErrors | null }
  /** the New key form as sent, when it was refused (shown again as typed) */
  keyValues?: KeyFormValues
}

/** One connection's page: its credentials (by type), how to send, the mapping editor. */
interface DetailView {
  connection: ConnectionView
  /** the connection's own keys and locations */
  keys: ApiKeyRecord[]
  locations: LocationRecord[]
  definitions: CustomFieldDefinition[]
  partnerCrmUrl: string
  edgeBaseUrl: string
  sample: PushSample | null
  state: DetailState
}

export function detailView({ connection: c, keys, locations, definitions, partnerCrmUrl, edgeBaseUrl, sample, state: s }: DetailView): SafeHtml {
  return html`<p><a href="${CONNECTIONS_PATH}">All connections</a></p>
<dl><dt>Type</dt><dd>${TYPE_LABEL[c.type] ?? c.type}</dd><dt>Source</dt><dd><code>${c.source}</code></dd><dt>Id</dt><dd><code>${c.id}</code></dd><dt>State</dt><dd>${c.active ? 'active' : 'inactive'}</dd></dl>
<p><a href="${recentPushesPath(c.id)}">Recent pushes</a>: why a push was refused, what it carried, which key or token sent it (the inbound debugger).</p>
${c.type === 'api' ? keysSection({ connection: c, keys, errors: s.errors?.keys, values: s.keyValues ?? null }) : ''}
${c.type === 'webhook' ? tokenSection(c, s.errors?.token) : ''}
${c.type === 'partnercrm' ? locationsSection({ connection: c, locations, webhookUrl: partnerCrmUrl, errors: s.errors?.locations }) : ''}
${howToSendSection({ connection: c, edgeBaseUrl, locations })}
${mappingsSection({ connection: c, definitions, sample, state: { ...s, errors: s.errors?.mappings ?? null } })}`
}
