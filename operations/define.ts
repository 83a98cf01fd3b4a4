// The shape of one operation. Each operation's module (operations/<area>/<name>.ts) declares
// everything about it with defineOperation(); routes, MCP tools, the OpenAPI document, the
// discovery catalog, the 402 quotes and the pool's jobs are derived from those declarations.
import { fail } from '../core/errors.js';
import type { ImageFormat, ImageHeader, PageImageHeader } from '../checks/image.js';
import type { PageBox } from '../checks/pdf.js';
import type { WebPageForm } from '../checks/web-page.js';
import type { EngineCommand } from '../tools/engines/index.js';
import type { OfficeFormat } from '../tools/engines/libreoffice.js';

export type Category = 'image-processing' | 'pdf-processing' | 'pdf-extraction' | 'ocr' | 'office-conversion';

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

/** A decimal number (opacity, angles in degrees): multipart sends it as text, "0.5" or "-12". */
export interface NumberField extends FieldBase {
  type: 'number';
  minimum?: number;
  maximum?: number;
  default?: number;
}

/** true or false: JSON booleans over MCP and JSON bodies, the words "true" and "false" in a form. */
export interface BooleanField extends FieldBase {
  type: 'boolean';
  default?: boolean;
}

export interface StringField extends FieldBase {
  type: 'string';
  enum?: readonly string[];
  minLength?: number;
  maxLength?: number;
  /** A size limit in UTF-8 bytes that answers 413 rather than 422 (the schema's 16 KB). */
  maxBytes?: number;
  /**
   * A limit in UTF-8 bytes that the format imposes, answered 422 like any other rule of the field
   * (protect's password: AES-256 uses at most 127 bytes of it). JSON Schema counts characters
   * only, so the schema's maxLength is this number, a bound every accepted value meets.
   */
  maxUtf8Bytes?: number;
  default?: string;
  /**
   * The empty string is a value of its own (set-metadata: it removes the entry) rather than "not
   * sent", as an empty optional field otherwise is. The web page sends no blank inputs.
   */
  emptyIsValue?: boolean;
  /** Never logged, never echoed (passwords, schemas). */
  secret?: boolean;
  /**
   * A password: every character must count, so control characters (U+0000 to U+001F, U+007F to
   * U+009F) and lone surrogate halves are refused before payment, naming the first one. qpdf, like
   * any C program, ends a password at a NUL; no reader's password box takes a tab or a line break;
   * a lone surrogate has no UTF-8 form.
   */
  password?: boolean;
  /** A value a caller might send (shown to discovery services when the field is required). */
  example?: string;
  /** A regular expression the whole value must match (JSON Schema's pattern), and what it means in words ("a colour as #rrggbb"). */
  pattern?: { regex: string; means: string };
  /** A URL the service fetches on the buyer's behalf: its form and literal address are checked by the fetch rules before payment. */
  buyerUrl?: boolean;
}

export type FieldSpec = IntegerField | NumberField | BooleanField | StringField;

/** The parsed value of one declared field: a member of its enumeration, else a number, a boolean or a string. */
type ValueOf<F extends FieldSpec> = F extends { enum: readonly (infer Choice)[] } ? Choice
  : F extends { type: 'integer' | 'number' } ? number : F extends { type: 'boolean' } ? boolean : string;

/** A field always holds a value when it is required or has a default (the validation applies it). */
type AlwaysSet<F extends FieldSpec> = F extends { required: true } ? true : F extends { default: string | number | boolean } ? true : false;

/**
 * The validated fields of an operation, typed from its declarations (declared `as const` or
 * inline): `{ name: 'fit', type: 'string', enum: ['contain', 'cover'], default: 'contain' }`
 * gives `fit: 'contain' | 'cover'`; a field without a default or `required` may be undefined.
 */
export type FieldValuesOf<Fields extends readonly FieldSpec[]> = {
  [F in Fields[number] as F['name']]: AlwaysSet<F> extends true ? ValueOf<F> : ValueOf<F> | undefined;
};

/** The fields of any operation, as the server validates them. */
export type FieldValues = Record<string, string | number | boolean | undefined>;

/**
 * web: an HTML document or a ZIP of a page (checks/web-page.ts); page-image: an image to become a
 * PDF page (the image operations' formats and TIFF).
 */
export type InputKind = 'image' | 'page-image' | 'pdf' | 'markdown' | 'office' | 'web';

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
  /** A second, optional file the operation takes under its own name beside `file` (stamp's `image`). */
  namedFile?: NamedFileSpec;
  /**
   * The work reads the pages with MuPDF (their text, or draws them): the quote asks MuPDF to read
   * every page where that is cheap, and refuses a page it cannot read (checks/pdf.ts).
   */
  pagesReadByMupdf?: boolean;
}

/**
 * A second file under its own name: over HTTP a multipart file part of that name (or `<name>_url`
 * in its place), in JSON and MCP arguments `{ data }` or `{ url }` under that name. It is checked
 * before payment like an image operation's file (its type by its bytes, its size, its pixels),
 * reaches the plan as `namedFile`, and the work function as the job's last file.
 */
export interface NamedFileSpec {
  name: string;
  kind: 'image';
  /** The image formats it takes. */
  formats: readonly ImageFormat[];
  maxBytes: number;
  description: string;
}

export interface PriceSpec {
  model: 'flat' | 'per-page';
  /** Atomic USDC (6 decimals): 5000 is 0.005 USD. Per page for per-page operations. */
  rate: number;
  note?: string;
}

export interface OutputSpec {
  /** 'image' means the real type follows the chosen format: image/jpeg, image/png, image/webp or image/avif. */
  mediaType: 'image' | 'application/pdf' | 'application/zip' | 'text/markdown; charset=utf-8' | 'application/json';
  description: string;
  /** JSON Schema of the body, for JSON results (MCP outputSchema, OpenAPI). */
  jsonSchema?: Record<string, unknown>;
  /** What a 422 means for this operation, when it can mean more than bad input (OpenAPI). */
  unprocessable?: string;
  /** JSON the operation returns beside a file result: over HTTP in a response header, over MCP in structuredContent. */
  report?: ReportSpec;
}

export interface ReportSpec {
  /** The report's key in MCP's structuredContent: { "<name>": <the JSON> }. */
  name: string;
  /** The HTTP response header that holds the same JSON (ASCII, compact). */
  header: string;
  description: string;
  jsonSchema: Record<string, unknown>;
}

/** An upload as the pre-payment checks found it. */
export type InspectedFile =
  | { kind: 'image'; bytes: Uint8Array; header: ImageHeader }
  | { kind: 'page-image'; bytes: Uint8Array; header: PageImageHeader }
  /** encrypted: any encryption, including an owner password that restricts use but opens without a password. */
  | { kind: 'pdf'; bytes: Uint8Array; path: string; pages: number; encrypted: boolean }
  | { kind: 'markdown'; bytes: Uint8Array }
  | { kind: 'office'; bytes: Uint8Array; format: OfficeFormat }
  | { kind: 'web'; bytes: Uint8Array; form: WebPageForm };

/** What an operation's plan sees: every check before it has passed. */
export interface PlanInput<Fields extends readonly FieldSpec[] = readonly FieldSpec[]> {
  /** Validated fields with defaults applied. */
  fields: FieldValuesOf<Fields>;
  /** Whether the client sent the field itself (a default was not applied). */
  sent(name: Fields[number]['name']): boolean;
  files: readonly InspectedFile[];
  /** The operation's named file (InputSpec.namedFile), when one was sent. */
  namedFile?: Extract<InspectedFile, { kind: 'image' }>;
  /** Pages over all PDF inputs, as priced. */
  pages: number;
  /** The PDF's page sizes, cached with its inspection; undefined when mutool cannot list them. */
  pageBoxes(): Promise<PageBox[] | undefined>;
}

/**
 * A setting and the value of it that has a local engine read an operation's content (each is
 * resolved against the configuration in server/content-route.ts).
 */
export type LocalEngineSetting = 'OCR_ENGINE=tesseract' | 'TABLES_ENGINE=local' | 'MARKDOWN_OCR=tesseract';

/**
 * Where an operation's file content is read: on this server only (`local`), or by the third-party
 * model provider configured by MODEL_BASE_URL (`provider: 'model'`), except where `localWhen`
 * names a setting that has a local engine read it instead. A local operation may also read the
 * pages without a text layer with local OCR, when `scansReadWhen` names the setting that allows it.
 */
export type ContentRoute =
  | { local: true; scansReadWhen?: LocalEngineSetting }
  | { provider: 'model'; localWhen?: LocalEngineSetting };

export interface OperationSpec<Id extends string, Fields extends readonly FieldSpec[], Plan> {
  /** Stable id used in logs and metrics, e.g. 'pdf.split'; the path and tool name follow from it. */
  id: Id;
  title: string;
  description: string;
  category: Category;
  fields: Fields;
  input: InputSpec;
  price: PriceSpec;
  output: OutputSpec;
  /** Where the file content goes: the 503 without a provider, the catalog and the descriptions follow from it. */
  content: ContentRoute;
  /** The engines the work runs, by the commands they declare (tools/engines/); /v1/health reports each. */
  engines: readonly EngineCommand[];
  /** The job's deadline; subprocess deadlines sit inside it and the pool abort just outside it. */
  timeoutMs: number;
  /** Checks on the fields that a per-field schema cannot express; throws the client's error (fail()). */
  checkFields?: (fields: FieldValuesOf<Fields>) => void;
  /**
   * Runs before payment, after every generic check, on the inspection results: refuses what
   * the operation cannot do (with the error the client sees) and returns the plan, the job's
   * parameters, which the work function receives as they are.
   */
  plan(input: PlanInput<Fields>): Plan | Promise<Plan>;
  /** The result's media type when the plan decides it (an image's output format); the 402 names it. */
  resultMediaType?(plan: Plan): string;
}

export interface Operation<Id extends string = string, Plan = unknown, Fields extends readonly FieldSpec[] = readonly FieldSpec[]>
  extends OperationSpec<Id, Fields, Plan> {
  path: string;
  tool: string;
  /** The largest price the API description advertises, in atomic units: rate × page limit for per-page operations that have one. */
  maxAmount?: number;
}

/** A checkFields for an operation that needs at least one of two optional fields (named after the first). */
export function atLeastOneOf(operation: string, first: string, second: string): (fields: FieldValues) => void {
  return (fields) => {
    if (fields[first] === undefined && fields[second] === undefined) {
      fail('FIELD_INVALID', `${operation} needs at least one of "${first}" and "${second}"; neither was sent`, { field: first });
    }
  };
}

/** 'pdf.merge-compress' → '/v1/pdf/merge-compress'. */
export function pathOf(id: string): string {
  return `/v1/${id.replace('.', '/')}`;
}

/** 'pdf.merge-compress' → 'svc_pdf_merge_compress'. */
export function toolOf(id: string): string {
  return `svc_${id.replace(/[.-]/g, '_')}`;
}

/** Declares an operation; `const` keeps the fields' literal types, from which the plan's `fields` are typed. */
export function defineOperation<const Id extends string, const Fields extends readonly FieldSpec[], Plan>(
  spec: OperationSpec<Id, Fields, Plan>,
): Operation<Id, Plan, Fields> {
  const { model, rate } = spec.price;
  const maxPages = spec.input.maxPages;
  return {
    ...spec,
    path: pathOf(spec.id),
    tool: toolOf(spec.id),
    ...(model === 'per-page' && maxPages !== undefined ? { maxAmount: rate * maxPages } : {}),
  };
}

export const MB = 1024 * 1024;
