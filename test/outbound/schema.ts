import type { TSchema } from 'typebox'
import { createContractAjv, createContractValidator } from '@lsv/shared/contract/ajv.ts'
import type { ContractDefName } from '@lsv/shared/contract/schema-document.ts'
import { EmittedContact } from '@lsv/shared/contract/contact.ts'
import { EmittedContactList } from '@lsv/shared/contract/contact-list.ts'
import { EmittedWebhookEventV2 } from '@lsv/shared/contract/webhook-event.ts'

/**
 * Validation of our outputs (Ajv 2020) against both schemas of their wire shape: the published
 * contract document (what customers compile, `createContractValidator()`) and the stricter
 * schema of what we emit (`Emitted*`, contract/contact.ts says why there are two). An output
 * must pass both: the first is the promise, the second is what the code's types claim.
 */
export interface OutboundValidator {
  assertContact(value: unknown): void
  assertFieldPolicy(value: unknown): void
  assertWebhookEvent(value: unknown): void
  assertContactList(value: unknown): void
}

export async function contractValidator(): Promise<OutboundValidator> {
  const contract = createContractValidator()
  const ajv = createContractAjv()
  const check = (name: ContractDefName, emitted: TSchema | null) => {
    const validateEmitted = emitted ? ajv.compile(emitted) : null
    return (value: unknown) => {
      const res = contract(name, value)
      if (!res.valid) throw new Error(`${name} is not valid against the contract document: ${JSON.stringify(res.errors)}`)
      if (validateEmitted && !validateEmitted(value)) {
        throw new Error(`${name} is not valid against the schema of what we emit: ${JSON.stringify(validateEmitted.errors)}`)
      }
    }
  }
  return {
    assertContact: check('Contact', EmittedContact),
    assertFieldPolicy: check('FieldPolicy', null),
    assertWebhookEvent: check('WebhookEventV2', EmittedWebhookEventV2),
    assertContactList: check('ContactList', EmittedContactList),
  }
}
