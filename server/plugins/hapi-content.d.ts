// @hapi/content ships no types; these are the two parsers the multipart reader uses.
declare module '@hapi/content' {
  /** Parses a Content-Type header; throws a Boom 400 naming what is wrong (a multipart type without a boundary, for one). */
  export function type(header: string): { mime: string; charset?: string; boundary?: string };
  /** Parses a form-data Content-Disposition header; throws a Boom 400 naming what is wrong. */
  export function disposition(header: string | undefined): { name: string; filename?: string };
}
