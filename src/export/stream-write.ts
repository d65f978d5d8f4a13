import { createReadStream } from 'node:fs';
import { stringify } from 'csv-stringify/sync';
import { neutraliseCsvCell } from '../analysis/csv-cell.js';

/**
 * Writes one chunk and waits for the stream to drain when its buffer is full (backpressure), so an export of a
 * million rows holds one row at a time. Rejects when the destination fails or closes (a client that went away).
 */
export async function writeChunk(out: NodeJS.WritableStream, chunk: string | Uint8Array): Promise<void> {
  if (isDestroyed(out)) throw new Error('the destination closed before the export finished');
  if (out.write(chunk)) return;
  if (isDestroyed(out)) throw new Error('the destination closed before the export finished');
  await new Promise<void>((resolve, reject) => {
    const cleanup = () => {
      out.removeListener('drain', onDrain);
      out.removeListener('error', onError);
      out.removeListener('close', onClose);
    };
    const onDrain = () => {
      cleanup();
      resolve();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the destination closed before the export finished'));
    };
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}

function isDestroyed(out: NodeJS.WritableStream): boolean {
  return (out as { destroyed?: boolean }).destroyed === true;
}

/**
 * Copies a file into `out` one read buffer at a time, waiting for `out` to drain: a bundle's 14 MB analysis file is
 * never held whole. The file is closed whether the copy finishes or `out` fails.
 */
export async function copyFileInto(out: NodeJS.WritableStream, path: string): Promise<void> {
  for await (const chunk of createReadStream(path)) await writeChunk(out, chunk as Buffer);
}

/** Ends a stream and waits until everything written is flushed. */
export function endStream(out: NodeJS.WritableStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    out.once('error', reject);
    out.end(() => resolve());
  });
}

export type CsvCell = string | number | boolean | null | undefined;

/**
 * One CSV record (RFC 4180 quoting by csv-stringify: commas, quotes, CR and LF inside a field are quoted), with
 * text that a spreadsheet would run as a formula neutralised (csv-cell.ts).
 */
export function csvLine(cells: CsvCell[]): string {
  return stringify([cells.map((c) => (c === null || c === undefined ? '' : typeof c === 'boolean' ? String(c) : typeof c === 'string' ? neutraliseCsvCell(c) : c))]);
}

export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** Writes a JSON array one element at a time. */
export function jsonArrayWriter(out: NodeJS.WritableStream) {
  let first = true;
  return {
    async open(): Promise<void> {
      await writeChunk(out, '[');
    },
    async item(value: unknown): Promise<void> {
      await writeChunk(out, `${first ? '\n' : ',\n'}${JSON.stringify(value)}`);
      first = false;
    },
    async close(): Promise<void> {
      await writeChunk(out, first ? ']\n' : '\n]\n');
    },
  };
}
