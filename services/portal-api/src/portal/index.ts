import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { html } from '../routes/portal/html.ts'
import { registerPortalAssets } from './assets.ts'
import { registerFormParser } from './forms.ts'
import { requirePortalSession } from './session.ts'
import { loadEndpointBanner } from './endpoint-banner.ts'
import { notFound, sendFrameError } from './errors.ts'
import { registerConnectionsScreen } from './connections/index.ts'
import { registerSettingsScreen } from './settings/index.ts'
import { registerAuditScreen } from './audit/index.ts'
import { registerWebhookScreens } from './screens-webhooks/index.ts'
import { registerContactScreens } from './screens-contacts/index.ts'
import { registerActivityScreens } from './screens-activity/index.ts'
import { registerPortalNotFound } from './not-found.ts'
import { registerRevealScreen } from './reveal.ts'
import { registerLogoImage } from './settings/logo-image.ts'

/** A screen: registers its routes in the screens' scope (session required, forms parsed). */
type Screen = (scope: App, deps: PlatformDeps) => void

/** Every screen, in one list (the navigation is layout.ts's NAV). */
const SCREENS: readonly Screen[] = [
  registerConnectionsScreen,
  registerSettingsScreen,
  registerAuditScreen,
  registerWebhookScreens,
  registerContactScreens,
  registerActivityScreens,
  registerRevealScreen,
]

/**
 * The portal's screens (docs/portal.md), in their own scope: HTML form bodies are parsed here
 * only, every route requires a live session of the account it shows (session.ts), and errors
 * answer as pages, not as the JSON envelope. Hidden from the OpenAPI description (each route
 * says `hide: true`).
 */
export function registerPortalScreens(app: App, deps: PlatformDeps): void {
  registerPortalAssets(app)
  // the account's logo: behind the session, but outside the screens' scope (settings/logo-image.ts)
  registerLogoImage(app, deps)
  // an unknown /portal/* path: a 404 page, not the API's JSON (not-found.ts)
  registerPortalNotFound(app, deps)
  app.register(async (scope: App) => {
    // the session (and, for a post, the same-origin signal) is checked before a byte of the body
    // is read; only then is a form parsed, within its route's small limit (forms.ts)
    scope.addHook('onRequest', requirePortalSession(deps))
    registerFormParser(scope)
    // a disabled or failing webhook is named on every screen of the account
    scope.addHook('preHandler', loadEndpointBanner(deps))
    scope.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (isAppError(error) && error.status === 404) return notFound(request, reply)
      if (error.validation || (isAppError(error) && error.status === 400)) {
        // the message names at most MAX_ISSUES problems (http/validation.ts), so the page stays small
        return sendFrameError(
          request,
          reply,
          400,
          'Not understood',
          html`<p>The form was not complete or not valid: ${error.message}. Nothing was changed.</p>`,
        )
      }
      if (error.statusCode === 415) {
        return sendFrameError(request, reply, 415, 'Not a form', html`<p>Only the portal's own forms can be sent here. Nothing was changed.</p>`)
      }
      if (error.statusCode === 413) return sendFrameError(request, reply, 413, 'Too large', html`<p>What was sent is too large. Nothing was changed.</p>`)
      request.log.error({ err: error }, 'portal screen failed')
      return sendFrameError(
        request,
        reply,
        500,
        'Something went wrong',
        html`<p>The portal could not complete this. Try again; if it persists, tell your operator.</p>`,
      )
    })
    for (const register of SCREENS) register(scope, deps)
  })
}
