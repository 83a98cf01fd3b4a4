// The chosen operation's form, built from its schema in the API description. Choosing a file asks
// for the price at once; editing an option asks again after a pause.
import { byId, element, present, withCode } from './dom.js';
import { noteEdited, resetFieldState } from './field-errors.js';
import { hasFile } from './form-values.js';
import { sentence } from './format.js';
import { clearProblem, setStatus } from './messages.js';
import { updatePayButtons } from './pay-buttons.js';
import { requestQuote } from './quote.js';
import type { Operation, PropertySchema } from './service-types.js';
import { state } from './state.js';

/** The re-quote waiting for typing to pause; a new file or another operation cancels it. */
let requoteTimer: number | undefined;

/** Which files the operation takes, for the file picker. */
function acceptedFiles(path: string): string {
  if (path.startsWith('/v1/image/')) return 'image/jpeg,image/png,image/webp,image/avif,.jpg,.jpeg,.png,.webp,.avif';
  if (path === '/v1/pdf/from-images') return 'image/jpeg,image/png,image/webp,image/avif,image/tiff,.jpg,.jpeg,.png,.webp,.avif,.tif,.tiff';
  if (path === '/v1/pdf/from-markdown') return '.md,.markdown,.txt,text/markdown,text/plain';
  if (path === '/v1/pdf/from-html') return '.html,.htm,.zip,text/html,application/zip';
  if (path.startsWith('/v1/office/')) return '.docx,.docm,.dotx,.xlsx,.xlsm,.xltx,.pptx,.pptm,.ppsx,.odt,.ott,.ods,.ots,.odp,.otp,.rtf,.doc,.dot,.xls,.xlt,.ppt,.pps';
  return 'application/pdf,.pdf';
}

function hintFor(name: string, schema: PropertySchema): string {
  const parts: string[] = [];
  if (schema.description) parts.push(sentence(schema.description));
  if (schema.type === 'integer' && !schema.enum) {
    if (schema.minimum !== undefined && schema.maximum !== undefined) parts.push(`A whole number from ${schema.minimum} to ${schema.maximum}.`);
    else if (schema.minimum !== undefined) parts.push(`A whole number of at least ${schema.minimum}.`);
  }
  if (schema.type === 'number' && schema.minimum !== undefined && schema.maximum !== undefined) {
    parts.push(`A number from ${schema.minimum} to ${schema.maximum}.`);
  }
  if (schema.type === 'string' && !schema.enum && schema.maxLength !== undefined) {
    parts.push(schema.minLength ? `${schema.minLength} to ${schema.maxLength} characters.` : `At most ${schema.maxLength} characters.`);
  }
  if (schema.default !== undefined) parts.push(`Default: ${schema.default}.`);
  if (name === 'file' && schema.type === 'array') parts.push('They are processed in the order shown by your file picker.');
  return parts.join(' ');
}

function fileField(op: Operation, schema: PropertySchema): HTMLElement {
  const multiple = schema.type === 'array';
  const input = element('input', {
    type: 'file', id: 'field-file', name: 'file', required: true, multiple,
    accept: acceptedFiles(op.path), 'aria-describedby': 'hint-file',
  });
  input.addEventListener('change', () => { window.clearTimeout(requoteTimer); void requestQuote(); });
  const label = multiple ? `Files (${schema.minItems ?? 2} to ${schema.maxItems ?? 20})` : 'File';
  return element('div', { class: 'field' },
    element('label', { for: 'field-file' }, label, ' ', element('span', { class: 'required' }, '(required)')),
    input,
    element('p', { class: 'desc', id: 'hint-file' }, ...withCode(hintFor('file', schema.items ? { ...schema.items, ...schema } : schema))));
}

function optionField(name: string, schema: PropertySchema, required: boolean): HTMLElement {
  const id = `field-${name}`;
  const hintId = `hint-${name}`;
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  // A yes-or-no option is a choice of the two words a form sends for it.
  const choices = schema.type === 'boolean' ? ['true', 'false'] : schema.enum;
  if (choices) {
    const select = element('select', { id, name, required, 'aria-describedby': hintId });
    // Nothing is sent unless chosen, so the service applies its own default.
    const blank = required && schema.default === undefined
      ? 'Choose…'
      : schema.default !== undefined ? `Default (${schema.default})` : 'Default';
    select.append(element('option', { value: '' }, blank));
    for (const value of choices) select.append(element('option', { value: String(value) }, String(value)));
    control = select;
  } else if (schema.type === 'integer' || schema.type === 'number') {
    control = element('input', {
      type: 'number', id, name, required, inputmode: schema.type === 'integer' ? 'numeric' : 'decimal',
      step: schema.type === 'integer' ? '1' : 'any',
      min: schema.minimum !== undefined ? String(schema.minimum) : undefined,
      max: schema.maximum !== undefined ? String(schema.maximum) : undefined,
      placeholder: schema.default !== undefined ? String(schema.default) : undefined,
      'aria-describedby': hintId,
    });
  } else if (schema.format === 'binary') {
    // A second file under its own name (stamp's image).
    control = element('input', { type: 'file', id, name, required, 'aria-describedby': hintId });
  } else if ((schema.maxLength ?? 0) > 1000) {
    control = element('textarea', {
      id, name, required, maxlength: String(schema.maxLength), spellcheck: 'false', 'aria-describedby': hintId,
    });
  } else {
    control = element('input', {
      type: schema.format === 'password' ? 'password' : 'text', id, name, required,
      autocomplete: schema.format === 'password' ? 'off' : undefined,
      minlength: schema.minLength !== undefined ? String(schema.minLength) : undefined,
      maxlength: schema.maxLength !== undefined ? String(schema.maxLength) : undefined,
      placeholder: schema.default !== undefined ? String(schema.default) : undefined,
      'aria-describedby': hintId,
    });
  }
  // Typing re-quotes after a pause, not on blur: a blur-time re-quote would swallow the click on
  // the pay button that caused the blur.
  control.addEventListener(control instanceof HTMLSelectElement ? 'change' : 'input', () => { noteEdited(name); optionEdited(); });
  return element('div', { class: 'field' },
    element('label', { for: id }, name, ' ', required ? element('span', { class: 'required' }, '(required)') : element('span', { class: 'required' }, '(optional)')),
    control,
    element('p', { class: 'desc', id: hintId }, ...withCode(hintFor(name, schema))));
}

export function chooseOperation(op: Operation): void {
  state.current = op;
  state.quote = undefined;
  state.quoting = false;
  state.quoteRefusal = undefined;
  resetFieldState();
  window.clearTimeout(requoteTimer);
  state.quoteSequence += 1;
  clearProblem();
  setStatus('');
  updatePayButtons();
  const form = byId<HTMLFormElement>('job');
  const required = new Set(op.schema.required ?? []);
  const fields = Object.entries(op.schema.properties);
  const file = op.schema.properties.file;
  const third = op.item.metadata.thirdParty;
  form.replaceChildren(...present(
    element('h3', {}, op.title),
    element('p', { class: 'desc' }, ...withCode(sentence(op.item.metadata.description))),
    third?.sendsContent ? element('p', { class: 'desc' }, 'This operation sends the file to a third-party model provider.') : undefined,
    third && third.available === false ? element('p', { class: 'desc' }, sentence(third.unavailableReason ?? 'This operation is not available on this service')) : undefined,
    op.item.metadata.pricingNote ? element('p', { class: 'desc' }, `Price: ${sentence(op.item.metadata.pricingNote)}`) : undefined,
    file ? fileField(op, file) : undefined,
    ...fields.filter(([name]) => name !== 'file').map(([name, schema]) => optionField(name, schema, required.has(name))),
  ));
  byId('quote').replaceChildren(element('p', { class: 'hint' }, 'The exact price appears here once a file is chosen. Nothing is signed or paid yet.'));
}

/** An option changed: the quote no longer matches the form, so it is dropped and asked again. */
function optionEdited(): void {
  if (!hasFile()) return;
  state.quoteSequence += 1;
  state.quote = undefined;
  state.quoting = true;
  updatePayButtons();
  byId('quote').replaceChildren(element('p', {}, 'The options changed; asking for the price again…'));
  window.clearTimeout(requoteTimer);
  requoteTimer = window.setTimeout(() => void requestQuote(), 400);
}
