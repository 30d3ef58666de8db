import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { connectionPages } from './pages.ts'
import { registerConnectionRoutes } from './connection-routes.ts'
import { registerKeyRoutes } from './key-routes.ts'
import { registerLocationRoutes, registerSourceTokenRoutes } from './token-routes.ts'
import { registerMappingRoutes } from './mapping-routes.ts'
import { registerRecentPushes } from './recent-pushes.ts'
import { CONNECTIONS_PATH } from './paths.ts'

/**
 * Screen 1, Inbound connections (docs/portal.md): the same domain functions as the management
 * API's routes (routes/admin/connections.ts, keys.ts, locations.ts), scoped to the session's
 * account; every change is audited. Every form answers with a redirect (303): a new secret is
 * shown once, on the reveal page the redirect leads to (reveal.ts), never in a URL. One file per
 * concern: the connections, keys, tokens and locations, mappings, and the inbound debugger.
 */
function registerConnectionsScreen(scope: App, deps: PlatformDeps): void {
  const pages = connectionPages(deps)
  registerRecentPushes(scope, deps)
  registerConnectionRoutes(scope, deps, pages)
  registerKeyRoutes(scope, deps, pages)
  registerSourceTokenRoutes(scope, deps, pages)
  registerLocationRoutes(scope, deps, pages)
  registerMappingRoutes(scope, deps, pages)
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
    'key-already-revoked': 'That API key was already revoked: nothing was changed.',
    'key-revoke-already-scheduled': 'That API key already stops working at the end of its grace period, no later: nothing was changed.',
    'mappings-saved': 'Field mappings saved.',
    'location-added': 'Location added.',
    'location-removed': 'Location removed.',
    'require-token-on': 'Token now required: pushes without a location token are refused.',
    'require-token-off': 'Token no longer required.',
  },
  register: registerConnectionsScreen,
}
