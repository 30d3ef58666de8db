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
      there.setAttribute('tabindex', '-1')
      there.focus()
    })
  }
}

document.addEventListener('DOMContentLoaded', () => {
  enableCopyButtons(document)
  enableReplacingForms(document)
})
