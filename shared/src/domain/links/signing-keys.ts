import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { Secrets } from '../../ports/secrets.ts'

/** Secret (in the secrets port) holding the link signing key set. */
export const LINK_SIGNING_KEYS_SECRET = 'link-signing-keys'

/**
 * The stored key set: `{"current": "<kid>", "keys": {"<kid>": "<base64 of 32 bytes>"}}`.
 * `current` signs new tokens; every key listed verifies. Retiring a key = writing a version
 * without it (tokens it signed then resolve to null).
 */
export interface LinkSigningKeySet {
  current: string
  keys: Record<string, string>
}

/** The decoded form used to sign and verify. */
export interface LoadedKeySet {
  current: string
  keys: Map<string, Buffer>
}

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/

/** How long a process trusts its cached copy before reading the secret again. */
const CACHE_TTL_MS = 60_000
/** An unknown key id re-reads the secret (a rotation elsewhere), at most this often. */
const MISS_RELOAD_INTERVAL_MS = 10_000

interface CacheEntry {
  set: LoadedKeySet | null
  loadedAtMs: number
}

// Keyed by the secrets adapter, so separate deps (tests, services) never share keys.
const cache = new WeakMap<Secrets, CacheEntry>()
const inflightCreation = new WeakMap<Secrets, Promise<LoadedKeySet>>()

export class SigningKeysUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SigningKeysUnavailableError'
  }
}

function newKeyId(): string {
  return randomBytes(6).toString('base64url')
}

function newKeyMaterial(): string {
  return randomBytes(32).toString('base64')
}

/** Parses a stored key set; throws SigningKeysUnavailableError when it is not usable. */
export function parseKeySet(raw: string): LoadedKeySet {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (cause) {
    throw new SigningKeysUnavailableError('link signing key set is not JSON', { cause })
  }
  const value = parsed as Partial<LinkSigningKeySet> | null
  if (!value || typeof value !== 'object' || typeof value.current !== 'string' || !value.keys || typeof value.keys !== 'object') {
    throw new SigningKeysUnavailableError('link signing key set has the wrong shape')
  }
  const keys = new Map<string, Buffer>()
  for (const [kid, material] of Object.entries(value.keys)) {
    if (!KEY_ID_PATTERN.test(kid) || typeof material !== 'string') continue
    const bytes = Buffer.from(material, 'base64')
    if (bytes.length < 32) continue // too weak to verify anything with
    keys.set(kid, bytes)
  }
  if (!keys.has(value.current)) throw new SigningKeysUnavailableError('current link signing key is missing')
  return { current: value.current, keys }
}

function serializeKeySet(set: LinkSigningKeySet): string {
  return JSON.stringify(set)
}

async function readKeySet(secrets: Secrets): Promise<LoadedKeySet | null> {
  let raw: string | null
  try {
    raw = await secrets.get(LINK_SIGNING_KEYS_SECRET)
  } catch (cause) {
    throw new SigningKeysUnavailableError('link signing keys cannot be read', { cause })
  }
  return raw === null ? null : parseKeySet(raw)
}

/**
 * Only the file-backed secrets (`SECRETS_BACKEND=embedded`) create the key set on first use
 * (local development, tests). With Secret Manager the secret is provisioned (docs/links.md):
 * generating it from a service would race between instances and strand tokens signed with a
 * losing key.
 */
function mayCreateKeys(deps: PlatformDeps): boolean {
  return deps.config.secretsBackend !== 'secretmanager'
}

async function createKeySet(deps: PlatformDeps): Promise<LoadedKeySet> {
  const pending = inflightCreation.get(deps.secrets)
  if (pending) return pending
  const creation = (async () => {
    const kid = newKeyId()
    try {
      await deps.secrets.addVersion(LINK_SIGNING_KEYS_SECRET, serializeKeySet({ current: kid, keys: { [kid]: newKeyMaterial() } }))
    } catch (cause) {
      throw new SigningKeysUnavailableError('link signing keys cannot be created', { cause })
    }
    // read back: whatever is latest is what every reader will use
    const stored = await readKeySet(deps.secrets)
    if (!stored) throw new SigningKeysUnavailableError('link signing keys vanished after creation')
    return stored
  })()
  inflightCreation.set(deps.secrets, creation)
  try {
    return await creation
  } finally {
    inflightCreation.delete(deps.secrets)
  }
}

/**
 * The key set for signing: cached for a minute, created on first use on the embedded backend.
 * When the secret cannot be read, a previously loaded set keeps serving. Throws
 * SigningKeysUnavailableError when no key set can be had (the route answers 503).
 */
export async function getSigningKeys(deps: PlatformDeps): Promise<LoadedKeySet> {
  const now = deps.clock.now()
  const cached = cache.get(deps.secrets)
  if (cached?.set && now - cached.loadedAtMs < CACHE_TTL_MS && now >= cached.loadedAtMs) return cached.set
  let set: LoadedKeySet | null
  try {
    set = await readKeySet(deps.secrets)
  } catch (err) {
    // an outage of the secrets backend does not stop a process that already holds the keys
    if (cached?.set) return cached.set
    throw err
  }
  if (!set) {
    if (!mayCreateKeys(deps)) throw new SigningKeysUnavailableError('link signing keys are not provisioned')
    set = await createKeySet(deps)
  }
  cache.set(deps.secrets, { set, loadedAtMs: deps.clock.now() })
  return set
}

/**
 * The verification key named `kid`, or null when no such key exists. Never creates keys. An
 * unknown kid re-reads the secret (a rotation by another instance), at most every 10 seconds,
 * so random key ids in hostile tokens cannot turn into a secret read per request.
 * Throws SigningKeysUnavailableError when the secret cannot be read.
 */
export async function getVerificationKey(deps: PlatformDeps, kid: string): Promise<Buffer | null> {
  const now = deps.clock.now()
  const cached = cache.get(deps.secrets)
  const fresh = cached !== undefined && now - cached.loadedAtMs < CACHE_TTL_MS && now >= cached.loadedAtMs
  if (fresh) {
    const key = cached.set?.keys.get(kid)
    if (key) return key
    if (now - cached.loadedAtMs < MISS_RELOAD_INTERVAL_MS) return null
  }
  let set: LoadedKeySet | null
  try {
    set = await readKeySet(deps.secrets)
  } catch (err) {
    if (cached?.set) return cached.set.keys.get(kid) ?? null
    throw err
  }
  cache.set(deps.secrets, { set, loadedAtMs: deps.clock.now() })
  return set?.keys.get(kid) ?? null
}

/**
 * Adds a new signing key and makes it current; every previous key stays in the set and keeps
 * verifying the tokens it signed. Returns the new key id. Run by the operator
 * (`npm run cli -- links rotate-signing-key`, scripts/cli/links.ts), never by a service: the
 * services may only read the secret.
 */
export async function rotateLinkSigningKey(deps: Pick<PlatformDeps, 'secrets' | 'clock'>): Promise<string> {
  let raw: string | null
  try {
    raw = await deps.secrets.get(LINK_SIGNING_KEYS_SECRET)
  } catch (cause) {
    throw new SigningKeysUnavailableError('link signing keys cannot be read', { cause })
  }
  const previous: LinkSigningKeySet = raw === null ? { current: '', keys: {} } : (JSON.parse(raw) as LinkSigningKeySet)
  if (raw !== null) parseKeySet(raw) // refuse to rotate on top of a broken set
  let kid = newKeyId()
  while (kid in previous.keys) kid = newKeyId()
  const next: LinkSigningKeySet = { current: kid, keys: { ...previous.keys, [kid]: newKeyMaterial() } }
  await deps.secrets.addVersion(LINK_SIGNING_KEYS_SECRET, serializeKeySet(next))
  cache.set(deps.secrets, { set: parseKeySet(serializeKeySet(next)), loadedAtMs: deps.clock.now() })
  return kid
}

/** Forgets the cached key set of these deps (tests; after an out-of-band rotation). */
export function forgetCachedSigningKeys(deps: PlatformDeps): void {
  cache.delete(deps.secrets)
}
