import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { UpdateConnectionBody } from '@lsv/shared/contract/admin.ts'
import { getConnection, updateConnection } from '@lsv/shared/domain/tenants/connections.ts'
import { previewMapping } from '@lsv/shared/domain/ingest/mapping.ts'
import { MAX_VALUE_DEPTH, withinDepth } from '@lsv/shared/domain/ingest/push-body.ts'
import { readPushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { checkAgainst, fieldErrorsOf, fieldValue, type FormFields, MAPPING_FORM_BODY_LIMIT } from '../kit/forms.ts'
import { redirectTo, sendPage } from '../kit/page.ts'
import { FormBody } from '../kit/ui.ts'
import { auditOf } from '../kit/audited.ts'
import { sessionOf } from '../session.ts'
import { ConnectionParams, MappingRowsQuery, queryRows, rowsOf, typedRowsOf } from './form-values.ts'
import { reviewPath, reviewView } from './mapping-review.ts'
import type { ConnectionPages } from './pages.ts'
import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

/** The editor's sample record, parsed as the preview needs it, or why it cannot be previewed. */
function sampleRecordOf(sample: string): { ok: true; record: Record<string, unknown> } | { ok: false; error: string } {
  let record: unknown
  try {
    record = JSON.parse(sample)
  } catch {
    return { ok: false, error: 'not valid JSON' }
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return { ok: false, error: 'must be one JSON object (one record)' }
  // the ingest routes' nesting cap (push-body.ts), checked without recursion: the mapper and
  // the page would otherwise recurse into a hostile depth and overflow the stack (a 500)
  if (!withinDepth(record as Record<string, unknown>)) return { ok: false, error: `nests deeper than ${MAX_VALUE_DEPTH} levels` }
  return { ok: true, record: record as Record<string, unknown> }
}

/**
 * Add a row / Remove (issue 29, D6): the editor again with every row as typed, blank ones
 * included, and the sample; `remove-<i>` leaves row i out. Focus goes to the added row's key, or
 * to what took the removed row's place. Nothing is stored.
 */
function editedRows(fields: FormFields): { editing: ReturnType<typeof typedRowsOf>; focusRow: number } {
  const rows = typedRowsOf(fields)
  const removed = /^remove-(\d+)$/.exec(fieldValue(fields, 'action'))
  if (removed) {
    const i = Number(removed[1])
    const editing = rows.filter((_, at) => at !== i)
    return { editing, focusRow: Math.min(i, editing.length) }
  }
  return { editing: [...rows, { from: '', to: '' }], focusRow: rows.length }
}

/**
 * The field mapping editor: its preview and Add/Remove (pages, nothing stored), Save (303 to the
 * review, nothing stored: issue 22, the first mapping used to end the six-field fallback without a
 * word), the review, and Apply (the only write).
 */
export function registerMappingRoutes(scope: App, deps: PlatformDeps, pages: ConnectionPages): void {
  /** Nothing is stored: the editor's rows and the sample, run through the worker's mapper. */
  const preview = async (request: FastifyRequest, reply: FastifyReply, connectionId: string, fields: FormFields) => {
    const { account } = sessionOf(request)
    const c = await getConnection(deps, account.id, connectionId)
    const rows = rowsOf(fields)
    const sample = fieldValue(fields, 'sample')
    const parsed = sampleRecordOf(sample)
    if (!parsed.ok) return pages.detail(request, reply, { connectionId, state: { rows, sample, sampleError: parsed.error }, status: 400 })
    const definitions = await deps.tenants.listCustomFields(account.id)
    return pages.detail(request, reply, { connectionId, state: { rows, sample, preview: previewMapping(c.type, rows, definitions, parsed.record) } })
  }
  // a fresh options object per route: fastify's hooks may write to one (kit/forms.ts sets bodyLimit)
  const withForm = () => ({ bodyLimit: MAPPING_FORM_BODY_LIMIT, schema: { hide: true, params: ConnectionParams, body: FormBody } })

  scope.post(`${CONNECTIONS_PATH}/:connectionId/mappings`, withForm(), async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    if (fieldValue(request.body, 'action') === 'preview') return preview(request, reply, connectionId, request.body)
    const rows = rowsOf(request.body)
    const sample = fieldValue(request.body, 'sample')
    const invalid = checkAgainst(UpdateConnectionBody, { field_mappings: rows })
    if (invalid) return pages.detail(request, reply, { connectionId, state: { rows, sample, errors: { mappings: invalid } }, status: 400 })
    // another account's id is 404 here too, before any redirect names it
    await getConnection(deps, account.id, connectionId)
    // nothing is stored yet: the review shows what the change does to the last real push, and
    // only its own form applies it; the sample pasted goes with it, back to the editor (D6)
    return redirectTo(reply, reviewPath(connectionId, rows, sample))
  })

  scope.post(`${CONNECTIONS_PATH}/:connectionId/mappings/rows`, withForm(), async (request, reply) => {
    const { account } = sessionOf(request)
    // another account's connection is 404, as the editor's other forms
    await getConnection(deps, account.id, request.params.connectionId)
    return pages.detail(request, reply, {
      connectionId: request.params.connectionId,
      state: { ...editedRows(request.body), sample: fieldValue(request.body, 'sample') },
    })
  })

  scope.get(
    `${CONNECTIONS_PATH}/:connectionId/mappings/review`,
    { schema: { hide: true, params: ConnectionParams, querystring: MappingRowsQuery } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId } = request.params
      const c = await getConnection(deps, account.id, connectionId)
      const rows = queryRows(request.query) ?? []
      const pasted = request.query.sample ?? ''
      const invalid = checkAgainst(UpdateConnectionBody, { field_mappings: rows })
      if (invalid) return pages.detail(request, reply, { connectionId, state: { rows, sample: pasted, errors: { mappings: invalid } }, status: 400 })
      const [definitions, sample] = await Promise.all([deps.tenants.listCustomFields(account.id), readPushSample(deps, c.id)])
      return sendPage(reply, {
        account,
        current: CONNECTIONS_PATH,
        flash: null,
        title: `Review mappings: ${c.name ?? `Connection ${c.id}`}`,
        body: reviewView({ connection: c, proposed: rows, definitions, sample, pasted, pastedNotKept: request.query.sample_not_kept === '1' }),
      })
    },
  )

  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/mappings/apply`,
    { bodyLimit: MAPPING_FORM_BODY_LIMIT, schema: { hide: true, params: ConnectionParams, body: Type.Optional(FormBody) } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId } = request.params
      const rows = rowsOf(request.body ?? {})
      const invalid = checkAgainst(UpdateConnectionBody, { field_mappings: rows })
      if (invalid) return pages.detail(request, reply, { connectionId, state: { rows, errors: { mappings: invalid } }, status: 400 })
      try {
        const withEntry = auditOf(deps, request).change(() => ({
          action: 'connection.mappings',
          target: { connection_id: connectionId },
          details: { mappings: rows.map((m) => `${m.from} → ${m.to}`) },
        }))
        await updateConnection(withEntry, account.id, connectionId, { field_mappings: rows })
      } catch (err) {
        return pages.detail(request, reply, { connectionId, state: { rows, errors: { mappings: fieldErrorsOf(err) } }, status: 400 })
      }
      return redirectTo(reply, connectionPath(connectionId), 'mappings-saved')
    },
  )

  scope.post(`${CONNECTIONS_PATH}/:connectionId/preview`, withForm(), async (request, reply) =>
    preview(request, reply, request.params.connectionId, request.body),
  )
}
