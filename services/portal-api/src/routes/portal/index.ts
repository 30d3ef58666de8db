import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { registerPortalAccessPages } from './access.ts'
import { registerPortalScreens } from '../../portal/index.ts'

/** The portal's pages, served by portal-api on the portal origin (docs/portal.md). */
export function registerPortalPages(app: App, deps: PlatformDeps): void {
  registerPortalAccessPages(app, deps)
  // the screens (src/portal): their own scope, session required
  registerPortalScreens(app, deps)
}
