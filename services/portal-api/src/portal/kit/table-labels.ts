/**
 * Every table of a page, stacked at narrow widths (docs/portal.md, "Tables at 390 px"): below the
 * stylesheet's breakpoint each row is a block and each cell says its column's name before its
 * value (`td[data-label]::before`), instead of a table that scrolls sideways. The names come from
 * the table's own `<thead>`: `sendPage` runs this over the page once, so a view writes a plain
 * table and gets the labels, and no view repeats its column names.
 *
 * The page is the `html` template's output: every interpolated text is escaped, so a `<` in it
 * is always markup, and the tags below are found by their names alone. A row header
 * (`<th scope="row">`) is the title of its stacked row and takes no label; a table without a
 * `<thead>`, and a column whose header has no text, give none.
 */

const TAG = /<(\/?)(table|thead|tr|th|td)\b([^>]*)>/g

interface TableState {
  /** the column names, by column index */
  labels: string[]
  inHead: boolean
  /** the next cell's column */
  column: number
  /** where the open header cell's content starts, and its span */
  headCell: { from: number; span: number } | null
}

const spanOf = (attributes: string) => Math.max(1, Number(/\bcolspan="(\d+)"/.exec(attributes)?.[1] ?? 1))

/** a header cell's text: tags dropped, spaces collapsed, as an attribute value (it is escaped text already) */
const labelOf = (cell: string) =>
  cell
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replaceAll('"', '&quot;')

/** The page with `data-label="<column name>"` on each body cell of each table that has a `<thead>`. */
export function labelTableCells(page: string): string {
  if (!page.includes('<table')) return page
  const tables: TableState[] = []
  let out = ''
  let copied = 0
  for (const m of page.matchAll(TAG)) {
    const [whole, closing, name, attributes = ''] = m
    const at = m.index
    const table = tables.at(-1)
    if (name === 'table') {
      if (closing) tables.pop()
      else tables.push({ labels: [], inHead: false, column: 0, headCell: null })
    } else if (!table) {
    } else if (name === 'thead') {
      table.inHead = !closing
    } else if (name === 'tr') {
      if (!closing) table.column = 0
    } else if (table.inHead) {
      // a header cell: its text names the columns it spans
      if (!closing) table.headCell = { from: at + whole.length, span: spanOf(attributes) }
      else if (table.headCell) {
        const label = labelOf(page.slice(table.headCell.from, at))
        for (let i = 0; i < table.headCell.span; i++) table.labels[table.column++] = label
        table.headCell = null
      }
    } else if (!closing) {
      const column = table.column
      table.column += spanOf(attributes)
      const label = table.labels[column]
      const rowHeader = name === 'th' && /\bscope="row"/.test(attributes)
      if (!label || rowHeader || /\bdata-label=/.test(attributes)) continue
      out += `${page.slice(copied, at)}<${name} data-label="${label}"${attributes}>`
      copied = at + whole.length
    }
  }
  return out + page.slice(copied)
}
