import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig, port, type PlatformConfig } from '../config/config.ts'
import { createLogger } from '../logging/logger.ts'
import { createPlatformDeps, type PlatformDeps } from './deps.ts'
import type { App } from '../http/base-app.ts'

export interface Background {
  close(): Promise<void>
}

export interface ServiceDefinition {
  name: string
  /** port when PORT is not set (local defaults: edge 8080, portal 8081, worker 8082, dispatcher 8083) */
  defaultPort: number
  build(deps: PlatformDeps): Promise<App>
  /** pull consumers and schedulers this service runs in the background (embedded adapters) */
  background?(deps: PlatformDeps): Promise<Background[]>
}

/** Cloud Run gives 10 s between SIGTERM and SIGKILL; drain within 9. */
export const SHUTDOWN_GRACE_MS = 9000

/**
 * Runs one service: validates configuration (a bad variable stops the process naming it),
 * builds adapters and the app, listens on PORT on 0.0.0.0, and drains on SIGTERM/SIGINT:
 * stop accepting, finish in-flight requests, stop consumers, close adapters.
 */
export async function serve(def: ServiceDefinition): Promise<void> {
  let config: PlatformConfig
  let listenPort: number
  try {
    config = loadConfig()
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
  const background = def.background ? await def.background(deps) : []
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'draining')
    await app.close()
    for (const b of background) await b.close()
    await deps.close()
  })
  await app.listen({ port: listenPort, host: '0.0.0.0' })
}
