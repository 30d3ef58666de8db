import { afterEach, expect, it } from 'vitest'
import type { Secrets } from '@lsv/shared/ports/secrets.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** A Secrets adapter under test on fresh storage. */
export interface SecretsHarness {
  secrets: Secrets
  close(): Promise<void>
}

/** Behaviour every Secrets adapter must show. */
export function secretsConformance(makeHarness: () => Promise<SecretsHarness>): void {
  const open: SecretsHarness[] = []
  const harness = async () => {
    const h = await makeHarness()
    open.push(h)
    return h
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((h) => h.close()))
  })
  const name = () => `test-secret-${randomSuffix()}`

  it('returns null for a secret that does not exist', async () => {
    const { secrets } = await harness()
    expect(await secrets.get(name())).toBeNull()
  })

  it('returns the value once a version is added', async () => {
    const { secrets } = await harness()
    const n = name()
    await secrets.addVersion(n, 'pepper-v1')
    expect(await secrets.get(n)).toBe('pepper-v1')
  })

  it('returns the latest version after a rotation, read right after it', async () => {
    const { secrets } = await harness()
    const n = name()
    await secrets.addVersion(n, 'v1')
    expect(await secrets.get(n)).toBe('v1')
    await secrets.addVersion(n, 'v2')
    expect(await secrets.get(n)).toBe('v2')
  })

  it('keeps unicode and JSON values exactly', async () => {
    const { secrets } = await harness()
    const n = name()
    const value = JSON.stringify({ keys: [{ kid: 'k1', secret: 'Zoë ✓ 東京' }] })
    await secrets.addVersion(n, value)
    expect(await secrets.get(n)).toBe(value)
  })

  it('keeps secrets apart by name', async () => {
    const { secrets } = await harness()
    const a = name()
    const b = name()
    await secrets.addVersion(a, 'for-a')
    expect(await secrets.get(b)).toBeNull()
    await secrets.addVersion(b, 'for-b')
    expect(await secrets.get(a)).toBe('for-a')
    expect(await secrets.get(b)).toBe('for-b')
  })
}
