/** Prints one reliability figure in the shape docs/reliability.md tabulates. */
export function printFigure(item: string, figure: string): void {
  console.log(`RELIABILITY ${item}: ${figure}`)
}
