// Positions for policy errors. smol-toml reports positions only for syntax errors, so a checked
// document is scanned once for its table headers and `key =` lines: the Nth `[[identity]]`, the
// Nth `[[policy]]` and the Nth `[[policy.rule]]` (counted across the file) map to their lines.

export interface Position {
  line: number;
  column: number;
}

interface TableSpan {
  header: Position;
  keys: Map<string, Position>;
}

const HEADER = /^(\s*)\[\[?\s*([^\]]+?)\s*\]\]?/;
const KEY = /^(\s*)("?)([A-Za-z0-9_-]+)\2\s*=/;

export class PolicyLocator {
  private readonly tables = new Map<string, TableSpan[]>();
  private readonly topKeys = new Map<string, Position>();

  constructor(source: string) {
    let current: TableSpan | undefined;
    for (const [i, text] of source.split(/\r?\n/).entries()) {
      const header = HEADER.exec(text);
      if (header) {
        current = { header: { line: i + 1, column: header[1].length + 1 }, keys: new Map() };
        const list = this.tables.get(header[2]) ?? [];
        list.push(current);
        this.tables.set(header[2], list);
        continue;
      }
      const key = KEY.exec(text);
      if (!key) continue;
      const pos = { line: i + 1, column: key[1].length + 1 };
      const target = current ? current.keys : this.topKeys;
      if (!target.has(key[3])) target.set(key[3], pos);
    }
  }

  /** Where key `key` of the `index`th `[[table]]` is (or the table's header, or line 1). */
  find(table: string | undefined, index: number, key?: string): Position {
    if (table === undefined) return (key && this.topKeys.get(key)) || { line: 1, column: 1 };
    const span = this.tables.get(table)?.[index];
    if (!span) return { line: 1, column: 1 };
    return (key && span.keys.get(key)) || span.header;
  }

  /** The header of the first table with this name (for unknown tables). */
  header(table: string): Position {
    return this.tables.get(table)?.[0]?.header ?? this.topKeys.get(table) ?? { line: 1, column: 1 };
  }
}
