import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig, port, type PlatformConfig } from '../config/config.ts'
import { createLogger } from '../logging/logger.ts'
import type { ServiceName } from '../config/services.ts'
import { createPlatformDeps, type PlatformDeps } from './deps.ts'
import { backgroundFor, isIdle, type BackgroundPlan } from './background.ts'
import type { App } from '../http/base-app.ts'

export interface Background {
  close(): Promise<void>
}

export interface ServiceDefinition {
  name: ServiceName
  /** port when PORT is not set (local defaults: edge 8080, portal 8081, worker 8082, dispatcher 8083) */
  defaultPort: number
  build(deps: PlatformDeps): Promise<App>
  /** starts what backgroundFor() planned for this service; called only when the plan is not idle */
  background?(deps: PlatformDeps, plan: BackgroundPlan): Promise<Background[]>
}

/** Cloud Run gives 10 s between SIGTERM and SIGKILL; drain within 9. */
export const SHUTDOWN_GRACE_MS = 9000

/**
 * Runs one service: validates its configuration (a bad or missing variable stops the process
 * with exit 78 naming it),
 * builds adapters and the app, listens on PORT on 0.0.0.0, and drains on SIGTERM/SIGINT:
 * stop accepting, finish in-flight requests, stop consumers, close adapters.
 */
export async function serve(def: ServiceDefinition): Promise<void> {
  let config: PlatformConfig
  let listenPort: number
  try {
    config = loadConfig(process.env, def.name)
    listenPort = port(process.env, 'PORT', def.defaultPort)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${def.name}: ${err.message}`)
      process.exit(78) // EX_CONFIG
    }
    throw err
  }
  const logger = createLogger(config.logLevel, def.name)
  const deps = await createPlatformDeps(config, logger)
  const app = await def.build(deps)
  const plan = backgroundFor(def.name, config)
  if (!isIdle(plan) && !def.background) throw new Error(`${def.name}: background ${JSON.stringify(plan)} planned but the service starts none`)
  const background = def.background && !isIdle(plan) ? await def.background(deps, plan) : []
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'draining')
    await app.close()
    for (const b of background) await b.close()
    await deps.close()
  })
  await app.listen({ port: listenPort, host: '0.0.0.0' })
}
