/** A bad or missing configuration variable: the process stops at start-up with this message (exit 78). */
export class ConfigError extends Error {
  readonly variable: string
  constructor(variable: string, problem: string) {
    super(`configuration error: ${variable} ${problem}`)
    this.name = 'ConfigError'
    this.variable = variable
  }
}
