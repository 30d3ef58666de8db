import pino from 'pino'
import { loadConfig } from '@lsv/shared/config/config.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { systemClock } from '@lsv/shared/clock.ts'

/** An adapter whose every method throws, and which records that it was touched. */
function throwingAdapter(name: string, touched: string[]): never {
  return new Proxy({}, {
    get(_t, property) {
      if (typeof property === 'symbol' || property === 'then') return undefined
      return () => {
        touched.push(`${name}.${property}`)
        throw new Error(`${name}.${property} must not be called`)
      }
    },
  }) as never
}

/**
 * PlatformDeps on which every store, queue, scheduler and secret method throws (config, logger
 * and clock are real). `touched` lists the methods called.
 */
export function throwingDeps(): PlatformDeps & { touched: string[] } {
  const touched: string[] = []
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '/nonexistent-lsv-test', OPERATOR_TOKEN: 'op', KEY_PEPPER: 'pepper' })
  return {
    touched,
    config,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    contacts: throwingAdapter('contacts', touched),
    tenants: throwingAdapter('tenants', touched),
    rateLimiter: throwingAdapter('rateLimiter', touched),
    queue: throwingAdapter('queue', touched),
    tasks: throwingAdapter('tasks', touched),
    secrets: throwingAdapter('secrets', touched),
    async close() {},
  }
}
