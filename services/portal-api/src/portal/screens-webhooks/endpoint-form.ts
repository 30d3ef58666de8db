import type { CreateIntegrationBody } from '@lsv/shared/contract/admin.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { fieldValue, type FormFields } from '../kit/forms.ts'
import { describedForm } from './endpoint-fields.ts'
import type { FormState } from './views.ts'

/** The add and edit forms' fields as the management API's body (the same domain function validates them). */
export function integrationForm(fields: FormFields | undefined): {
  state: Omit<FormState, 'error'>
  body: CreateIntegrationBody
  /** name and description for an update: null clears them */
  described: { name: string | null; description: string | null }
} {
  const url = fieldValue(fields, 'url').trim()
  const payloadVersion = fieldValue(fields, 'payload_version') === '1' ? '1' : '2'
  const contactHandles = fieldValue(fields, 'contact_handles') === 'on'
  const sensitiveTraits = fieldValue(fields, 'sensitive_traits') === 'on'
  const described = describedForm(fields)
  return {
    state: { url, payloadVersion, contactHandles, sensitiveTraits, name: described.name, description: described.description },
    body: {
      url,
      payload_version: payloadVersion === '1' ? 1 : 2,
      tiers: { contact_handles: contactHandles, sensitive_traits: sensitiveTraits },
      ...(described.body.name ? { name: described.body.name } : {}),
      ...(described.body.description ? { description: described.body.description } : {}),
    },
    described: described.body,
  }
}

/** An empty or too long URL, refused in words before the domain function sees it. */
export function requireUrlLength(url: string): void {
  if (url.length === 0 || url.length > 2048)
    throw new AppError('invalid_payload', { issues: [{ path: '/url', code: 'url', message: 'give an endpoint URL of at most 2048 characters' }] })
}
