/**
 * Validation of our outputs against the published contract schema (Ajv 2020), through the
 * contract module's `createContractValidator()`.
 */
export interface OutboundValidator {
  assertContact(value: unknown): void
  assertFieldPolicy(value: unknown): void
  assertWebhookEvent(value: unknown): void
  assertContactList(value: unknown): void
}

export async function contractValidator(): Promise<OutboundValidator> {
  const mod = (await import('@lsv/shared/contract/ajv.ts')) as { createContractValidator: () => unknown }
  const v = mod.createContractValidator() as Record<string, unknown>
  const check = (name: string) => (value: unknown) => {
    const fn = (v.validate ?? v.check) as ((n: string, x: unknown) => unknown) | undefined
    if (typeof fn !== 'function') throw new Error('unknown contract validator shape')
    const res = fn.call(v, name, value)
    if (res === true || (res && typeof res === 'object' && (res as { ok?: boolean }).ok === true)) return
    if (res === undefined) return
    throw new Error(`${name} is not schema-valid: ${JSON.stringify(res)} ${JSON.stringify((v as { errors?: unknown }).errors ?? null)}`)
  }
  return {
    assertContact: check('Contact'),
    assertFieldPolicy: check('FieldPolicy'),
    assertWebhookEvent: check('WebhookEventV2'),
    assertContactList: check('ContactList'),
  }
}
