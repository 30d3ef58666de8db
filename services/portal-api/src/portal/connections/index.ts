import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { CreateConnectionBody, CreateKeyBody, RotateBody, UpdateConnectionBody } from '@lsv/shared/contract/admin.ts'
import { createConnection, getConnection, listConnections, updateConnection } from '@lsv/shared/domain/tenants/connections.ts'
import { issueApiKey, revokeApiKey, rotateApiKey } from '@lsv/shared/domain/tenants/manage-api-keys.ts'
import { rotateSourceToken } from '@lsv/shared/domain/tenants/rotate-source-token.ts'
import { addLocation, removeLocation, rotateLocationToken } from '@lsv/shared/domain/tenants/locations.ts'
import { partnerCrmWebhookUrl } from '@lsv/shared/domain/tenants/views.ts'
import { edgeBaseUrlFor } from '@lsv/shared/config/config.ts'
import { previewMapping } from '@lsv/shared/domain/ingest/mapping.ts'
import { MAX_VALUE_DEPTH, withinDepth } from '@lsv/shared/domain/ingest/push-body.ts'
import type { ApiKeyRecord, ConnectionRecord, FieldMapping, LocationRecord } from '@lsv/shared/model/records.ts'
import type { SafeHtml } from '../kit/html.ts'
import { checkAgainst, checkForm, fieldErrorsOf, listOf, fieldValue, type FieldErrors, type FormFields, MAPPING_FORM_BODY_LIMIT } from '../kit/forms.ts'
import { redirectTo, sendPage } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { FormBody } from '../kit/ui.ts'
import { redirectToReveal } from '../reveal.ts'
import { CONNECTIONS_PATH, connectionPath, detailView, listView, type DetailState } from './views.ts'
import { reviewPath, reviewView } from './mapping-review.ts'
import { readPushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { registerRecentPushes } from './recent-pushes.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { auditOf } from '../kit/audited.ts'
import { exactUtc } from '../kit/time.ts'

const ConnectionParams = Type.Object({ connectionId: Type.String() })
const KeyParams = Type.Object({ connectionId: Type.String(), keyId: Type.String() })
const LocationParams = Type.Object({ connectionId: Type.String(), locationId: Type.String() })
const FlashQuery = Type.Object({ flash: Type.Optional(Type.String()) })
/** A query's list of values: a name given once arrives as a string, several times as a list. */
const QueryList = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))
/** The mapping rows a page is opened with (the review, the editor reopened from it): nothing stored. */
const MappingRowsQuery = Type.Object({ flash: Type.Optional(Type.String()), from: QueryList, to: QueryList, rows: Type.Optional(Type.String()) })

/** A form's integer field: the number, or the text itself (so the schema's message names it). */
function integerOf(fields: FormFields, name: string): number | string | undefined {
  const v = fieldValue(fields, name).trim()
  if (v === '') return undefined
  return /^\d+$/.test(v) ? Number(v) : v
}

/**
 * The mapping editor's rows. A row without a key is skipped whatever its target: clearing the key
 * removes the row (the editor starts from the fallback's six rows, each with its target chosen).
 */
function rowsOf(fields: FormFields): FieldMapping[] {
  const from = listOf(fields, 'from')
  const to = listOf(fields, 'to')
  const rows: FieldMapping[] = []
  for (let i = 0; i < Math.max(from.length, to.length); i++) {
    const f = (from[i] ?? '').trim()
    const t = to[i] ?? ''
    if (f === '') continue
    rows.push({ from: f, to: t })
  }
  return rows
}

/** Mapping rows carried in a query (reviewPath): present only when the query says how many. */
function queryRows(query: { from?: string | string[]; to?: string | string[]; rows?: string }): FieldMapping[] | undefined {
  if (query.rows === undefined) return undefined
  return rowsOf({ ...(query.from === undefined ? {} : { from: query.from }), ...(query.to === undefined ? {} : { to: query.to }) })
}

/**
 * Screen 1, Inbound connections (docs/portal.md): the same domain functions as the management
 * API's routes (routes/admin/connections.ts, keys.ts, locations.ts), scoped to the session's
 * account; every change is audited. Every form answers with a redirect (303): a new secret is
 * shown once, on the reveal page the redirect leads to (reveal.ts), never in a URL.
 */
function registerConnectionsScreen(scope: App, deps: PlatformDeps): void {
  registerRecentPushes(scope, deps)
  const ctxOf = async (accountId: string) => ({
    keys: await deps.tenants.listApiKeys(accountId),
    locations: await deps.tenants.listLocations(accountId),
    definitions: await deps.tenants.listCustomFields(accountId),
  })

  /** Renders the connection's page (after a POST: with a secret or errors). */
  const detail = async (request: FastifyRequest, reply: FastifyReply, connectionId: string, state: DetailState, status = 200, flash?: string | null) => {
    const { account } = sessionOf(request)
    const c = await getConnection(deps, account.id, connectionId)
    const ctx = await ctxOf(account.id)
    return sendPage(reply, {
      status: status,
      account,
      current: CONNECTIONS_PATH,
      flash,
      title: c.name ?? `Connection ${c.id}`,
      body: detailView(
        c,
        {
          keys: ctx.keys.filter((k) => k.connection_id === c.id),
          locations: ctx.locations.filter((l) => l.connection_id === c.id),
          definitions: ctx.definitions,
          partnerCrmUrl: partnerCrmWebhookUrl(deps.config, account),
          edgeBaseUrl: edgeBaseUrlFor(deps.config, account.public_id),
          sample: await readPushSample(deps, c.id),
        },
        state,
      ),
    })
  }

  const list = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    errors: FieldErrors | null,
    created: SafeHtml | null,
    values: Record<string, string> = {},
    flash?: string | null,
  ) => {
    const { account } = sessionOf(request)
    const { data } = await listConnections(deps, account.id)
    return sendPage(reply, {
      status: status,
      account,
      current: CONNECTIONS_PATH,
      flash,
      title: 'Inbound connections',
      body: listView(data, errors, created, values),
    })
  }

  scope.get(CONNECTIONS_PATH, { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => list(request, reply, 200, null, null))

  scope.post(CONNECTIONS_PATH, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const values = { type: fieldValue(request.body, 'type'), name: fieldValue(request.body, 'name').trim(), source: fieldValue(request.body, 'source').trim() }
    const body = { type: values.type, ...(values.name ? { name: values.name } : {}), ...(values.source ? { source: values.source } : {}) }
    const checked = checkForm(CreateConnectionBody, body)
    if (!checked.ok) return list(request, reply, 400, checked.errors, null, values)
    let created
    try {
      const withEntry = auditOf(deps, request).change((c: ConnectionRecord) => ({
        action: 'connection.create',
        target: { connection_id: c.id },
        details: { type: c.type, source: c.source },
      }))
      created = await createConnection(withEntry, account.id, checked.value)
    } catch (err) {
      return list(request, reply, 400, fieldErrorsOf(err), null, values)
    }
    if (created.token) {
      // a webhook source's token: shown once
      return redirectToReveal(deps, request, reply, {
        title: 'Connection created',
        label: 'Source token',
        secret: created.token,
        note: 'copy it now: it is not shown again.',
        back: { path: connectionPath(created.id), text: 'Go to the connection' },
      })
    }
    return redirectTo(reply, connectionPath(created.id), 'connection-created')
  })

  scope.get(
    `${CONNECTIONS_PATH}/:connectionId`,
    { schema: { hide: true, params: ConnectionParams, querystring: MappingRowsQuery } },
    async (request, reply) => {
      // reopened from the mapping review: the editor shows the proposed rows again (nothing stored)
      const rows = queryRows(request.query)
      return detail(request, reply, request.params.connectionId, rows ? { rows } : {})
    },
  )

  // ---- API keys ----
  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    const scopes = listOf(request.body, 'scopes')
    const name = fieldValue(request.body, 'name').trim()
    const body = { scopes, ...(name ? { name } : {}) }
    const checked = checkForm(CreateKeyBody, body)
    if (!checked.ok) return detail(request, reply, connectionId, { errors: { keys: checked.errors } }, 400)
    let created
    try {
      const withEntry = auditOf(deps, request).change((k: ApiKeyRecord) => ({
        action: 'api_key.create',
        target: { connection_id: connectionId, key_id: k.id },
        details: { scopes: k.scopes, prefix: k.prefix },
      }))
      created = await issueApiKey(withEntry, account.id, connectionId, checked.value)
    } catch (err) {
      return detail(request, reply, connectionId, { errors: { keys: fieldErrorsOf(err) } }, 400)
    }
    return redirectToReveal(deps, request, reply, {
      title: 'API key created',
      label: 'New API key',
      secret: created.key,
      note: 'copy it now: it is not shown again.',
      back: { path: connectionPath(connectionId), text: 'Back to the connection' },
    })
  })

  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys/:keyId/rotate`, { schema: { hide: true, params: KeyParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId, keyId } = request.params
    const body = { grace_seconds: integerOf(request.body, 'grace_seconds') }
    if (body.grace_seconds === undefined) delete body.grace_seconds
    const invalid = checkAgainst(RotateBody, body)
    if (invalid) return detail(request, reply, connectionId, { errors: { keys: { '': `Grace: ${Object.values(invalid)[0]}` } } }, 400)
    let rotated
    try {
      rotated = await rotateApiKey(deps, account.id, connectionId, keyId, body.grace_seconds as number | undefined)
    } catch (err) {
      return detail(request, reply, connectionId, { errors: { keys: fieldErrorsOf(err) } }, 400)
    }
    await auditOf(deps, request).record({
      action: 'api_key.rotate',
      target: { connection_id: connectionId, key_id: keyId, new_key_id: rotated.id },
      details: { previous_until: rotated.previous.revoked_at },
    })
    return redirectToReveal(deps, request, reply, {
      title: 'API key rotated',
      label: 'New API key',
      secret: rotated.key,
      note: `copy it now: it is not shown again. The old key works until ${exactUtc(rotated.previous.revoked_at ?? '')}.`,
      back: { path: connectionPath(connectionId), text: 'Back to the connection' },
    })
  })

  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys/:keyId/revoke`, { schema: { hide: true, params: KeyParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId, keyId } = request.params
    const grace = integerOf(request.body, 'grace_seconds') ?? 0
    const invalid = checkAgainst(RotateBody, { grace_seconds: grace })
    if (invalid) return detail(request, reply, connectionId, { errors: { keys: { '': `Grace: ${Object.values(invalid)[0]}` } } }, 400)
    const withEntry = auditOf(deps, request).change(() => ({
      action: 'api_key.revoke',
      target: { connection_id: connectionId, key_id: keyId },
      details: { grace_seconds: grace as number },
    }))
    await revokeApiKey(withEntry, account.id, connectionId, keyId, grace as number)
    return redirectTo(reply, connectionPath(connectionId), grace === 0 ? 'key-revoked' : 'key-revoke-scheduled')
  })

  // ---- webhook source token ----
  scope.post(`${CONNECTIONS_PATH}/:connectionId/token/rotate`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    const grace = integerOf(request.body, 'grace_seconds')
    const invalid = checkAgainst(RotateBody, grace === undefined ? {} : { grace_seconds: grace })
    if (invalid) return detail(request, reply, connectionId, { errors: { token: { '': `Grace: ${Object.values(invalid)[0]}` } } }, 400)
    let rotated
    try {
      rotated = await rotateSourceToken(deps, account.id, connectionId, grace as number | undefined)
    } catch (err) {
      return detail(request, reply, connectionId, { errors: { token: fieldErrorsOf(err) } }, 400)
    }
    await auditOf(deps, request).record({
      action: 'source_token.rotate',
      target: { connection_id: connectionId },
      details: { previous_until: rotated.previous_expires_at },
    })
    return redirectToReveal(deps, request, reply, {
      title: 'Source token rotated',
      label: 'New source token',
      secret: rotated.token,
      note: `copy it now: it is not shown again. The old token works until ${rotated.previous_expires_at ?? 'now'}.`,
      back: { path: connectionPath(connectionId), text: 'Back to the connection' },
    })
  })

  // ---- partner CRM locations and the cutover ----
  scope.post(`${CONNECTIONS_PATH}/:connectionId/locations`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    const locationId = fieldValue(request.body, 'location_id')
    let created
    try {
      const withEntry = auditOf(deps, request).change((l: LocationRecord) => ({
        action: 'location.add',
        target: { connection_id: connectionId, location_id: l.location_id },
      }))
      created = await addLocation(withEntry, account.id, connectionId, locationId)
    } catch (err) {
      return detail(request, reply, connectionId, { errors: { locations: fieldErrorsOf(err) } }, 400)
    }
    const url = `${created.webhook_url}?token=${encodeURIComponent(created.token)}`
    return redirectToReveal(deps, request, reply, {
      title: 'Location added',
      label: `Tokenized URL of location ${locationId}`,
      secret: url,
      note: 'give it to the partner CRM now: the token is not shown again.',
      back: { path: connectionPath(connectionId), text: 'Back to the connection' },
    })
  })

  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/locations/:locationId/rotate`,
    { schema: { hide: true, params: LocationParams, body: FormBody } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId, locationId } = request.params
      const grace = integerOf(request.body, 'grace_seconds')
      const invalid = checkAgainst(RotateBody, grace === undefined ? {} : { grace_seconds: grace })
      if (invalid) return detail(request, reply, connectionId, { errors: { locations: { '': `Grace: ${Object.values(invalid)[0]}` } } }, 400)
      const rotated = await rotateLocationToken(deps, account.id, connectionId, locationId, grace as number | undefined)
      await auditOf(deps, request).record({
        action: 'location.rotate_token',
        target: { connection_id: connectionId, location_id: locationId },
        details: { previous_until: rotated.previous_expires_at },
      })
      const url = `${rotated.webhook_url}?token=${encodeURIComponent(rotated.token)}`
      return redirectToReveal(deps, request, reply, {
        title: 'Location token rotated',
        label: `New tokenized URL of location ${locationId}`,
        secret: url,
        note: `the old token works until ${rotated.previous_expires_at ?? 'now'}; this one is not shown again.`,
        back: { path: connectionPath(connectionId), text: 'Back to the connection' },
      })
    },
  )

  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/locations/:locationId/remove`,
    { schema: { hide: true, params: LocationParams, body: Type.Optional(FormBody) } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId, locationId } = request.params
      const withEntry = auditOf(deps, request).change(() => ({ action: 'location.remove', target: { connection_id: connectionId, location_id: locationId } }))
      await removeLocation(withEntry, account.id, connectionId, locationId)
      return redirectTo(reply, connectionPath(connectionId), 'location-removed')
    },
  )

  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/require-token`,
    { schema: { hide: true, params: ConnectionParams, body: FormBody } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId } = request.params
      const value = fieldValue(request.body, 'require_token')
      if (value !== 'true' && value !== 'false')
        return detail(request, reply, connectionId, { errors: { locations: { '': 'require_token must be true or false' } } }, 400)
      try {
        const withEntry = auditOf(deps, request).change(() => ({
          action: 'connection.require_token',
          target: { connection_id: connectionId },
          details: { required: value === 'true' },
        }))
        await updateConnection(withEntry, account.id, connectionId, { require_token: value === 'true' })
      } catch (err) {
        return detail(request, reply, connectionId, { errors: { locations: fieldErrorsOf(err) } }, 400)
      }
      return redirectTo(reply, connectionPath(connectionId), value === 'true' ? 'require-token-on' : 'require-token-off')
    },
  )

  // ---- field mappings and their preview ----
  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/mappings`,
    { bodyLimit: MAPPING_FORM_BODY_LIMIT, schema: { hide: true, params: ConnectionParams, body: FormBody } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId } = request.params
      if (fieldValue(request.body, 'action') === 'preview') return preview(request, reply, connectionId, request.body)
      const rows = rowsOf(request.body)
      const sample = fieldValue(request.body, 'sample')
      const invalid = checkAgainst(UpdateConnectionBody, { field_mappings: rows })
      if (invalid) return detail(request, reply, connectionId, { rows, sample, errors: { mappings: invalid } }, 400)
      // another account's id is 404 here too, before any redirect names it
      await getConnection(deps, account.id, connectionId)
      // nothing is stored yet: the review shows what the change does to the last real push, and
      // only its own form applies it (issue 22: the first mapping used to end the six-field
      // fallback without a word)
      return redirectTo(reply, reviewPath(connectionId, rows))
    },
  )

  scope.get(
    `${CONNECTIONS_PATH}/:connectionId/mappings/review`,
    { schema: { hide: true, params: ConnectionParams, querystring: MappingRowsQuery } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId } = request.params
      const c = await getConnection(deps, account.id, connectionId)
      const rows = queryRows(request.query) ?? []
      const invalid = checkAgainst(UpdateConnectionBody, { field_mappings: rows })
      if (invalid) return detail(request, reply, connectionId, { rows, errors: { mappings: invalid } }, 400)
      const definitions = await deps.tenants.listCustomFields(account.id)
      const sample = await readPushSample(deps, c.id)
      return sendPage(reply, {
        status: 200,
        account,
        current: CONNECTIONS_PATH,
        flash: null,
        title: `Review mappings: ${c.name ?? `Connection ${c.id}`}`,
        body: reviewView(c, rows, definitions, sample),
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
      if (invalid) return detail(request, reply, connectionId, { rows, errors: { mappings: invalid } }, 400)
      try {
        const withEntry = auditOf(deps, request).change(() => ({
          action: 'connection.mappings',
          target: { connection_id: connectionId },
          details: { mappings: rows.map((m) => `${m.from} → ${m.to}`) },
        }))
        await updateConnection(withEntry, account.id, connectionId, { field_mappings: rows })
      } catch (err) {
        return detail(request, reply, connectionId, { rows, errors: { mappings: fieldErrorsOf(err) } }, 400)
      }
      return redirectTo(reply, connectionPath(connectionId), 'mappings-saved')
    },
  )

  /** Nothing is stored: the editor's rows and the sample, run through the worker's mapper. */
  const preview = async (request: FastifyRequest, reply: FastifyReply, connectionId: string, fields: FormFields) => {
    const { account } = sessionOf(request)
    const c = await getConnection(deps, account.id, connectionId)
    const rows = rowsOf(fields)
    const sample = fieldValue(fields, 'sample')
    let record: unknown
    try {
      record = JSON.parse(sample)
    } catch {
      return detail(request, reply, connectionId, { rows, sample, sampleError: 'not valid JSON' }, 400)
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      return detail(request, reply, connectionId, { rows, sample, sampleError: 'must be one JSON object (one record)' }, 400)
    }
    // the ingest routes' nesting cap (push-body.ts), checked without recursion: the mapper and
    // the page would otherwise recurse into a hostile depth and overflow the stack (a 500)
    if (!withinDepth(record as Record<string, unknown>)) {
      return detail(request, reply, connectionId, { rows, sample, sampleError: `nests deeper than ${MAX_VALUE_DEPTH} levels` }, 400)
    }
    const definitions = await deps.tenants.listCustomFields(account.id)
    return detail(request, reply, connectionId, { rows, sample, preview: previewMapping(c.type, rows, definitions, record as Record<string, unknown>) })
  }

  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/preview`,
    { bodyLimit: MAPPING_FORM_BODY_LIMIT, schema: { hide: true, params: ConnectionParams, body: FormBody } },
    async (request, reply) => preview(request, reply, request.params.connectionId, request.body),
  )
}

/** Inbound connections: sources, keys, tokens, locations, mappings, the inbound debugger. */
export const connectionsScreen: ScreenDeclaration = {
  path: CONNECTIONS_PATH,
  nav: 'Inbound connections',
  flashes: {
    'connection-created': 'Connection created.',
    'connection-updated': 'Connection updated.',
    'key-revoked': 'API key revoked.',
    'key-revoke-scheduled': 'API key will stop working at the end of its grace period.',
    'mappings-saved': 'Field mappings saved.',
    'location-added': 'Location added.',
    'location-removed': 'Location removed.',
    'require-token-on': 'Token now required: pushes without a location token are refused.',
    'require-token-off': 'Token no longer required.',
  },
  register: registerConnectionsScreen,
}
