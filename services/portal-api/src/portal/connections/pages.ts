import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { getConnection, listConnections } from '@lsv/shared/domain/tenants/connections.ts'
import { partnerCrmWebhookUrl } from '@lsv/shared/domain/tenants/views.ts'
import { edgeBaseUrlFor } from '@lsv/shared/config/config.ts'
import { readPushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import type { FieldErrors } from '../kit/forms.ts'
import { sendPage } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { detailView, listView, type DetailState } from './views.ts'
import { CONNECTIONS_PATH } from './paths.ts'

/** What the connection's page is answered with (after a POST: its errors, the rows typed). */
interface DetailAnswer {
  connectionId: string
  state?: DetailState
  /** 200 unless a form was refused */
  status?: number
}

/** What the list page is answered with (after a refused new-connection form: its errors and values). */
interface ListAnswer {
  status?: number
  errors?: FieldErrors | null
  values?: Record<string, string>
}

/** The two pages the screen's routes answer with, read for the session's account. */
export interface ConnectionPages {
  detail(request: FastifyRequest, reply: FastifyReply, answer: DetailAnswer): Promise<FastifyReply>
  list(request: FastifyRequest, reply: FastifyReply, answer?: ListAnswer): Promise<FastifyReply>
}

export function connectionPages(deps: PlatformDeps): ConnectionPages {
  return {
    async detail(request, reply, { connectionId, state = {}, status = 200 }) {
      const { account } = sessionOf(request)
      const c = await getConnection(deps, account.id, connectionId)
      const [keys, locations, definitions, sample] = await Promise.all([
        deps.tenants.listApiKeys(account.id),
        deps.tenants.listLocations(account.id),
        deps.tenants.listCustomFields(account.id),
        readPushSample(deps, c.id),
      ])
      return sendPage(reply, {
        status,
        account,
        current: CONNECTIONS_PATH,
        title: c.name ?? `Connection ${c.id}`,
        body: detailView({
          connection: c,
          keys: keys.filter((k) => k.connection_id === c.id),
          locations: locations.filter((l) => l.connection_id === c.id),
          definitions,
          partnerCrmUrl: partnerCrmWebhookUrl(deps.config, account),
          edgeBaseUrl: edgeBaseUrlFor(deps.config, account.public_id),
          sample,
          state,
        }),
      })
    },

    async list(request, reply, { status = 200, errors = null, values = {} } = {}) {
      const { account } = sessionOf(request)
      const { data } = await listConnections(deps, account.id)
      return sendPage(reply, {
        status,
        account,
        current: CONNECTIONS_PATH,
        title: 'Inbound connections',
        body: listView({ connections: data, errors, values }),
      })
    },
  }
}
