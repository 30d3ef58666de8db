import pino from 'pino'
import { loadConfig } from '@lsv/shared/config/config.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { systemClock } from '@lsv/shared/model/clock.ts'

/** An adapter whose every method throws, and which records that it was touched. */
function throwingAdapter(name: string, touched: string[]): never {
  return new Proxy(
    {},
    {
      get(_t, property) {
        if (typeof property === 'symbol' || property === 'then') return undefined
        return () => {
          touched.push(`${name}.${property}`)
          throw new Error(`${name}.${property} must not be called`)
        }
      },
    },
  ) as never
}

/**
 * PlatformDeps on which every store, queue, scheduler and secret method throws (config, logger
 * and clock are real, and the outcome listeners an empty list). `touched` lists the methods called. Any other member (every adapter, and
 * one added to PlatformDeps later) is a throwing adapter named after it.
 */
export function throwingDeps(): PlatformDeps & { touched: string[] } {
  const touched: string[] = []
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '/nonexistent-lsv-test', OPERATOR_TOKEN: 'op', KEY_PEPPER: 'pepper' })
  const real: Record<string, unknown> = {
    touched,
    config,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    // no one reacts to outcomes here (a listener would write to the throwing stores); an app's
    // close still flushes them
    listeners: { delivery: [], push: [], queueFallback: [], endpointHealth: [], batch: [], contactWritten: [], async flush() {} },
    async close() {},
  }
  const adapters = new Map<string, unknown>()
  return new Proxy(real, {
    get(target, property) {
      if (typeof property === 'symbol' || property === 'then') return undefined
      if (Object.hasOwn(target, property)) return target[property]
      if (!adapters.has(property)) adapters.set(property, throwingAdapter(property, touched))
      return adapters.get(property)
    },
  }) as unknown as PlatformDeps & { touched: string[] }
}
