/** Thrown by create* methods when a unique key is taken (public_id, custom field key, location). */
export class DuplicateError extends Error {
  constructor(what: string) {
    super(`duplicate ${what}`)
    this.name = 'DuplicateError'
  }
}
