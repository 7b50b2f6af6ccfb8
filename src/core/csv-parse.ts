// A bounded RFC 4180 CSV reader for files operators upload (the bulk price import, docs/operations.md
// "Bulk price import"): fields separated by commas, records by CRLF or LF, a field in double quotes
// may hold commas, line breaks and doubled quotes (""). A UTF-8 byte order mark is skipped and blank
// lines are ignored. Everything an upload could use to make the reader work without end is bounded
// (bytes, records, fields per record, characters per field), and anything malformed is refused with
// the line where it starts: an unterminated quote, a quote inside an unquoted field, text after a
// closing quote. The reader knows nothing of what the columns mean.

export interface CsvLimits {
  /** The most UTF-16 code units the text may have (a bound on the upload, checked first). */
  maxChars: number;
  /** The most records, the header included. */
  maxRecords: number;
  maxFields: number;
  maxFieldChars: number;
}

export interface CsvRecord {
  /** The 1-based line the record starts on (a quoted field may span lines). */
  line: number;
  fields: string[];
}

export class CsvError extends Error {
  override name = "CsvError";
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/** The records of `text`, each with its line; throws CsvError at the first malformed or oversized part. */
export function parseCsv(text: string, limits: CsvLimits): CsvRecord[] {
  if (text.length > limits.maxChars) throw new CsvError(1, `the file is larger than ${limits.maxChars} characters`);
  const records: CsvRecord[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    // A blank line (LF or CRLF alone) is no record.
    if (text[i] === "\n" || (text[i] === "\r" && text[i + 1] === "\n")) {
      i += text[i] === "\r" ? 2 : 1;
      line++;
      continue;
    }
    const record: CsvRecord = { line, fields: [] };
    for (;;) {
      if (record.fields.length >= limits.maxFields) throw new CsvError(record.line, `a record has more than ${limits.maxFields} fields`);
      let field = "";
      if (text[i] === '"') {
        const start = line;
        i++;
        for (;;) {
          if (i >= text.length) throw new CsvError(start, "a quoted field is not closed");
          const ch = text[i]!;
          if (ch === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (ch === "\n") line++;
          field += ch;
          i++;
          if (field.length > limits.maxFieldChars) throw new CsvError(start, `a field is longer than ${limits.maxFieldChars} characters`);
        }
        if (i < text.length && text[i] !== "," && text[i] !== "\n" && !(text[i] === "\r" && text[i + 1] === "\n")) {
          throw new CsvError(line, "text after a closing quote (a quote inside a quoted field is written twice)");
        }
      } else {
        while (i < text.length && text[i] !== "," && text[i] !== "\n" && !(text[i] === "\r" && text[i + 1] === "\n")) {
          if (text[i] === '"') throw new CsvError(line, "a quote inside an unquoted field (quote the whole field and double the quote)");
          field += text[i];
          i++;
          if (field.length > limits.maxFieldChars) throw new CsvError(line, `a field is longer than ${limits.maxFieldChars} characters`);
        }
      }
      record.fields.push(field);
      if (text[i] === ",") {
        i++;
        continue;
      }
      // The end of the record: a line break or the end of the text.
      if (i < text.length) {
        i += text[i] === "\r" ? 2 : 1;
        line++;
      }
      break;
    }
    if (records.length >= limits.maxRecords) throw new CsvError(record.line, `the file has more than ${limits.maxRecords} records`);
    records.push(record);
  }
  return records;
}
