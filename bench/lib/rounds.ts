/**
 * The figures of a bench's rounds: each bench prints the median of its per-round ratios (a
 * round's two sides share the machine's mood), and beside it the rounds' range, how far one round
 * can move from it. The upper median for an even count.
 */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** "rounds LOW–HIGH", each figure through `show` */
export const range = (xs: readonly number[], show: (x: number) => string): string => `rounds ${show(Math.min(...xs))}–${show(Math.max(...xs))}`

/** "median M (rounds LOW–HIGH)" */
export const spread = (xs: readonly number[], show: (x: number) => string): string => `median ${show(median(xs))} (${range(xs, show)})`
