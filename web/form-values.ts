// What the form holds right now, read straight from its controls.
import { byId } from './dom.js';
import type { Operation } from './service-types.js';

/** Whether the form holds the file a quote needs; an operation that takes none (from-url) always does. */
export function hasFile(): boolean {
  const input = document.getElementById('field-file') as HTMLInputElement | null;
  if (!input) return true;
  return (input.files?.length ?? 0) > 0;
}

/** The request body exactly as the form stands: the files in order, and only the fields filled in. */
export function currentBody(op: Operation): FormData {
  const form = byId<HTMLFormElement>('job');
  const body = new FormData();
  const input = form.querySelector<HTMLInputElement>('#field-file');
  for (const file of Array.from(input?.files ?? [])) body.append('file', file, file.name);
  for (const name of Object.keys(op.schema.properties)) {
    if (name === 'file') continue;
    const control = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | null;
    if (control instanceof HTMLInputElement && control.type === 'file') {
      const file = control.files?.[0];
      if (file) body.append(name, file, file.name);
    } else if (control && control.value !== '') body.append(name, control.value);
  }
  return body;
}
