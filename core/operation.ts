// The shape of one operation. The table in ./index.ts declares all 21 once; routes, MCP
// tools, the OpenAPI document, the discovery catalog and the 402 quotes are derived from it.
import type { WorkFunction } from './job.js';

export type Category = 'image-processing' | 'pdf-processing' | 'pdf-extraction' | 'ocr';

interface FieldBase {
  name: string;
  description: string;
  required?: boolean;
}

export interface IntegerField extends FieldBase {
  type: 'integer';
  minimum?: number;
  maximum?: number;
  /** Allowed values, when the field is an enumeration of integers (angle, rotate). */
  enum?: readonly number[];
  default?: number;
}

export interface StringField extends FieldBase {
  type: 'string';
  enum?: readonly string[];
  minLength?: number;
  maxLength?: number;
  /** A size limit in UTF-8 bytes that answers 413 rather than 422 (the schema's 16 KB). */
  maxBytes?: number;
  default?: string;
  /** Never logged, never echoed (passwords, schemas). */
  secret?: boolean;
}

export type FieldSpec = IntegerField | StringField;

export type InputKind = 'image' | 'pdf' | 'markdown';

export interface InputSpec {
  kind: InputKind;
  /** Bytes per file (50 MB; 1 MB for Markdown). */
  maxBytes: number;
  /** Merge endpoints: the file field repeats between min and max times. */
  count: { min: number; max: number };
  /** Bytes over all files of one request (95 MB on merges). */
  maxTotalBytes: number;
  /** At most this many pages (render 50; ocr, tables, structured 30). */
  maxPages?: number;
  /** /v1/pdf/unlock takes encrypted PDFs; every other PDF operation refuses them. */
  acceptsEncrypted?: boolean;
}

export interface PriceSpec {
  model: 'flat' | 'per-page';
  /** Atomic USDC (6 decimals): 5000 is 0.005 USD. Per page for per-page operations. */
  rate: number;
  /** The largest price the API description advertises, in atomic units (ocr, tables, structured, render). */
  maxAmount?: number;
  note?: string;
}

export interface OutputSpec {
  /** 'image' means the real type follows the chosen format: image/jpeg, image/png or image/webp. */
  mediaType: 'image' | 'application/pdf' | 'application/zip' | 'text/markdown; charset=utf-8' | 'application/json';
  description: string;
  /** JSON Schema of the body, for JSON results (MCP outputSchema, OpenAPI). */
  jsonSchema?: Record<string, unknown>;
}

export interface Operation {
  /** Stable id used in logs and metrics, e.g. 'pdf.split'. */
  id: string;
  path: string;
  tool: string;
  title: string;
  description: string;
  category: Category;
  fields: readonly FieldSpec[];
  input: InputSpec;
  price: PriceSpec;
  output: OutputSpec;
  /** Sends file content to the third-party model provider (unless a local engine is configured). */
  thirdParty: boolean;
  /** Binaries the work needs; /v1/health reports them. */
  binaries: readonly string[];
  /** The job's deadline; subprocess deadlines sit inside it and the pool abort just outside it. */
  timeoutMs: number;
  /** Loads the worker-side function; undefined while the operation is not written (answers 501). */
  work?: () => Promise<WorkFunction>;
  /** Checks across fields that a per-field schema cannot express (returns a message naming the problem). */
  crossCheck?: (fields: Record<string, string | number | undefined>) => { field: string; message: string } | undefined;
}

export const MB = 1024 * 1024;
