import type { ConnectionView } from '@lsv/shared/contract/admin.ts'
import type { CustomFieldDefinition, FieldMapping } from '@lsv/shared/model/records.ts'
import { CORE_TARGETS, FALLBACK_MAPPINGS, type MappingPreview } from '@lsv/shared/domain/ingest/mapping.ts'
import type { PushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import type { FieldErrors } from '../kit/forms.ts'
import { errorOf, formError, help, uid } from '../kit/ui.ts'
import { jsonView } from '../kit/json-view.ts'
import { droppedKeysTable } from './mapping-review.ts'
import { connectionPath } from './paths.ts'

/** The editor's state after a post (the rows and sample typed, the preview, the errors); empty when opened afresh. */
export interface EditorState {
  /** the rows proposed (the saved ones unless the form was just posted or reopened from the review); two blank rows follow */
  rows?: FieldMapping[]
  /** the rows exactly as shown after Add a row or Remove, blank ones included */
  editing?: FieldMapping[]
  /** the editor row whose key field takes focus (the row added, or the one after the row removed) */
  focusRow?: number
  sample?: string
  /** the sample pasted before the review was too long to come back with it */
  sampleNotKept?: boolean
  preview?: MappingPreview | null
  sampleError?: string | null
  errors?: FieldErrors | null
}

interface MappingsSection {
  connection: ConnectionView
  definitions: CustomFieldDefinition[]
  /** the connection's recent pushes' keys, when a push was kept */
  sample: PushSample | null
  state: EditorState
}

/** The Add a row and Remove buttons post here: the editor again, with every typed row and the sample (nothing stored). */
const mappingRowsPath = (connectionId: string) => `${connectionPath(connectionId)}/mappings/rows`

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

const BLANK: FieldMapping = { from: '', to: '' }

/** One editor row: its key, its target and its Remove button (a submit button of the same form). */
function rowView(
  m: FieldMapping,
  i: number,
  o: { errors: FieldErrors | null | undefined; definitions: CustomFieldDefinition[]; rowsPath: string; focus: boolean },
): SafeHtml {
  const fromId = uid('from')
  const toId = uid('to')
  const err = errorOf(o.errors, `/field_mappings/${i}/from`) ?? errorOf(o.errors, `/field_mappings/${i}/to`) ?? errorOf(o.errors, `/field_mappings/${i}`)
  return html`<tr><td><label for="${fromId}" class="visually-hidden">From, row ${i + 1}</label><input type="text" id="${fromId}" name="from" value="${m.from}"${o.focus ? html` autofocus` : ''}${err ? html` aria-invalid="true" aria-describedby="${fromId}-e"` : ''}>${err ? html`<p class="field-error" id="${fromId}-e">${err}</p>` : ''}</td>
<td><label for="${toId}" class="visually-hidden">To, row ${i + 1}</label><select id="${toId}" name="to">${targetOptions(m.to, o.definitions)}</select></td>
<td><button type="submit" name="action" value="remove-${i}" formaction="${o.rowsPath}" class="secondary">Remove<span class="visually-hidden"> row ${i + 1}</span></button></td></tr>`
}

/** The editor's help: one line on what is read, the rest behind More. */
function hintOf(c: ConnectionView, fallbackNow: boolean): SafeHtml {
  const kind =
    c.type === 'partnercrm'
      ? 'Partner CRM records always fill the six contact fields from their aliases; only custom field targets apply here.'
      : fallbackNow
        ? 'This connection has no mappings yet: the six fields email, first_name, last_name, company, title and external_id are taken by those names.'
        : 'Only the keys named below are read; every other key is dropped.'
  return help(
    kind,
    `${fallbackNow ? 'The rows below are that fallback written out; once any mapping is saved, only saved rows are read, so keep the ones you need. ' : ''}Remove a row with its button (or clear its key); Add a row keeps what you typed. Keys match case-insensitively, ignoring everything but letters and digits. Custom field targets come from Settings. Saving shows what changes on the last push before anything is stored.`,
  )
}

export function mappingsSection({ connection: c, definitions, sample, state: s }: MappingsSection): SafeHtml {
  const rows = s.editing ?? [...editorRows(c, s.rows), BLANK, BLANK]
  const errors = s.errors
  const rowsPath = mappingRowsPath(c.id)
  const sampleNote = s.sampleNotKept
    ? html`<p class="field-error" id="sample-not-kept">The sample you pasted was too long to come back from the review: paste it again to preview.</p>`
    : ''
  const described = ['sample-hint', s.sampleError ? 'sample-error' : '', s.sampleNotKept ? 'sample-not-kept' : ''].filter(Boolean).join(' ')
  return html`<section aria-labelledby="map-h">
<h2 id="map-h">Field mappings</h2>
${hintOf(c, c.type !== 'partnercrm' && c.field_mappings.length === 0)}
${sample ? html`<h3>Keys your pushes carry that no mapping reads</h3>${droppedKeysTable({ connection: c, definitions, sample, columns: [{ label: 'Now', mappings: c.field_mappings }], id: 'dropped-keys' })}` : ''}
<form method="post" action="${connectionPath(c.id)}/mappings" id="mapping-form" data-enhance="replace:preview" data-enhance-only="preview">
<button type="submit" name="action" value="preview" formaction="${connectionPath(c.id)}/preview" hidden tabindex="-1" class="default-submit">Preview</button>
${formError(errors)}
<div class="table-wrap"><table><thead><tr><th scope="col">From (record key)</th><th scope="col">To</th><th scope="col"><span class="visually-hidden">Row</span></th></tr></thead><tbody>
${rows.map((m, i) => rowView(m, i, { errors, definitions, rowsPath, focus: s.focusRow === i }))}
</tbody></table></div>
${errorOf(errors, '/field_mappings') ? html`<p class="field-error">${errorOf(errors, '/field_mappings')}</p>` : ''}
<p><button type="submit" name="action" value="add-row" formaction="${rowsPath}" class="secondary"${s.focusRow === rows.length ? html` autofocus` : ''}>Add a row</button></p>
<label for="sample">Sample record (JSON object) for the preview</label>
<p class="hint" id="sample-hint">Paste one record as your system sends it. Nothing is stored by the preview.</p>
${s.sampleError ? html`<p class="field-error" id="sample-error">${s.sampleError}</p>` : ''}
${sampleNote}
<textarea id="sample" name="sample" aria-describedby="${described}"${s.sampleError ? html` aria-invalid="true"` : ''}>${s.sample ?? ''}</textarea>
<div class="actions">
<button type="submit" name="action" value="preview" formaction="${connectionPath(c.id)}/preview">Preview</button>
<button type="submit" name="action" value="save">Save mappings</button>
</div>
</form>
<div id="preview" aria-live="polite">${s.preview ? previewView(s.preview) : ''}</div>
</section>`
}
