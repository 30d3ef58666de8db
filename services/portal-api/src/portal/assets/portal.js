// The portal's one script (served at /portal/assets/portal.js; the CSP allows no inline script).
// Progressive enhancement only: every screen works without it.

// Copy buttons: <button type="button" class="copy" data-copy-target="ID" hidden>Copy</button>
// copies the text of the element with that id. Hidden until this script shows it, so a page
// without script offers no button that does nothing.
function enableCopyButtons(root) {
  for (const button of root.querySelectorAll('button.copy[data-copy-target]')) {
    button.hidden = false
    button.addEventListener('click', async () => {
      const target = document.getElementById(button.dataset.copyTarget)
      if (!target) return
      try {
        await navigator.clipboard.writeText(target.textContent.trim())
        button.textContent = 'Copied'
      } catch {
        // no clipboard permission: select the text so the tenant can copy it by hand
        const range = document.createRange()
        range.selectNodeContents(target)
        const sel = window.getSelection()
        sel.removeAllRanges()
        sel.addRange(range)
        button.textContent = 'Selected: press Ctrl+C'
      }
    })
  }
}

// Forms marked data-enhance="replace:ID" post with fetch and replace the element ID with the
// same element from the answer (the answer is the full page the form would have shown), so the
// server renders once for both paths.
function enableReplacingForms(root) {
  for (const form of root.querySelectorAll('form[data-enhance^="replace:"]')) {
    form.addEventListener('submit', async (event) => {
      const id = form.dataset.enhance.slice('replace:'.length)
      const here = document.getElementById(id)
      if (!here) return
      const submitter = event.submitter
      // data-enhance-only="VALUE": only the button with that value is enhanced; the others
      // (such as a save that redirects) submit as usual
      const only = form.dataset.enhanceOnly
      if (only && (!submitter || submitter.value !== only)) return
      event.preventDefault()
      const body = new URLSearchParams(new FormData(form, submitter))
      // the submitter's formaction, else the form's attribute (form.action would be a control
      // named "action" when the form has one, as the mapping editor's buttons are)
      const target = submitter?.getAttribute('formaction') || form.getAttribute('action')
      const res = await fetch(target, { method: 'POST', body, credentials: 'same-origin' })
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html')
      const there = doc.getElementById(id)
      if (!there) {
        form.submit()
        return
      }
      here.replaceWith(there)
      enableCopyButtons(there)
      // an error about a field (a malformed sample) is shown next to that field, not in the
      // replaced element: bring it over, and send focus to the field that needs fixing
      const invalid = showFieldErrors(form, doc)
      if (invalid) {
        invalid.focus()
        return
      }
      there.setAttribute('tabindex', '-1')
      there.focus()
    })
  }
}

// The answer's field errors on this page's form (matched by the form's id, fields by theirs): a
// field's error is the .field-error its aria-describedby names, placed where the answer placed it
// (before or after the field). Errors this form showed before are removed first. Returns the
// first field still invalid, or null.
function showFieldErrors(form, doc) {
  const answer = form.id ? doc.getElementById(form.id) : null
  if (!answer) return null
  let first = null
  for (const field of form.querySelectorAll('input[id], select[id], textarea[id]')) {
    for (const id of (field.getAttribute('aria-describedby') || '').split(/\s+/)) {
      const old = id ? document.getElementById(id) : null
      if (old?.classList.contains('field-error')) old.remove()
    }
    const twin = answer.querySelector(`#${CSS.escape(field.id)}`)
    if (!twin) continue
    for (const id of (twin.getAttribute('aria-describedby') || '').split(/\s+/)) {
      const error = id ? doc.getElementById(id) : null
      if (!error?.classList.contains('field-error')) continue
      const before = error.compareDocumentPosition(twin) & Node.DOCUMENT_POSITION_FOLLOWING
      field.insertAdjacentElement(before ? 'beforebegin' : 'afterend', document.importNode(error, true))
    }
    for (const name of ['aria-describedby', 'aria-invalid']) {
      if (twin.hasAttribute(name)) field.setAttribute(name, twin.getAttribute(name))
      else field.removeAttribute(name)
    }
    if (!first && field.getAttribute('aria-invalid') === 'true') first = field
  }
  return first
}

// The new-connection form offers Source for the types that have one: a partner CRM
// connection's source is always partnercrm (the API refuses any other). portal.css hides the
// field; disabling it here also keeps a value typed before switching type out of the post.
function enableSourceField(root) {
  for (const wrap of root.querySelectorAll('.source-field')) {
    const form = wrap.closest('form')
    const input = wrap.querySelector('input')
    if (!form || !input) continue
    const sync = () => {
      const type = form.querySelector('input[name="type"]:checked')
      input.disabled = type?.value === 'partnercrm' && input.getAttribute('aria-invalid') !== 'true'
    }
    form.addEventListener('change', sync)
    sync()
  }
}

// The accent picker (Settings, "Branding"): <input type=color data-accent-for="ID"> writes the
// colour into the text field ID (the one the form sends) and says its contrast as it is chosen,
// by the rules the server checks again on save (shared/src/domain/tenants/branding.ts): text on
// it at 4.5:1, the band at 3:1 against the page in light and dark mode.
function luminance(hex) {
  const c = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}
function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (hi + 0.05) / (lo + 0.05)
}
function enableAccentPicker(root) {
  for (const picker of root.querySelectorAll('input[type="color"][data-accent-for]')) {
    const field = document.getElementById(picker.dataset.accentFor)
    const said = document.getElementById(picker.getAttribute('aria-describedby'))
    if (!field || !said) continue
    const check = () => {
      const c = picker.value.toLowerCase()
      const text = Math.max(contrast(c, '#000000'), contrast(c, '#ffffff'))
      const light = contrast(c, '#ffffff')
      const dark = contrast(c, '#121212')
      const ok = text >= 4.5 && light >= 3 && dark >= 3
      said.textContent = `${ok ? 'Readable' : 'Not readable enough'}: text ${text.toFixed(1)}:1 (needs 4.5), against light ${light.toFixed(1)}:1 and dark ${dark.toFixed(1)}:1 (need 3).`
    }
    picker.addEventListener('input', () => {
      field.value = picker.value.toLowerCase()
      check()
    })
    field.addEventListener('change', () => {
      if (/^#[0-9a-f]{6}$/i.test(field.value.trim())) picker.value = field.value.trim().toLowerCase()
      check()
    })
  }
}

// The error summary's links (kit/error-summary.ts) go to their field without script (the page
// scrolls to it); with it, the field also takes focus, its label in view, so the tenant types
// there at once.
function enableErrorSummaryLinks(root) {
  for (const link of root.querySelectorAll('.error-summary a[href^="#"]')) {
    link.addEventListener('click', (event) => {
      const field = document.getElementById(link.getAttribute('href').slice(1))
      if (!field?.matches('input, select, textarea')) return
      event.preventDefault()
      const label = document.querySelector(`label[for="${CSS.escape(field.id)}"]`)
      ;(label ?? field).scrollIntoView()
      field.focus({ preventScroll: true })
    })
  }
}

document.addEventListener('DOMContentLoaded', () => {
  enableAccentPicker(document)
  enableErrorSummaryLinks(document)
  enableCopyButtons(document)
  enableReplacingForms(document)
  enableSourceField(document)
})
