import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'

/** the management API (management-api.md; issue 2) */
export function registerAdminRoutes(_app: App, _deps: PlatformDeps): void {
  // placeholder until its issue lands
}
