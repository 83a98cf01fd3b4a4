// The list of operations: loaded from the service's catalog and API description, grouped by
// category, each with its live price. Choosing one builds its form.
import { byId, element, present } from './dom.js';
import { chooseOperation } from './form.js';
import { formatUsdc } from './format.js';
import { updatePayButtons } from './pay-buttons.js';
import { describeWallets } from './payment-mode.js';
import { discard } from './responses.js';
import type { CatalogItem, OpenApiDocument, Operation } from './service-types.js';
import { state } from './state.js';
import { SERVICE_READ_TIMEOUT_MS, timedFetch } from './timeouts.js';

/** Left to programs: URLs in a file's place (file_url, image_url) and the ways of delivery. */
const PROGRAMS_ONLY = new Set(['file_url', 'delivery', 'deliver_to']);

export async function loadOperations(): Promise<void> {
  const container = byId('operations');
  let catalog: { items: CatalogItem[] };
  let openapi: OpenApiDocument | undefined;
  // Each fetch settles on its own, so one failing leaves the other's answer to be ended below.
  const [catalogResponse, openapiResponse] = await Promise.all([
    timedFetch('/v1/discovery', {}, SERVICE_READ_TIMEOUT_MS).catch(() => undefined),
    timedFetch('/openapi.json', {}, SERVICE_READ_TIMEOUT_MS).catch(() => undefined),
  ]);
  try {
    if (!catalogResponse?.ok) throw new Error(`status ${catalogResponse?.status}`);
    catalog = await catalogResponse.json() as { items: CatalogItem[] };
    openapi = openapiResponse?.ok ? await openapiResponse.json() as OpenApiDocument : undefined;
  } catch {
    container.replaceChildren(element('p', {}, 'The list of operations could not be loaded from the service. Reload the page to try again.'));
    container.removeAttribute('aria-busy');
    return;
  } finally {
    discard(catalogResponse);
    discard(openapiResponse);
  }

  state.operations = catalog.items.map((item) => {
    const path = new URL(item.resource).pathname;
    const post = openapi?.paths[path]?.post;
    // The form follows the API description; the catalog carries the same schema and is the fallback.
    const described = post?.requestBody?.content?.['multipart/form-data']?.schema ?? item.metadata.inputSchema;
    // The page sends the chosen files and shows the result itself: it leaves out the form's ways
    // in and out for programs (a URL in a file's place, a link or a push instead of the result).
    const properties = Object.fromEntries(Object.entries(described.properties).filter(([name]) => !PROGRAMS_ONLY.has(name) && !name.endsWith('_url')));
    // How few files: the JSON body's "files" says it (the form's parts alone may not, as URLs can stand in for some).
    const fewest = post?.requestBody?.content?.['application/json']?.schema?.properties.files?.minItems;
    if (properties.file?.type === 'array' && fewest !== undefined) properties.file = { ...properties.file, minItems: fewest };
    const schema = { ...described, properties };
    const name = path.replace(/^\/v1\//, '');
    return { path, name, title: post?.summary ?? name, item, schema };
  });

  const groups: Array<[string, string]> = [
    ['image-processing', 'Images'],
    ['pdf-processing', 'PDF documents'],
    ['pdf-extraction', 'Getting content out of PDFs'],
    ['ocr', 'Text recognition (OCR)'],
    ['office-conversion', 'Office documents to PDF'],
  ];
  const fieldsets = groups.map(([category, legend]) => {
    const members = state.operations.filter((op) => op.item.category === category);
    if (members.length === 0) return undefined;
    return element('fieldset', {}, element('legend', {}, legend), element('div', { class: 'operations' }, ...members.map(operationChoice)));
  });
  const unknown = state.operations.filter((op) => !groups.some(([category]) => category === op.item.category));
  if (unknown.length) fieldsets.push(element('fieldset', {}, element('legend', {}, 'Other'), element('div', { class: 'operations' }, ...unknown.map(operationChoice))));
  container.replaceChildren(
    element('p', { class: 'hint' }, `${state.operations.length} operations. Prices are live from the service, in USD, paid in USDC.`),
    ...present(...fieldsets),
  );
  container.removeAttribute('aria-busy');
  // The pay buttons follow the chains the catalog offers.
  updatePayButtons();
  describeWallets();
}

function priceLabel(op: Operation): string {
  const amount = op.item.accepts[0]?.amount;
  const usd = amount !== undefined ? formatUsdc(amount) : op.item.metadata.priceUsd;
  return op.item.metadata.pricingModel === 'per-page' ? `${usd} USD per page` : `${usd} USD`;
}

function operationChoice(op: Operation): HTMLElement {
  const id = `op-${op.name.replace(/[^a-z0-9]+/g, '-')}`;
  // An operation the service cannot run (no model provider set up) is shown, but cannot be chosen.
  const offered = op.item.metadata.thirdParty?.available !== false;
  const input = element('input', { type: 'radio', name: 'operation', id, value: op.path, disabled: !offered });
  input.addEventListener('change', () => { if (input.checked) chooseOperation(op); });
  return element('div', { class: offered ? 'operation' : 'operation unavailable' },
    element('label', { for: id },
      input,
      element('span', { class: 'title' }, op.title),
      element('span', { class: 'price', 'data-path': op.path }, offered ? priceLabel(op) : 'not offered by this service')));
}
