import { INTEGRATION_DESCRIPTION_MAX, INTEGRATION_NAME_MAX } from '@lsv/shared/contract/admin.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { fieldValue, type FormFields } from '../kit/forms.ts'

/** What the tenant calls an endpoint: its name, else its URL (of the API's view, or a stored record, whose name may be absent). */
export const endpointTitle = (i: { name?: string | null; url: string }): string => i.name ?? i.url

/** The name and description inputs of the add and edit forms (optional; empty clears them). */
export function describeFields(idPrefix: string, values: { name: string; description: string }): SafeHtml {
  return html`<label for="${idPrefix}-name">Name <span class="hint">(optional)</span></label>
<input type="text" id="${idPrefix}-name" name="name" maxlength="${INTEGRATION_NAME_MAX}" value="${values.name}" autocomplete="off">
<label for="${idPrefix}-description">Description <span class="hint">(optional)</span></label>
<textarea id="${idPrefix}-description" name="description" maxlength="${INTEGRATION_DESCRIPTION_MAX}" rows="2">${values.description}</textarea>`
}

/**
 * The form's name and description: as typed for the page (a refused form keeps them), and as the
 * management API's body member (`null`: clear it; the domain trims and stores an empty one as none).
 */
export function describedForm(fields: FormFields | undefined): {
  name: string
  description: string
  body: { name: string | null; description: string | null }
} {
  const name = fieldValue(fields, 'name')
  const description = fieldValue(fields, 'description')
  return { name, description, body: { name: name.trim() || null, description: description.trim() || null } }
}
