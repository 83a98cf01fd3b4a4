// Forms and metadata in the MuPDF.js child process (./mupdf-js-process.ts runs these): reading a
// form's fields, filling them with appearances MuPDF draws, flattening fields and annotations
// into the page content, reading the Info dictionary and the XMP packet, and writing both alike.
import * as mupdf from 'mupdf';
import type {
  FieldWidget, FillRequest, FormField, FormFieldType, FormReading, MetadataKey, MetadataRequest, PdfMetadata,
} from './mupdf-js.js';
import { decodePacket, isoDate, newPacket, pdfaClaim, pdfDate, updatedPacket, xmpProperties } from './pdf-dates-and-xmp.js';

/**
 * Loads every object once. MuPDF repairs a damaged file when it first meets a broken object, and
 * a repair reloads the objects: edits made before it (a title, a field's value) would be lost
 * from the saved file. Loading everything first makes any repair happen before the edits.
 */
export function loadEveryObject(doc: mupdf.PDFDocument): void {
  for (let num = 1; num < doc.countObjects(); num++) {
    try {
      doc.newIndirect(num).resolve();
    } catch {
      // An object MuPDF cannot read stays unread; the save drops what nothing reaches.
    }
  }
}

// ---------------------------------------------------------------- reading a form

/** MuPDF's widget types → the kinds the service reports; others (unknown types) are skipped. */
const TYPES: Record<string, FormFieldType> = {
  text: 'text', checkbox: 'checkbox', radiobutton: 'radio', combobox: 'choice', listbox: 'choice', signature: 'signature', button: 'button',
};

const round = (n: number) => Math.round(n * 100) / 100;

/** The widget's rectangle in the displayed page's space (MuPDF's page space: rotation and CropBox applied). */
function rectOf(widget: mupdf.PDFWidget): [number, number, number, number] {
  const [x0, y0, x1, y1] = widget.getRect();
  return [round(x0), round(y0), round(x1 - x0), round(y1 - y0)];
}

/** A checkbox's or radio button's on states: the names of its normal appearances other than Off. */
function onStates(widget: mupdf.PDFWidget): string[] {
  const states: string[] = [];
  const normal = widget.getObject().get('AP').get('N');
  if (normal.isDictionary()) normal.forEach((_, key) => { if (key !== 'Off') states.push(String(key)); });
  return states;
}

interface Entry { field: FormField; widgets: FieldWidget[]; handles: mupdf.PDFWidget[] }

/** Every terminal field that has a widget on a page, in page order; `handles` are the widgets themselves. */
function collectFields(doc: mupdf.PDFDocument): Map<string, Entry> {
  const fields = new Map<string, Entry>();
  for (let index = 0; index < doc.countPages(); index++) {
    const page = doc.loadPage(index);
    for (const widget of page.getWidgets()) {
      const type = TYPES[widget.getFieldType()];
      if (type === undefined) continue;
      const name = widget.getName();
      const place: FieldWidget = { page: index + 1, rect: rectOf(widget) };
      if (type === 'radio') place.option = onStates(widget)[0];
      const known = fields.get(name);
      if (known) {
        known.widgets.push(place);
        known.handles.push(widget);
        if (type === 'radio' && place.option !== undefined && !known.field.options.includes(place.option)) known.field.options.push(place.option);
        continue;
      }
      fields.set(name, { field: describe(widget, type, place), widgets: [place], handles: [widget] });
    }
  }
  return fields;
}

function describe(widget: mupdf.PDFWidget, type: FormFieldType, place: FieldWidget): FormField {
  const raw = widget.getValue();
  const value = type === 'checkbox' ? raw !== '' && raw !== 'Off'
    : type === 'radio' ? (raw === '' || raw === 'Off' ? null : raw)
      : type === 'signature' ? !widget.getObject().getInheritable('V').isNull()
        : type === 'button' ? null : raw === '' ? null : raw;
  const options = type === 'choice' ? widget.getOptions(true)
    : type === 'radio' ? (place.option === undefined ? [] : [place.option])
      : type === 'checkbox' ? onStates(widget).slice(0, 1) : [];
  const maxLength = type === 'text' ? widget.getMaxLen() : 0;
  const labels = type === 'choice' ? widget.getOptions(false) : [];
  return {
    ...(labels.some((label, i) => label !== options[i]) ? { labels } : {}),
    name: widget.getName(), type, value, options, page: place.page, rect: place.rect, readOnly: widget.isReadOnly(),
    maxLength: maxLength > 0 ? maxLength : null,
    editable: type === 'choice' && (widget.getFieldFlags() & mupdf.PDFWidget.CH_FIELD_IS_EDIT) !== 0,
  };
}

function hasXfa(doc: mupdf.PDFDocument): boolean {
  const form = doc.getTrailer().get('Root').get('AcroForm');
  return form.isDictionary() && !form.get('XFA').isNull();
}

export function readForm(doc: mupdf.PDFDocument): FormReading {
  const fields = [...collectFields(doc).values()].map(({ field, widgets }) => (widgets.length > 1 ? { ...field, widgets } : field));
  return { xfa: hasXfa(doc), fields };
}

// ---------------------------------------------------------------- filling and flattening

/** Gives a choice's value as its export value when the caller named the option by its label. */
function exportValueOf(widget: mupdf.PDFWidget, value: string): string {
  const labels = widget.getOptions(false);
  const exports = widget.getOptions(true);
  if (exports.includes(value)) return value;
  const at = labels.indexOf(value);
  return at >= 0 ? exports[at] : value;
}

/** Sets the values (the plan has checked each against its field) and redraws each filled widget's appearance. */
export function fillForm(doc: mupdf.PDFDocument, request: FillRequest): void {
  const fields = collectFields(doc);
  for (const [name, value] of Object.entries(request.values)) {
    const entry = fields.get(name);
    if (!entry) throw new Error('unknown field');
    const { field, handles } = entry;
    if (field.type === 'text') handles[0].setTextValue(String(value));
    else if (field.type === 'choice') handles[0].setChoiceValue(exportValueOf(handles[0], String(value)));
    else if (field.type === 'checkbox') {
      if (field.value !== value) handles[0].toggle();
    } else if (field.type === 'radio') {
      const target = handles.find((widget) => onStates(widget).includes(String(value)));
      if (target && target.getValue() !== value) target.toggle();
    }
    // Every widget of the field shows the value (MuPDF sets the field's value once, on the shared parent).
    for (const widget of handles) widget.update();
  }
  // Each filled field now carries its own appearance; a viewer asked to redraw them may draw them otherwise.
  const form = doc.getTrailer().get('Root').get('AcroForm');
  if (form.isDictionary()) form.delete('NeedAppearances');
}

/**
 * A form that asks its viewer to draw the values (NeedAppearances) holds text and choice fields
 * whose appearances show nothing: each gets one drawn from its value before baking.
 */
function drawMissingAppearances(doc: mupdf.PDFDocument): void {
  const form = doc.getTrailer().get('Root').get('AcroForm');
  if (!form.isDictionary() || !form.get('NeedAppearances').isBoolean() || !form.get('NeedAppearances').asBoolean()) return;
  for (const { field, handles } of collectFields(doc).values()) {
    if ((field.type !== 'text' && field.type !== 'choice') || typeof field.value !== 'string') continue;
    for (const widget of handles) {
      try {
        // MuPDF draws an appearance when the value changes: to another value and back.
        if (field.type === 'text') { widget.setTextValue(`${field.value} `); widget.setTextValue(field.value); }
        widget.update();
      } catch {
        // A widget MuPDF cannot redraw keeps the appearance it had.
      }
    }
  }
}

/**
 * Unsigned signature fields without an appearance of their own: viewers show nothing there, but
 * MuPDF would bake its own placeholder ("SIGN"). They go before baking.
 */
function dropEmptySignatures(doc: mupdf.PDFDocument): void {
  for (let index = 0; index < doc.countPages(); index++) {
    const page = doc.loadPage(index);
    for (const widget of page.getWidgets()) {
      const obj = widget.getObject();
      if (widget.getFieldType() === 'signature' && obj.getInheritable('V').isNull() && obj.get('AP').isNull()) page.deleteAnnotation(widget);
    }
  }
}

/** Draws every field's and annotation's appearance into its page's content; no form is left. */
export function flatten(doc: mupdf.PDFDocument): void {
  dropEmptySignatures(doc);
  drawMissingAppearances(doc);
  doc.bake(true, true);
  const root = doc.getTrailer().get('Root');
  if (!root.get('AcroForm').isNull()) root.delete('AcroForm');
}

// ---------------------------------------------------------------- metadata

const INFO_KEYS: Record<MetadataKey | 'producer', string> = {
  title: 'Title', author: 'Author', subject: 'Subject', keywords: 'Keywords', creator: 'Creator', producer: 'Producer',
};

function xmpOf(doc: mupdf.PDFDocument): string | null {
  const stream = doc.getTrailer().get('Root').get('Metadata');
  if (!stream.isStream()) return null;
  try {
    return decodePacket(stream.readStream().asUint8Array());
  } catch {
    return null;
  }
}

function versionOf(doc: mupdf.PDFDocument): string {
  const header = /(\d+\.\d+)/.exec(doc.getMetaData('format') ?? '')?.[1] ?? `${Math.floor(doc.getVersion() / 10)}.${doc.getVersion() % 10}`;
  const catalog = doc.getTrailer().get('Root').get('Version');
  const later = catalog.isName() && /^\d+\.\d+$/.test(catalog.asName()) ? catalog.asName() : undefined;
  return later !== undefined && Number(later) > Number(header) ? later : header;
}

export function readMetadata(doc: mupdf.PDFDocument): PdfMetadata {
  const info = (key: string) => {
    const value = doc.getMetaData(`info:${key}`);
    return value === undefined || value === '' ? null : value;
  };
  const xmp = xmpOf(doc);
  return {
    title: info('Title'), author: info('Author'), subject: info('Subject'), keywords: info('Keywords'),
    creator: info('Creator'), producer: info('Producer'),
    created: isoDate(doc.getMetaData('info:CreationDate')), modified: isoDate(doc.getMetaData('info:ModDate')),
    pageCount: doc.countPages(), version: versionOf(doc), encrypted: (doc.getMetaData('encryption') ?? 'None') !== 'None',
    pdfa: pdfaClaim(xmp), xmp,
  };
}

// ---------------------------------------------------------------- writing metadata

/**
 * Sets or removes the Info entries and writes the same values to the XMP packet (a new packet
 * when the file has none, or one that cannot be edited); both get the modification date `now`.
 */
export function writeMetadata(doc: mupdf.PDFDocument, request: MetadataRequest, now: string): void {
  const trailer = doc.getTrailer();
  let info = trailer.get('Info');
  if (!info.isDictionary()) {
    info = doc.addObject(doc.newDictionary());
    trailer.put('Info', info);
  }
  for (const [key, value] of Object.entries(request) as Array<[MetadataKey, string | undefined]>) {
    if (value === undefined) continue;
    if (value === '') info.delete(INFO_KEYS[key]);
    else doc.setMetaData(`info:${INFO_KEYS[key]}`, value);
  }
  doc.setMetaData('info:ModDate', pdfDate(now));
  const current = readMetadata(doc);
  const values = {
    title: current.title, author: current.author, subject: current.subject, keywords: current.keywords, creator: current.creator,
  };
  const properties = xmpProperties(values, now.replace(/\.\d{3}Z$/, 'Z'));
  const packet = (current.xmp !== null ? updatedPacket(current.xmp, properties) : undefined) ?? newPacket(properties);
  const root = trailer.get('Root');
  const bytes = new TextEncoder().encode(packet);
  const stream = root.get('Metadata');
  if (stream.isStream()) {
    // Written as plain text, as PDF/A asks of the metadata stream.
    stream.delete('Filter');
    stream.delete('DecodeParms');
    stream.writeRawStream(bytes);
  } else {
    const dict = doc.newDictionary();
    dict.put('Type', doc.newName('Metadata'));
    dict.put('Subtype', doc.newName('XML'));
    root.put('Metadata', doc.addRawStream(bytes, dict));
  }
}
