// What every input kind's inspector takes and gives: the pipeline inspects each uploaded file with
// the inspector of its operation's declared kind (INSPECTORS in ./index.ts), never by kind itself.
import type { JobFile } from '../../core/job.js';
import type { FieldValues, InputKind, InspectedFile, Operation } from '../../operations/define.js';
import type { InspectionCache } from '../cache.js';
import type { DeclaredType } from '../office.js';
import type { PageBox } from '../pdf.js';

/** Where an upload that tools read from disk is written: the request's job directory. */
export interface UploadWriter {
  /** Writes the bytes under the name and gives the file's path. */
  write(name: string, bytes: Uint8Array): Promise<string>;
}

/** What an inspector knows beside the file's bytes. */
export interface InspectContext {
  /** Its declared input (limits, encryption, pages read by MuPDF) and its path, for messages. */
  op: Operation;
  /** The request's validated fields (a PDF's password). */
  fields: FieldValues;
  /** The file's place among the request's files, from 0. */
  index: number;
  /** What the request said the file is (its extension and media type), checked against the bytes where the kind cares. */
  declared?: DeclaredType;
  /** A paid retry: a check whose failure would fail the job uncharged ran on the quote and is skipped. */
  paid: boolean;
  /** The job's deadline, which the work the file will cost must fit in (Markdown's layout). */
  timeoutMs: number;
  jobDir: UploadWriter;
  /** Results kept between the quote and its paid retry, by a digest of the bytes. */
  inspections: InspectionCache;
}

/** An upload of the kind as the checks found it. */
export type InspectedAs<Kind extends InputKind> = Extract<InspectedFile, { kind: Kind }>;

/** An upload as the checks found it, and as the job will get it. */
export interface PreparedFile<File extends InspectedFile = InspectedFile> {
  /** What the operation's plan sees. */
  inspected: File;
  /** What the work function gets. */
  job: JobFile;
  /** Pages counted toward the page limit and a per-page price: 0 for a kind without pages. */
  pages: number;
  /** The page sizes, for the render check before payment; absent for a kind without pages. */
  pageBoxes?: () => Promise<PageBox[] | undefined>;
}

/** Refuses a file that is not of its kind or cannot be worked on (a ServiceError naming the problem), else prepares it. */
export type Inspector<File extends InspectedFile = InspectedFile> =
  (bytes: Uint8Array, context: InspectContext) => Promise<PreparedFile<File>>;
