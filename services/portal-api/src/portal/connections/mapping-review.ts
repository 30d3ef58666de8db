import type { ConnectionView } from '@lsv/shared/contract/admin.ts'
import type { CustomFieldDefinition, FieldMapping } from '@lsv/shared/model/records.ts'
import { FALLBACK_MAPPINGS, previewMapping, type MappingPreview } from '@lsv/shared/domain/ingest/mapping.ts'
import { droppedKeys, keyReader } from '@lsv/shared/domain/ingest/mapping-coverage.ts'
import type { PushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import { when } from '../kit/time.ts'
import { jsonView } from '../kit/json-view.ts'
import { connectionPath } from './paths.ts'

/**
 * The longest review address the editor's Save leads to: the request line and headers of the
 * GET that follows must stay within the server's 16 KiB (http/timeouts.ts maxHeaderSize, 431
 * beyond), with room for the cookie and the browser's own headers.
 */
const REVIEW_URL_BUDGET = 8 * 1024

/** The mapping rows (and, with `rows`, how many: an empty proposal is a proposal too) as query parameters. */
function rowsQuery(rows: readonly FieldMapping[]): URLSearchParams {
  const q = new URLSearchParams()
  for (const m of rows) {
    q.append('from', m.from)
    q.append('to', m.to)
  }
  q.append('rows', String(rows.length))
  return q
}

/**
 * Rows and the pasted sample carried through the review and back to the editor (issue 29, D6:
 * nothing is stored, so the address carries them). A sample too long for the address is left
 * out, and the editor says so next to its field instead of showing it empty without a word.
 */
function draftQuery(rows: readonly FieldMapping[], sample: string, budget: number): URLSearchParams {
  const q = rowsQuery(rows)
  if (sample.trim() === '') return q
  const withSample = new URLSearchParams(q)
  withSample.append('sample', sample)
  if (withSample.toString().length <= budget) return withSample
  q.append('sample_not_kept', '1')
  return q
}

/** The review page of a proposed mapping set (GET, nothing stored until its form is applied), with the sample pasted in the editor. */
export const reviewPath = (id: string, rows: readonly FieldMapping[], sample = '') => {
  const path = `${connectionPath(id)}/mappings/review?`
  return path + draftQuery(rows, sample, REVIEW_URL_BUDGET - path.length).toString()
}

/** The editor reopened with the proposed rows and the sample (the review's "Back to the editor"), or the word that it was not kept. */
const editorPath = (id: string, rows: readonly FieldMapping[], sample: string, sampleNotKept: boolean) => {
  const path = connectionPath(id)
  const q = draftQuery(rows, sample, REVIEW_URL_BUDGET - path.length)
  if (sampleNotKept && !q.has('sample_not_kept')) q.append('sample_not_kept', '1')
  return `${path}?${q.toString()}#map-h`
}

/** The fields a mapped record stores, by the name the editor uses (`email`, `custom_fields.plan`). */
function storedFields(p: MappingPreview): Map<string, string> {
  const out = new Map<string, string>()
  if (p.mapped.externalId !== null) out.set('external_id', p.mapped.externalId)
  if (typeof p.mapped.patch.business_email === 'string') out.set('email', p.mapped.patch.business_email)
  const identity = (p.mapped.patch.identity ?? {}) as Record<string, unknown>
  for (const k of ['first_name', 'last_name', 'full_name', 'title']) if (typeof identity[k] === 'string') out.set(k, identity[k])
  if (typeof p.mapped.patch.company?.name === 'string') out.set('company', p.mapped.patch.company.name)
  for (const [k, v] of Object.entries(p.mapped.patch.custom_fields ?? {})) out.set(`custom_fields.${k}`, JSON.stringify(v.value))
  return out
}

const mappingText = (m: FieldMapping) => `${m.from} → ${m.to}`

/**
 * The proposal with the fallback's rows it lacks put back first, when it would end the six-field
 * fallback (issue 29, D6: a tenant who cleared them to map one custom field gets them back in one
 * step, instead of retyping six rows); null when there is nothing to put back.
 */
function withFallbackRows(c: ConnectionView, proposed: readonly FieldMapping[]): FieldMapping[] | null {
  if (c.type === 'partnercrm' || c.field_mappings.length > 0 || proposed.length === 0) return null
  const have = new Set(proposed.map(mappingText))
  const missing = FALLBACK_MAPPINGS.filter((m) => !have.has(mappingText(m)))
  return missing.length ? [...missing, ...proposed] : null
}

/** What the change does to the mapping set itself (rows added and removed, the fallback). */
function changeList(c: ConnectionView, proposed: readonly FieldMapping[]): SafeHtml {
  const before = new Set(c.field_mappings.map(mappingText))
  const after = new Set(proposed.map(mappingText))
  const added = [...after].filter((m) => !before.has(m))
  const removed = [...before].filter((m) => !after.has(m))
  const fallback =
    c.type === 'partnercrm'
      ? ''
      : c.field_mappings.length === 0 && proposed.length > 0
        ? html`<li>The six-field fallback ends: from now on only the rows below are read.</li>`
        : c.field_mappings.length > 0 && proposed.length === 0
          ? html`<li>No mappings: the six-field fallback (email, first_name, last_name, company, title, external_id) applies again.</li>`
          : ''
  return html`<ul>
${fallback}
${added.map((m) => html`<li>Added: <code>${m}</code></li>`)}
${removed.map((m) => html`<li>Removed: <code>${m}</code></li>`)}
${added.length === 0 && removed.length === 0 && fallback === '' ? html`<li>No change to the mappings.</li>` : ''}
</ul>`
}

/** A proposed mapping set next to the connection's saved one. */
interface Proposal {
  connection: ConnectionView
  proposed: readonly FieldMapping[]
  definitions: CustomFieldDefinition[]
}

/** The last push's first record mapped with the current mappings and with the proposed ones. */
function sideBySide({ connection: c, proposed, definitions }: Proposal, sample: PushSample): SafeHtml {
  if (sample.record === null) {
    return html`<p>The last push (${when(sample.at)}) had a first record over the sample size limit, so it is not kept; paste a record into the preview on the connection page to compare.</p>`
  }
  const now = storedFields(previewMapping(c.type, c.field_mappings, definitions, sample.record))
  const after = storedFields(previewMapping(c.type, proposed, definitions, sample.record))
  const lost = [...now.keys()].filter((k) => !after.has(k))
  const names = [...new Set([...now.keys(), ...after.keys()])]
  return html`${
    lost.length
      ? html`<div class="error-summary" role="alert" id="lost"><p><strong>After saving, this push would no longer store:</strong> ${lost.map((k, i) => html`${i ? ', ' : ''}<code>${k}</code>`)}.</p></div>`
      : html`<p id="lost">Nothing this push stores now would be lost.</p>`
  }
<div class="table-wrap"><table id="side-by-side"><caption class="hint">The first record of the last push (${when(sample.at)}), mapped by the worker's own mapper</caption>
<thead><tr><th scope="col">Field</th><th scope="col">Now</th><th scope="col">After saving</th></tr></thead>
<tbody>${names.map(
    (k) =>
      html`<tr><th scope="row"><code>${k}</code></th><td>${now.has(k) ? html`<code>${now.get(k)!}</code>` : '—'}</td><td>${after.has(k) ? html`<code>${after.get(k)!}</code>` : html`<strong>${now.has(k) ? 'not stored' : '—'}</strong>`}</td></tr>`,
  )}</tbody></table></div>
<details><summary>The record as it was pushed</summary>${jsonView(JSON.stringify(sample.record), { label: 'The record as it was pushed' })}</details>`
}

/** Keys recent pushes carried that a mapping set does not read, with the records that carried each. */
interface DroppedKeysTable {
  connection: ConnectionView
  definitions: CustomFieldDefinition[]
  sample: PushSample
  /** one column per mapping set compared (Now, After saving) */
  columns: Array<{ label: string; mappings: readonly FieldMapping[] }>
  /** the table's element id */
  id: string
}

export function droppedKeysTable({ connection: c, definitions, sample, columns, id }: DroppedKeysTable): SafeHtml {
  const readers = columns.map((col) => keyReader(c.type, col.mappings, definitions))
  const dropped = new Set(columns.flatMap((_, i) => droppedKeys(sample.keys, readers[i]!).map((d) => d.key)))
  if (dropped.size === 0) return html`<p id="${id}">Every key of the recent pushes is read by ${columns.length > 1 ? 'both mapping sets' : 'a mapping'}.</p>`
  const rows = droppedKeys(sample.keys, () => false).filter((d) => dropped.has(d.key))
  return html`<div class="table-wrap"><table id="${id}"><caption class="hint">Keys in ${sample.records} records of ${sample.pushes} pushes since ${when(sample.since)} that are dropped (never stored)${sample.other_keys ? `; ${sample.other_keys} occurrences of rarer or very long keys not listed` : ''}</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Records with it</th>${columns.map((col) => html`<th scope="col">${col.label}</th>`)}</tr></thead>
<tbody>${rows.map((d) => html`<tr><td><code>${d.key}</code></td><td>${d.records}</td>${readers.map((r) => html`<td>${r(d.key) ? 'read' : html`<strong>dropped</strong>`}</td>`)}</tr>`)}</tbody></table></div>`
}

interface ReviewView extends Proposal {
  /** the connection's last push kept, null without one */
  sample: PushSample | null
  /** the record pasted in the editor, carried back to it */
  pasted: string
  /** the editor's sample was too long for the address: the editor says so when reopened */
  pastedNotKept: boolean
}

/** The review page: what saving the proposed mappings changes, on a recent real push, and the form that applies it. */
export function reviewView(v: ReviewView): SafeHtml {
  const { connection: c, proposed, definitions, sample } = v
  const base = connectionPath(c.id)
  const hidden = proposed.map((m) => html`<input type="hidden" name="from" value="${m.from}"><input type="hidden" name="to" value="${m.to}">`)
  const restored = withFallbackRows(c, proposed)
  return html`<p><a href="${base}">Back to the connection (nothing saved)</a></p>
<section aria-labelledby="review-h">
<h2 id="review-h">Review the mapping change</h2>
<p class="hint">Nothing is saved yet. Apply below, or leave this page and the mappings stay as they are.</p>
${changeList(c, proposed)}
<h3>On the last push of this connection</h3>
${
  sample
    ? sideBySide(v, sample)
    : html`<p id="no-sample">No push of this connection was accepted in the last 8 days, so there is no real record to compare on. The preview on the connection page runs any record you paste.</p>`
}
${
  sample
    ? html`<h3>Keys that would be dropped</h3>${droppedKeysTable({
        connection: c,
        definitions,
        sample,
        columns: [
          { label: 'Now', mappings: c.field_mappings },
          { label: 'After saving', mappings: proposed },
        ],
        id: 'review-dropped',
      })}`
    : ''
}
<form method="post" action="${base}/mappings/apply" class="actions">
${hidden}
<button type="submit">Apply these mappings</button>
<a href="${editorPath(c.id, proposed, v.pasted, v.pastedNotKept)}">Back to the editor</a>
${restored ? html`<a href="${editorPath(c.id, restored, v.pasted, v.pastedNotKept)}">Edit again with the fallback rows put back</a>` : ''}
</form>
</section>`
}
