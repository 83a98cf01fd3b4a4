// Problems the service names a field for, shown on that field: aria-invalid, a visible mark and
// the message tied to the control with aria-describedby, beside the message below the price.
//
// A message about a field the person has not touched yet is held back: resize needs width or
// height, but the file field comes first, so the service's "needs at least one of width and
// height" would otherwise greet the person the moment a file is picked. A held message is shown
// once the person leaves the form's fields (focus moves out of the form) or asks for it with the
// button in the price box; a message about a field the person edited is shown at once. Each new
// price request drops what was held and the marks, and decides again.
import { element } from './dom.js';

const edited = new Set<string>();
let held: (() => void) | undefined;

/** A new form: nothing edited, nothing held. */
export function resetFieldState(): void {
  edited.clear();
  held = undefined;
}

export function noteEdited(name: string): void {
  edited.add(name);
}

/** Whether a problem about this field may wait: an option field of the form the person has not edited. */
export function mayHold(field: string | undefined): field is string {
  return field !== undefined && field !== 'file' && document.getElementById(`field-${field}`) !== null && !edited.has(field);
}

export function hold(show: () => void): void {
  held = show;
}

/** Shows the held message, if any (the person left the fields or asked for it). */
export function releaseHeld(): void {
  const show = held;
  held = undefined;
  show?.();
}

export function dropHeld(): void {
  held = undefined;
}

export function markField(name: string, message: string): void {
  const control = document.getElementById(`field-${name}`);
  const field = control?.closest('.field');
  if (!control || !field) return;
  const errorId = `error-${name}`;
  document.getElementById(errorId)?.remove();
  control.setAttribute('aria-invalid', 'true');
  control.setAttribute('aria-describedby', `${errorId} hint-${name}`);
  // Right under the control, before its description.
  control.after(element('p', { class: 'field-error', id: errorId }, message));
}

export function clearFieldMarks(): void {
  for (const control of Array.from(document.querySelectorAll('#job [aria-invalid]'))) {
    control.removeAttribute('aria-invalid');
    control.setAttribute('aria-describedby', `hint-${control.getAttribute('name') ?? ''}`);
  }
  for (const message of Array.from(document.querySelectorAll('#job .field-error'))) message.remove();
}
