import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'

type SecretDeps = Pick<PlatformDeps, 'config' | 'secrets'>

const cache = new WeakMap<object, Map<string, Promise<string>>>()

function cached(deps: SecretDeps, name: string, load: () => Promise<string>): Promise<string> {
  let perDeps = cache.get(deps.secrets)
  if (!perDeps) {
    perDeps = new Map()
    cache.set(deps.secrets, perDeps)
  }
  let value = perDeps.get(name)
  if (!value) {
    value = load()
    // a failed load is retried on the next call instead of being cached forever
    value.catch(() => perDeps!.get(name) === value && perDeps!.delete(name))
    perDeps.set(name, value)
  }
  return value
}

/**
 * Reads a platform secret: the environment wins (local, tests), then the secret store. On the
 * embedded store a missing secret is created once (random), so a fresh local stack just works;
 * in Google Cloud a missing secret is a deployment error.
 */
async function platformSecret(deps: SecretDeps, name: 'operator-token' | 'key-pepper', fromEnv: string | null): Promise<string> {
  if (fromEnv) return fromEnv
  return cached(deps, name, async () => {
    const stored = await deps.secrets.get(name)
    if (stored) return stored
    if (deps.config.secretsBackend !== 'embedded') {
      throw new Error(`secret ${name} is missing from the ${deps.config.secretsBackend} secret store`)
    }
    await deps.secrets.addVersion(name, randomBytes(32).toString('base64url'))
    const created = await deps.secrets.get(name)
    if (!created) throw new Error(`secret ${name} could not be created`)
    return created
  })
}

/** The pepper of every key and token hash. Changing it invalidates every issued key. */
export function getKeyPepper(deps: SecretDeps): Promise<string> {
  return platformSecret(deps, 'key-pepper', deps.config.keyPepper)
}

/** The management API's bearer token. */
export function getOperatorToken(deps: SecretDeps): Promise<string> {
  return platformSecret(deps, 'operator-token', deps.config.operatorToken)
}
