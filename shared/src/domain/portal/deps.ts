import type { PlatformDeps } from '../../ports/deps.ts'

/** What portal access uses: its store, the tenant store (accounts), the clock and the portal origin. */
export type PortalDeps = Pick<PlatformDeps, 'portalAccess' | 'tenants' | 'clock' | 'config'>
