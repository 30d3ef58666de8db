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
import { previewMapping } from '@lsv/shared/domain/ingest/mapping.ts'
import { recordAudit } from '@lsv/shared/domain/audit/record.ts'
import type { FieldMapping } from '@lsv/shared/model/records.ts'
import type { SafeHtml } from '../../routes/portal/html.ts'
import { checkAgainst, checkForm, fieldErrorsOf, listOf, fieldValue, type FieldErrors, type FormFields } from '../forms.ts'
import { redirectTo, sendScreen } from '../layout.ts'
import { actorOf, sessionOf } from '../session.ts'
import { flashText } from '../flash.ts'
import { FormBody, secretOnce } from '../ui.ts'
import { CONNECTIONS_PATH, connectionPath, detailView, listView, type DetailState } from './views.ts'

const ConnectionParams = Type.Object({ connectionId: Type.String() })
const KeyParams = Type.Object({ connectionId: Type.String(), keyId: Type.String() })
const LocationParams = Type.Object({ connectionId: Type.String(), locationId: Type.String() })
const FlashQuery = Type.Object({ flash: Type.Optional(Type.String()) })

/** A form's integer field: the number, or the text itself (so the schema's message names it). */
function integerOf(fields: FormFields, name: string): number | string | undefined {
  const v = fieldValue(fields, name).trim()
  if (v === '') return undefined
  return /^\d+$/.test(v) ? Number(v) : v
}

/** The mapping editor's rows (blank rows skipped). */
function rowsOf(fields: FormFields): FieldMapping[] {
  const from = listOf(fields, 'from')
  const to = listOf(fields, 'to')
  const rows: FieldMapping[] = []
  for (let i = 0; i < Math.max(from.length, to.length); i++) {
    const f = (from[i] ?? '').trim()
    const t = to[i] ?? ''
    if (f === '' && t === '') continue
    rows.push({ from: f, to: t })
  }
  return rows
}

/**
 * Screen 1, Inbound connections (docs/portal.md): the same domain functions as the management
 * API's routes (routes/admin/connections.ts, keys.ts, locations.ts), scoped to the session's
 * account; every change is audited. New secrets are shown once on the answer itself (never in a
 * redirect, so never in a URL or history entry).
 */
export function registerConnectionsScreen(scope: App, deps: PlatformDeps): void {
  const ctxOf = async (accountId: string) => ({
    keys: await deps.tenants.listApiKeys(accountId),
    locations: await deps.tenants.listLocations(accountId),
    definitions: await deps.tenants.listCustomFields(accountId),
  })

  /** Renders the connection's page (after a POST: with a secret or errors). */
  const detail = async (request: FastifyRequest, reply: FastifyReply, connectionId: string, state: DetailState, status = 200, flash: string | null = null) => {
    const { account } = sessionOf(request)
    const c = await getConnection(deps, account.id, connectionId)
    const ctx = await ctxOf(account.id)
    return sendScreen(
      reply,
      status,
      { account, current: CONNECTIONS_PATH, flash },
      c.name ?? `Connection ${c.id}`,
      detailView(
        c,
        {
          keys: ctx.keys.filter((k) => k.connection_id === c.id),
          locations: ctx.locations.filter((l) => l.connection_id === c.id),
          definitions: ctx.definitions,
          partnerCrmUrl: partnerCrmWebhookUrl(deps.config, account),
        },
        state,
      ),
    )
  }

  const audit = (
    request: FastifyRequest,
    action: string,
    target: Record<string, string>,
    details: Record<string, string | number | boolean | null | string[]> = {},
  ) => {
    const s = sessionOf(request)
    return recordAudit(deps, { account_id: s.account.id, actor: actorOf(s), action, target, details })
  }

  const list = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    errors: FieldErrors | null,
    created: SafeHtml | null,
    values: Record<string, string> = {},
    flash: string | null = null,
  ) => {
    const { account } = sessionOf(request)
    const { data } = await listConnections(deps, account.id)
    return sendScreen(reply, status, { account, current: CONNECTIONS_PATH, flash }, 'Inbound connections', listView(data, errors, created, values))
  }

  scope.get(CONNECTIONS_PATH, { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) =>
    list(request, reply, 200, null, null, {}, flashText(request.query.flash)),
  )

  scope.post(CONNECTIONS_PATH, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const values = { type: fieldValue(request.body, 'type'), name: fieldValue(request.body, 'name').trim(), source: fieldValue(request.body, 'source').trim() }
    const body = { type: values.type, ...(values.name ? { name: values.name } : {}), ...(values.source ? { source: values.source } : {}) }
    const checked = checkForm(CreateConnectionBody, body)
    if (!checked.ok) return list(request, reply, 400, checked.errors, null, values)
    let created
    try {
      created = await createConnection(deps, account.id, checked.value)
    } catch (err) {
      return list(request, reply, 400, fieldErrorsOf(err), null, values)
    }
    await audit(request, 'connection.create', { connection_id: created.id }, { type: created.type, source: created.source })
    if (created.token) {
      // a webhook source's token: shown once, here
      return detail(
        request,
        reply,
        created.id,
        { secret: secretOnce('Source token', created.token, 'copy it now: it is not shown again.') },
        201,
        'Connection created.',
      )
    }
    return redirectTo(reply, connectionPath(created.id), 'connection-created')
  })

  scope.get(`${CONNECTIONS_PATH}/:connectionId`, { schema: { hide: true, params: ConnectionParams, querystring: FlashQuery } }, async (request, reply) =>
    detail(request, reply, request.params.connectionId, {}, 200, flashText(request.query.flash)),
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
      created = await issueApiKey(deps, account.id, connectionId, checked.value)
    } catch (err) {
      return detail(request, reply, connectionId, { errors: { keys: fieldErrorsOf(err) } }, 400)
    }
    await audit(request, 'api_key.create', { connection_id: connectionId, key_id: created.id }, { scopes: created.scopes, prefix: created.prefix })
    return detail(request, reply, connectionId, { secret: secretOnce('New API key', created.key, 'copy it now: it is not shown again.') }, 201)
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
    await audit(
      request,
      'api_key.rotate',
      { connection_id: connectionId, key_id: keyId, new_key_id: rotated.id },
      { previous_until: rotated.previous.revoked_at },
    )
    return detail(
      request,
      reply,
      connectionId,
      { secret: secretOnce('New API key', rotated.key, `copy it now: it is not shown again. The old key works until ${rotated.previous.revoked_at}.`) },
      201,
    )
  })

  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys/:keyId/revoke`, { schema: { hide: true, params: KeyParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId, keyId } = request.params
    const grace = integerOf(request.body, 'grace_seconds') ?? 0
    const invalid = checkAgainst(RotateBody, { grace_seconds: grace })
    if (invalid) return detail(request, reply, connectionId, { errors: { keys: { '': `Grace: ${Object.values(invalid)[0]}` } } }, 400)
    await revokeApiKey(deps, account.id, connectionId, keyId, grace as number)
    await audit(request, 'api_key.revoke', { connection_id: connectionId, key_id: keyId }, { grace_seconds: grace as number })
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
    await audit(request, 'source_token.rotate', { connection_id: connectionId }, { previous_until: rotated.previous_expires_at })
    return detail(
      request,
      reply,
      connectionId,
      {
        secret: secretOnce(
          'New source token',
          rotated.token,
          `copy it now: it is not shown again. The old token works until ${rotated.previous_expires_at ?? 'now'}.`,
        ),
      },
      201,
    )
  })

  // ---- partner CRM locations and the cutover ----
  scope.post(`${CONNECTIONS_PATH}/:connectionId/locations`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    const locationId = fieldValue(request.body, 'location_id')
    let created
    try {
      created = await addLocation(deps, account.id, connectionId, locationId)
    } catch (err) {
      return detail(request, reply, connectionId, { errors: { locations: fieldErrorsOf(err) } }, 400)
    }
    await audit(request, 'location.add', { connection_id: connectionId, location_id: locationId })
    const url = `${created.webhook_url}?token=${encodeURIComponent(created.token)}`
    return detail(
      request,
      reply,
      connectionId,
      { secret: secretOnce(`Tokenized URL of location ${locationId}`, url, 'give it to the partner CRM now: the token is not shown again.') },
      201,
    )
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
      await audit(request, 'location.rotate_token', { connection_id: connectionId, location_id: locationId }, { previous_until: rotated.previous_expires_at })
      const url = `${rotated.webhook_url}?token=${encodeURIComponent(rotated.token)}`
      return detail(
        request,
        reply,
        connectionId,
        {
          secret: secretOnce(
            `New tokenized URL of location ${locationId}`,
            url,
            `the old token works until ${rotated.previous_expires_at ?? 'now'}; this one is not shown again.`,
          ),
        },
        201,
      )
    },
  )

  scope.post(
    `${CONNECTIONS_PATH}/:connectionId/locations/:locationId/remove`,
    { schema: { hide: true, params: LocationParams, body: Type.Optional(FormBody) } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId, locationId } = request.params
      await removeLocation(deps, account.id, connectionId, locationId)
      await audit(request, 'location.remove', { connection_id: connectionId, location_id: locationId })
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
        await updateConnection(deps, account.id, connectionId, { require_token: value === 'true' })
      } catch (err) {
        return detail(request, reply, connectionId, { errors: { locations: fieldErrorsOf(err) } }, 400)
      }
      await audit(request, 'connection.require_token', { connection_id: connectionId }, { required: value === 'true' })
      return redirectTo(reply, connectionPath(connectionId), value === 'true' ? 'require-token-on' : 'require-token-off')
    },
  )

  // ---- field mappings and their preview ----
  scope.post(`${CONNECTIONS_PATH}/:connectionId/mappings`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    if (fieldValue(request.body, 'action') === 'preview') return preview(request, reply, connectionId, request.body)
    const rows = rowsOf(request.body)
    const sample = fieldValue(request.body, 'sample')
    const invalid = checkAgainst(UpdateConnectionBody, { field_mappings: rows })
    if (invalid) return detail(request, reply, connectionId, { rows, sample, errors: { mappings: invalid } }, 400)
    try {
      await updateConnection(deps, account.id, connectionId, { field_mappings: rows })
    } catch (err) {
      return detail(request, reply, connectionId, { rows, sample, errors: { mappings: fieldErrorsOf(err) } }, 400)
    }
    await audit(request, 'connection.mappings', { connection_id: connectionId }, { mappings: rows.map((m) => `${m.from} → ${m.to}`) })
    return redirectTo(reply, connectionPath(connectionId), 'mappings-saved')
  })

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
    const definitions = await deps.tenants.listCustomFields(account.id)
    return detail(request, reply, connectionId, { rows, sample, preview: previewMapping(c.type, rows, definitions, record as Record<string, unknown>) })
  }

  scope.post(`${CONNECTIONS_PATH}/:connectionId/preview`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) =>
    preview(request, reply, request.params.connectionId, request.body),
  )
}
