import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'

/**
 * PlatformDeps for describing routes without running them. Route modules only capture `deps`
 * in closures, so registering them never touches it; any use throws, naming the member, so a
 * registration-time dependency shows up at `npm run generate` instead of producing a document
 * that depends on a deployment.
 */
export function createStandInDeps(): PlatformDeps {
  return new Proxy({} as PlatformDeps, {
    get(_target, property) {
      // Probes by the runtime (await, util.inspect, String()) are not uses.
      if (typeof property === 'symbol' || property === 'then') return undefined
      throw new Error(`OpenAPI generation: route registration used deps.${property}; routes must only use deps inside handlers`)
    },
    has() {
      throw new Error('OpenAPI generation: route registration inspected deps; routes must only use deps inside handlers')
    },
    set(_target, property) {
      throw new Error(`OpenAPI generation: route registration assigned deps.${String(property)}`)
    },
  })
}
