import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { html } from './kit/html.ts'
import { registerPortalAssets } from './assets.ts'
import { registerFormParser } from './kit/forms.ts'
import { requirePortalSession } from './session.ts'
import { loadEndpointBanner } from './endpoint-banner.ts'
import { notFound, sendFrameError } from './errors.ts'
import { connectionsScreen } from './connections/index.ts'
import { settingsScreen } from './settings/index.ts'
import { auditScreen } from './audit/index.ts'
import { webhooksScreen } from './screens-webhooks/index.ts'
import { contactsScreen } from './screens-contacts/index.ts'
import { activityScreen } from './screens-activity/index.ts'
import { overviewScreen } from './overview/index.ts'
import { registerPortalNotFound } from './not-found.ts'
import { revealScreen } from './reveal.ts'
import { registerLogoImage } from './settings/logo-image.ts'
import { catalogueOf, type ScreenDeclaration } from './kit/screens.ts'

/**
 * Every screen, declared once, in the order of the navigation: the routes, the navigation and the
 * flash codes are derived from this list (kit/screens.ts). A new screen is one line here.
 */
const SCREENS: readonly ScreenDeclaration[] = [
  overviewScreen,
  connectionsScreen,
  webhooksScreen,
  contactsScreen,
  settingsScreen,
  activityScreen,
  auditScreen,
  revealScreen,
]

/**
 * The portal's screens (docs/portal.md), in their own scope: HTML form bodies are parsed here
 * only, every route requires a live session of the account it shows (session.ts), and errors
 * answer as pages, not as the JSON envelope. Hidden from the OpenAPI description (each route
 * says `hide: true`).
 */
export function registerPortalScreens(app: App, deps: PlatformDeps): void {
  // the page function (kit/page.ts) reads the navigation and the flash texts from here
  app.decorate('portalScreens', catalogueOf(SCREENS))
  app.decorate('portalNow', () => deps.clock.now())
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
      // a path parameter that is not valid (a contact id that is not a UUID) names no page: the
      // 404 page, as for an id no contact has, not the form's "not understood"
      if (error.validation && error.validationContext === 'params') return notFound(request, reply)
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
    for (const screen of SCREENS) screen.register?.(scope, deps)
  })
}
