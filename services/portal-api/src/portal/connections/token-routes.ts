import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { updateConnection } from '@lsv/shared/domain/tenants/connections.ts'
import { rotateSourceToken } from '@lsv/shared/domain/tenants/rotate-source-token.ts'
import { addLocation, removeLocation, rotateLocationToken } from '@lsv/shared/domain/tenants/locations.ts'
import type { LocationRecord } from '@lsv/shared/model/records.ts'
import { fieldErrorsOf, fieldValue } from '../kit/forms.ts'
import { redirectTo } from '../kit/page.ts'
import { FormBody } from '../kit/ui.ts'
import { auditOf } from '../kit/audited.ts'
import { sessionOf } from '../session.ts'
import { redirectToReveal } from '../reveal.ts'
import { ConnectionParams, graceOf, LocationParams } from './form-values.ts'
import type { ConnectionPages } from './pages.ts'
import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

/** A webhook source's token rotation (the new token shown once; the old one works for the grace). */
export function registerSourceTokenRoutes(scope: App, deps: PlatformDeps, pages: ConnectionPages): void {
  scope.post(`${CONNECTIONS_PATH}/:connectionId/token/rotate`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    const grace = graceOf(request.body)
    if (!grace.ok) return pages.detail(request, reply, { connectionId, state: { errors: { token: grace.errors } }, status: 400 })
    let rotated
    try {
      rotated = await rotateSourceToken(deps, account.id, connectionId, grace.seconds)
    } catch (err) {
      return pages.detail(request, reply, { connectionId, state: { errors: { token: fieldErrorsOf(err) } }, status: 400 })
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
}

/** A partner CRM connection's locations (added and rotated: the tokenized URL shown once; removed) and its require-token cutover. */
export function registerLocationRoutes(scope: App, deps: PlatformDeps, pages: ConnectionPages): void {
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
      return pages.detail(request, reply, { connectionId, state: { errors: { locations: fieldErrorsOf(err) } }, status: 400 })
    }
    return redirectToReveal(deps, request, reply, {
      title: 'Location added',
      label: `Tokenized URL of location ${locationId}`,
      secret: `${created.webhook_url}?token=${encodeURIComponent(created.token)}`,
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
      const grace = graceOf(request.body)
      if (!grace.ok) return pages.detail(request, reply, { connectionId, state: { errors: { locations: grace.errors } }, status: 400 })
      const rotated = await rotateLocationToken(deps, account.id, connectionId, locationId, grace.seconds)
      await auditOf(deps, request).record({
        action: 'location.rotate_token',
        target: { connection_id: connectionId, location_id: locationId },
        details: { previous_until: rotated.previous_expires_at },
      })
      return redirectToReveal(deps, request, reply, {
        title: 'Location token rotated',
        label: `New tokenized URL of location ${locationId}`,
        secret: `${rotated.webhook_url}?token=${encodeURIComponent(rotated.token)}`,
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
      if (value !== 'true' && value !== 'false') {
        return pages.detail(request, reply, { connectionId, state: { errors: { locations: { '': 'require_token must be true or false' } } }, status: 400 })
      }
      try {
        const withEntry = auditOf(deps, request).change(() => ({
          action: 'connection.require_token',
          target: { connection_id: connectionId },
          details: { required: value === 'true' },
        }))
        await updateConnection(withEntry, account.id, connectionId, { require_token: value === 'true' })
      } catch (err) {
        return pages.detail(request, reply, { connectionId, state: { errors: { locations: fieldErrorsOf(err) } }, status: 400 })
      }
      return redirectTo(reply, connectionPath(connectionId), value === 'true' ? 'require-token-on' : 'require-token-off')
    },
  )
}
