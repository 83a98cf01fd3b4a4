// The page behind GET /: lists the operations with their live prices, builds the chosen
// operation's form from the API description, asks the service for the quote (the 402) as soon
// as a file is chosen, and pays with the standard x402 client, signing with an injected
// EIP-1193 wallet (or, in dev mode only, the service's demo payer on the local chain).
// Every request goes to this page's own origin, by relative path; nothing is stored.
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { ClientEvmSigner } from '@x402/evm';
import { createWalletClient, custom, type EIP1193Provider } from 'viem';

declare global {
  interface Window { ethereum?: EIP1193Provider }
}

// ---- What the service describes ---------------------------------------------------------

interface PropertySchema {
  type?: 'string' | 'integer' | 'array';
  format?: string;
  description?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: string | number;
  items?: PropertySchema;
  minItems?: number;
  maxItems?: number;
}

interface FormSchema { required?: string[]; properties: Record<string, PropertySchema> }

interface CatalogItem {
  resource: string;
  category: string;
  accepts: Array<{ amount: string; network: string; payTo: string }>;
  metadata: {
    description: string;
    inputSchema: FormSchema;
    priceUsd: string;
    pricingModel: 'flat' | 'per-page';
    pricingNote?: string;
    thirdParty?: { sendsContent?: boolean; available?: boolean; unavailableReason?: string; engine?: string };
  };
}

interface OpenApiDocument {
  paths: Record<string, { post?: { summary?: string; requestBody?: { content?: Record<string, { schema?: FormSchema }> } } }>;
}

interface Operation {
  path: string;
  name: string;
  title: string;
  item: CatalogItem;
  schema: FormSchema;
}

interface ErrorBody { error?: { code?: string; status?: number; message?: string; field?: string } }

interface Quote {
  operation: Operation;
  body: FormData;
  paymentRequired: PaymentRequired;
}

interface DevPayer { network: string; address: string; balance: string }

// ---- Small helpers -----------------------------------------------------------------------

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Array<Node | string | undefined>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== undefined) node.append(child);
  return node;
}

const present = <T>(...items: Array<T | undefined>): T[] => items.filter((item): item is T => item !== undefined);

/** Atomic USDC (6 decimals) as a plain decimal: 5000 -> "0.005", 1500000 -> "1.5". */
function formatUsdc(atomic: string | bigint): string {
  const value = BigInt(atomic);
  const whole = value / 1_000_000n;
  const fraction = (value % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

const NETWORK_NAMES: Record<string, string> = {
  'eip155:8453': 'Base',
  'eip155:84532': 'Base Sepolia (test network)',
  'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'Solana',
  'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': 'Solana devnet (test network)',
};

const networkName = (network: string) => NETWORK_NAMES[network] ?? network;
const isEvm = (network: string) => network.startsWith('eip155:');
const shortAddress = (address: string) => (address.length > 14 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address);

/** Which files the operation takes, for the file picker. */
function acceptedFiles(path: string): string {
  if (path.startsWith('/v1/image/')) return 'image/jpeg,image/png,image/webp,.jpg,.jpeg,.png,.webp';
  if (path === '/v1/pdf/from-markdown') return '.md,.markdown,.txt,text/markdown,text/plain';
  return 'application/pdf,.pdf';
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'application/pdf': 'pdf',
  'application/zip': 'zip', 'application/json': 'json', 'text/markdown': 'md',
};

// Plain words for each error code; the service's own message follows them and names the detail.
const ERROR_WORDS: Record<string, string> = {
  PAYLOAD_TOO_LARGE: 'The file is too large for this operation.',
  LIMIT_EXCEEDED: 'The file goes beyond a limit of this operation (pages, pixels or ranges).',
  FIELD_INVALID: 'One of the options is missing or not allowed.',
  UNSUPPORTED_TYPE: 'This operation does not take this kind of file.',
  CORRUPT_INPUT: 'The file could not be read; it may be damaged.',
  ENCRYPTED_PDF: 'The PDF is password-protected. Remove the password first (the unlock operation does that).',
  WRONG_PASSWORD: 'The password does not open this PDF.',
  NO_CONTENT: 'The file holds nothing this operation can return.',
  UNSUPPORTED_MEDIA: 'The request was not sent as a form upload.',
  MALFORMED_BODY: 'The upload could not be read by the service.',
  NOT_IMPLEMENTED: 'The service cannot do this with this file.',
  PROVIDER_DISABLED: 'This operation is switched off on this service.',
  QUEUE_FULL: 'The service is busy. Try again in a few seconds.',
  GUARD_UNAVAILABLE: 'The service cannot check payments safely right now.',
  UNAVAILABLE: 'A part of the service is unavailable right now.',
  FACILITATOR_UNREACHABLE: 'The payment processor could not be reached.',
  PROVIDER_FAILED: 'The text-recognition provider failed.',
  JOB_TIMEOUT: 'The job took longer than its time limit.',
  JOB_FAILED: 'The job failed.',
  INTERNAL: 'Something went wrong inside the service.',
};

const NOT_CHARGED = 'Nothing was charged.';

function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

// ---- Page state --------------------------------------------------------------------------

const state: {
  operations: Operation[];
  current?: Operation;
  quote?: Quote;
  quoteSequence: number;
  devPayer?: DevPayer;
  resultUrl?: string;
  busy: boolean;
} = { operations: [], quoteSequence: 0, busy: false };

const quoteClient = new x402HTTPClient(new x402Client());

// ---- Messages ----------------------------------------------------------------------------

function setStatus(text: string): void {
  byId('status').textContent = text;
}

function showProblem(headline: string, ...details: string[]): void {
  const box = byId('problem');
  box.replaceChildren(element('p', {}, element('strong', {}, headline)), ...details.filter(Boolean).map((d) => element('p', {}, d)));
}

function clearProblem(): void {
  byId('problem').replaceChildren();
}

/** Reads the service's error body and puts it in plain words. */
async function describeErrorResponse(response: Response): Promise<{ headline: string; detail: string; code?: string }> {
  let body: ErrorBody | undefined;
  try {
    body = await response.json() as ErrorBody;
  } catch {
    body = undefined;
  }
  const code = body?.error?.code;
  const headline = (code && ERROR_WORDS[code]) ?? `The service answered with status ${response.status}.`;
  const message = body?.error?.message ? sentence(body.error.message) : '';
  return { headline, detail: message, code };
}

// ---- Loading the catalog -----------------------------------------------------------------

async function loadOperations(): Promise<void> {
  const container = byId('operations');
  let catalog: { items: CatalogItem[] };
  let openapi: OpenApiDocument | undefined;
  try {
    const [catalogResponse, openapiResponse] = await Promise.all([fetch('/v1/discovery'), fetch('/openapi.json')]);
    if (!catalogResponse.ok) throw new Error(`status ${catalogResponse.status}`);
    catalog = await catalogResponse.json() as { items: CatalogItem[] };
    openapi = openapiResponse.ok ? await openapiResponse.json() as OpenApiDocument : undefined;
  } catch {
    container.replaceChildren(element('p', {}, 'The list of operations could not be loaded from the service. Reload the page to try again.'));
    container.removeAttribute('aria-busy');
    return;
  }

  state.operations = catalog.items.map((item) => {
    const path = new URL(item.resource).pathname;
    const post = openapi?.paths[path]?.post;
    // The form follows the API description; the catalog carries the same schema and is the fallback.
    const schema = post?.requestBody?.content?.['multipart/form-data']?.schema ?? item.metadata.inputSchema;
    const name = path.replace(/^\/v1\//, '');
    return { path, name, title: post?.summary ?? name, item, schema };
  });

  const groups: Array<[string, string]> = [
    ['image-processing', 'Images'],
    ['pdf-processing', 'PDF documents'],
    ['pdf-extraction', 'Getting content out of PDFs'],
    ['ocr', 'Text recognition (OCR)'],
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
}

function priceLabel(op: Operation): string {
  const amount = op.item.accepts[0]?.amount;
  const usd = amount !== undefined ? formatUsdc(amount) : op.item.metadata.priceUsd;
  return op.item.metadata.pricingModel === 'per-page' ? `${usd} USD per page` : `${usd} USD`;
}

function operationChoice(op: Operation): HTMLElement {
  const id = `op-${op.name.replace(/[^a-z0-9]+/g, '-')}`;
  const input = element('input', { type: 'radio', name: 'operation', id, value: op.path });
  input.addEventListener('change', () => { if (input.checked) chooseOperation(op); });
  return element('div', { class: 'operation' },
    element('label', { for: id },
      input,
      element('span', { class: 'title' }, op.title),
      element('span', { class: 'price', 'data-path': op.path }, priceLabel(op))));
}

// ---- The form ----------------------------------------------------------------------------

function hintFor(name: string, schema: PropertySchema): string {
  const parts: string[] = [];
  if (schema.description) parts.push(sentence(schema.description));
  if (schema.type === 'integer' && !schema.enum) {
    if (schema.minimum !== undefined && schema.maximum !== undefined) parts.push(`A whole number from ${schema.minimum} to ${schema.maximum}.`);
    else if (schema.minimum !== undefined) parts.push(`A whole number of at least ${schema.minimum}.`);
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
    element('p', { class: 'desc', id: 'hint-file' }, hintFor('file', schema.items ? { ...schema.items, ...schema } : schema)));
}

function optionField(name: string, schema: PropertySchema, required: boolean): HTMLElement {
  const id = `field-${name}`;
  const hintId = `hint-${name}`;
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  if (schema.enum) {
    const select = element('select', { id, name, required, 'aria-describedby': hintId });
    // Nothing is sent unless chosen, so the service applies its own default.
    const blank = required && schema.default === undefined
      ? 'Choose…'
      : schema.default !== undefined ? `Default (${schema.default})` : 'Default';
    select.append(element('option', { value: '' }, blank));
    for (const value of schema.enum) select.append(element('option', { value: String(value) }, String(value)));
    control = select;
  } else if (schema.type === 'integer') {
    control = element('input', {
      type: 'number', id, name, required, inputmode: 'numeric', step: '1',
      min: schema.minimum !== undefined ? String(schema.minimum) : undefined,
      max: schema.maximum !== undefined ? String(schema.maximum) : undefined,
      placeholder: schema.default !== undefined ? String(schema.default) : undefined,
      'aria-describedby': hintId,
    });
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
  control.addEventListener(control instanceof HTMLSelectElement ? 'change' : 'input', optionEdited);
  return element('div', { class: 'field' },
    element('label', { for: id }, name, ' ', required ? element('span', { class: 'required' }, '(required)') : element('span', { class: 'required' }, '(optional)')),
    control,
    element('p', { class: 'desc', id: hintId }, hintFor(name, schema)));
}

function chooseOperation(op: Operation): void {
  state.current = op;
  state.quote = undefined;
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
    element('p', { class: 'desc' }, sentence(op.item.metadata.description)),
    third?.sendsContent ? element('p', { class: 'desc' }, 'This operation sends the file to a third-party model provider.') : undefined,
    third && third.available === false ? element('p', { class: 'desc' }, sentence(third.unavailableReason ?? 'This operation is not available on this service')) : undefined,
    op.item.metadata.pricingNote ? element('p', { class: 'desc' }, `Price: ${sentence(op.item.metadata.pricingNote)}`) : undefined,
    file ? fileField(op, file) : undefined,
    ...fields.filter(([name]) => name !== 'file').map(([name, schema]) => optionField(name, schema, required.has(name))),
  ));
  byId('quote').replaceChildren(element('p', { class: 'hint' }, 'The exact price appears here once a file is chosen. Nothing is signed or paid yet.'));
}

let requoteTimer: number | undefined;

/** An option changed: the quote no longer matches the form, so it is dropped and asked again. */
function optionEdited(): void {
  if (!hasFile()) return;
  state.quoteSequence += 1;
  state.quote = undefined;
  updatePayButtons();
  byId('quote').replaceChildren(element('p', {}, 'The options changed; asking for the price again…'));
  window.clearTimeout(requoteTimer);
  requoteTimer = window.setTimeout(() => void requestQuote(), 400);
}

function hasFile(): boolean {
  const input = document.getElementById('field-file') as HTMLInputElement | null;
  return (input?.files?.length ?? 0) > 0;
}

/** The request body exactly as the form stands: the files in order, and only the fields filled in. */
function currentBody(op: Operation): FormData {
  const form = byId<HTMLFormElement>('job');
  const body = new FormData();
  const input = form.querySelector<HTMLInputElement>('#field-file');
  for (const file of Array.from(input?.files ?? [])) body.append('file', file, file.name);
  for (const name of Object.keys(op.schema.properties)) {
    if (name === 'file') continue;
    const control = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | null;
    if (control && control.value !== '') body.append(name, control.value);
  }
  return body;
}

// ---- The quote ---------------------------------------------------------------------------

async function requestQuote(): Promise<void> {
  const op = state.current;
  if (!op || !hasFile()) return;
  const sequence = ++state.quoteSequence;
  state.quote = undefined;
  updatePayButtons();
  clearProblem();
  byId('result-section').hidden = true;
  const quoteBox = byId('quote');
  quoteBox.setAttribute('aria-busy', 'true');
  quoteBox.replaceChildren(element('p', {}, 'Asking the service for the exact price…'));
  setStatus('');
  const body = currentBody(op);
  let response: Response;
  try {
    response = await fetch(op.path, { method: 'POST', body });
  } catch {
    if (sequence !== state.quoteSequence) return;
    quoteBox.removeAttribute('aria-busy');
    quoteBox.replaceChildren(element('p', {}, 'No price yet.'));
    showProblem('The service could not be reached.', `Check the connection and choose the file again. ${NOT_CHARGED}`);
    return;
  }
  if (sequence !== state.quoteSequence) return;
  quoteBox.removeAttribute('aria-busy');
  if (response.status !== 402) {
    quoteBox.replaceChildren(element('p', {}, 'No price: the service did not accept this request.'));
    if (response.ok) {
      showProblem('The service answered without asking for a payment, which this page does not expect.', NOT_CHARGED);
      return;
    }
    const { headline, detail } = await describeErrorResponse(response);
    if (sequence !== state.quoteSequence) return;
    showProblem(headline, detail, `${NOT_CHARGED} No payment was asked for; fix the file or the options and the price is asked again.`);
    return;
  }
  let paymentRequired: PaymentRequired;
  try {
    const json: unknown = await response.json().catch(() => undefined);
    paymentRequired = quoteClient.getPaymentRequiredResponse((name) => response.headers.get(name), json);
  } catch {
    showProblem('The price sent by the service could not be read.', NOT_CHARGED);
    return;
  }
  // A newer quote was asked for while this one was read: that one wins.
  if (sequence !== state.quoteSequence) return;
  state.quote = { operation: op, body, paymentRequired };
  showQuote(state.quote);
  updatePayButtons();
}

function showQuote(quote: Quote): void {
  const accepts = quote.paymentRequired.accepts;
  const amount = accepts[0]?.amount ?? '0';
  const sameEverywhere = accepts.every((a) => a.amount === amount);
  const perPage = quote.operation.item.metadata.pricingModel === 'per-page';
  const rate = quote.operation.item.accepts[0]?.amount;
  const pages = perPage && rate && BigInt(rate) > 0n ? BigInt(amount) / BigInt(rate) : undefined;
  const chains = accepts.map((a) => element('li', { 'data-network': a.network },
    `${networkName(a.network)} (${a.network}): ${formatUsdc(a.amount)} USDC to `, element('code', { title: a.payTo }, shortAddress(a.payTo)),
    isEvm(a.network) ? ' — this page pays here' : ' — pay with an x402 client for this chain'));
  byId('quote').replaceChildren(element('div', { class: 'quote' },
    element('p', { class: 'amount', id: 'quote-amount' }, `${formatUsdc(amount)} USD`),
    element('p', { id: 'quote-usdc' },
      `Exactly ${formatUsdc(amount)} USDC (${amount} in USDC's smallest unit)`,
      pages !== undefined ? `, for ${pages} ${pages === 1n ? 'page' : 'pages'} at ${formatUsdc(rate!)} USD per page` : '',
      sameEverywhere ? '.' : '; the amount differs by chain, see below.'),
    element('p', {}, 'Chains offered:'),
    element('ul', { id: 'quote-chains' }, ...chains),
    element('p', { class: 'hint' }, 'Nothing has been signed or paid. You are charged only if the job succeeds.')));
}

// ---- Paying ------------------------------------------------------------------------------

function updatePayButtons(): void {
  const canPay = state.quote !== undefined && !state.busy && state.quote.paymentRequired.accepts.some((a) => isEvm(a.network));
  const wallet = byId<HTMLButtonElement>('pay-wallet');
  const demo = byId<HTMLButtonElement>('pay-demo');
  wallet.disabled = !canPay || !window.ethereum;
  demo.hidden = state.devPayer === undefined;
  demo.disabled = !canPay || state.devPayer === undefined;
}

function walletErrorWords(error: unknown): string {
  const code = (error as { code?: number })?.code;
  if (code === 4001) return 'You declined the request in your wallet.';
  if (code === 4100) return 'The wallet did not allow this page to use the account.';
  if (code === 4900 || code === 4901) return 'The wallet is not connected to a network.';
  const message = error instanceof Error ? error.message : typeof (error as { message?: unknown })?.message === 'string' ? String((error as { message: string }).message) : '';
  // viem wraps a refusal; its short message still says so.
  if (/reject|denied|declined/i.test(message)) return 'You declined the request in your wallet.';
  return message ? `The wallet could not sign: ${sentence(message.split('\n')[0])}` : 'The wallet could not sign the payment.';
}

/** The reasons a facilitator or the service gives for refusing a payment, in plain words. */
function refusalWords(reason: string): string {
  if (!reason) return '';
  const known: Array<[RegExp, string]> = [
    [/insufficient_(balance|funds)/i, 'The paying account does not hold enough USDC for this price.'],
    [/expired|valid_?before|valid_?after|too early/i, 'The signed payment was not valid at this time (it may have expired). Sign again.'],
    [/signature/i, 'The signature on the payment could not be verified.'],
    [/already (been )?used|nonce/i, 'This payment was already used.'],
    [/no matching payment requirements|amount|pay_?to|recipient/i, 'The payment does not match this price, chain or recipient. Ask for a new price and pay again.'],
    [/settlement failed/i, 'The payment could not be settled on the chain.'],
  ];
  const words = known.find(([pattern]) => pattern.test(reason))?.[1];
  const detail = reason.replace(/_/g, ' ');
  return words ? `${words} (The service said: ${detail}.)` : `The service said: ${sentence(detail)}`;
}

async function signWithWallet(paymentRequired: PaymentRequired, accept: PaymentRequirements): Promise<PaymentPayload> {
  const provider = window.ethereum;
  if (!provider) throw new Error('No browser wallet was found.');
  const accounts = await provider.request({ method: 'eth_requestAccounts' }) as string[];
  const address = accounts[0] as `0x${string}` | undefined;
  if (!address) throw new Error('The wallet shared no account.');
  const wanted = Number(accept.network.split(':')[1]);
  const current = Number(await provider.request({ method: 'eth_chainId' }));
  if (current !== wanted) {
    try {
      await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${wanted.toString(16)}` }] });
    } catch (error) {
      if ((error as { code?: number })?.code === 4001) throw error;
      throw new Error(`the wallet is on chain ${current}; switch it to ${networkName(accept.network)} (chain ${wanted}) and pay again`);
    }
  }
  const wallet = createWalletClient({ account: address, transport: custom(provider) });
  const signer: ClientEvmSigner = {
    address,
    signTypedData: (typed) => wallet.signTypedData({ account: address, ...typed } as Parameters<typeof wallet.signTypedData>[0]),
  };
  const client = new x402Client();
  client.register(accept.network as `${string}:${string}`, new ExactEvmScheme(signer));
  return new x402HTTPClient(client).createPaymentPayload({ ...paymentRequired, accepts: [accept] });
}

async function signWithDemoPayer(paymentRequired: PaymentRequired, accept: PaymentRequirements): Promise<PaymentPayload> {
  const response = await fetch('/dev/sign', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ paymentRequired: { ...paymentRequired, accepts: [accept] } }),
  });
  if (!response.ok) {
    const { detail } = await describeErrorResponse(response);
    throw new Error(`the demo payer did not sign: ${detail || `status ${response.status}`}`);
  }
  return await response.json() as PaymentPayload;
}

async function pay(method: 'wallet' | 'demo'): Promise<void> {
  const quote = state.quote;
  if (!quote || state.busy) return;
  const accept = quote.paymentRequired.accepts.find((a) => isEvm(a.network));
  if (!accept) return;
  state.busy = true;
  updatePayButtons();
  clearProblem();
  const price = `${formatUsdc(accept.amount)} USDC`;
  try {
    setStatus(method === 'wallet' ? `Waiting for your wallet to sign a payment of ${price} on ${networkName(accept.network)}…` : `The demo payer is signing ${price} on the local chain…`);
    let payload: PaymentPayload;
    try {
      payload = method === 'wallet' ? await signWithWallet(quote.paymentRequired, accept) : await signWithDemoPayer(quote.paymentRequired, accept);
    } catch (error) {
      setStatus('');
      showProblem(method === 'wallet' ? walletErrorWords(error) : sentence(error instanceof Error ? error.message : 'The demo payer did not sign'), NOT_CHARGED);
      return;
    }

    setStatus('Payment signed. Sending the file and processing it…');
    const headers = quoteClient.encodePaymentSignatureHeader(payload);
    let response: Response;
    try {
      response = await fetch(quote.operation.path, { method: 'POST', body: quote.body, headers });
    } catch {
      setStatus('');
      showProblem('The connection to the service broke while the paid request was on its way.',
        'The service charges only after the job succeeds and the answer is sent, so a charge is unlikely; your wallet shows any payment. The signed authorisation expires within 5 minutes.');
      return;
    }

    if (response.ok) {
      await showResult(quote, response);
      // The quote is spent: paying again needs a new quote, so one click can never pay twice.
      state.quote = undefined;
      const again = element('button', { type: 'button', id: 'quote-again' }, 'Get a new price to run it again');
      again.addEventListener('click', () => void requestQuote());
      byId('quote').append(element('p', { class: 'hint' }, 'This price is paid. ', again));
      setStatus(`Paid ${price}. The result is below.`);
      return;
    }
    setStatus('');
    if (response.status === 402) {
      let reason = '';
      try {
        reason = quoteClient.getPaymentRequiredResponse((name) => response.headers.get(name), await response.json().catch(() => undefined)).error ?? '';
      } catch {
        reason = '';
      }
      showProblem('The payment was refused.', refusalWords(reason), `${NOT_CHARGED} No work was done.`);
      return;
    }
    const { headline, detail } = await describeErrorResponse(response);
    // Failed or timed-out work is never settled, and every check before payment refuses for free.
    showProblem(headline, detail, `${NOT_CHARGED} The payment was not settled; the signed authorisation was not used.`);
  } finally {
    state.busy = false;
    updatePayButtons();
  }
}

// ---- The result --------------------------------------------------------------------------

async function showResult(quote: Quote, response: Response): Promise<void> {
  let receipt: SettleResponse | undefined;
  try {
    receipt = quoteClient.getPaymentSettleResponse((name) => response.headers.get(name));
  } catch {
    receipt = undefined;
  }
  const mediaType = (response.headers.get('content-type') ?? 'application/octet-stream').split(';')[0].trim();
  const blob = await response.blob();
  if (state.resultUrl) URL.revokeObjectURL(state.resultUrl);
  state.resultUrl = URL.createObjectURL(blob);
  const fileName = `${quote.operation.name.replace(/\//g, '-')}-result.${EXTENSIONS[mediaType] ?? 'bin'}`;
  const kb = blob.size < 1024 ? `${blob.size} bytes` : `${(blob.size / 1024).toFixed(1)} KB`;

  const view: Array<HTMLElement | undefined> = [];
  if (mediaType.startsWith('image/')) {
    view.push(element('img', { src: state.resultUrl, alt: `The result image (${mediaType})`, class: 'result-image', id: 'result-image' }));
  } else if (mediaType === 'application/json' || mediaType === 'text/markdown' || mediaType.startsWith('text/')) {
    let text = await blob.text();
    if (mediaType === 'application/json') {
      try { text = JSON.stringify(JSON.parse(text), null, 2); } catch { /* shown as sent */ }
    }
    view.push(element('pre', { id: 'result-text', tabindex: '0', 'aria-label': `The result (${mediaType})` }, text));
  }

  const paid = quote.paymentRequired.accepts.find((a) => a.network === receipt?.network) ?? quote.paymentRequired.accepts.find((a) => isEvm(a.network));
  byId('result').replaceChildren(
    element('p', {}, element('a', { href: state.resultUrl, download: fileName, id: 'result-download' }, `Download ${fileName}`), ` (${mediaType}, ${kb})`),
    ...present(...view),
    receipt ? element('p', { class: 'receipt' },
      `Paid ${paid ? `${formatUsdc(paid.amount)} USDC ` : ''}on ${networkName(receipt.network)}. Transaction: `,
      element('code', { id: 'receipt-transaction' }, receipt.transaction),
      receipt.payer ? ` from ${receipt.payer}` : '', '.') : element('p', {}, 'The service sent no receipt.'),
  );
  const section = byId('result-section');
  section.hidden = false;
  byId('result-heading').focus();
}

// ---- Start -------------------------------------------------------------------------------

async function loadMode(): Promise<void> {
  const note = byId('wallet-note');
  note.textContent = window.ethereum
    ? 'A browser wallet was found. Paying asks it to sign a USDC authorisation; the service settles it only if the job succeeds.'
    : 'No browser wallet was found. To pay on Base, use a browser with a wallet extension.';
  try {
    const health = await fetch('/v1/health').then((r) => r.json()) as { payments?: { mode?: string } };
    if (health.payments?.mode !== 'dev') return;
    const response = await fetch('/dev/payer');
    if (!response.ok) return;
    state.devPayer = await response.json() as DevPayer;
    const mode = byId('mode');
    mode.hidden = false;
    mode.textContent = `Dev mode: payments go to a local test chain, no real money moves. The demo payer ${shortAddress(state.devPayer.address)} holds ${formatUsdc(state.devPayer.balance)} test USDC and can pay without a wallet.`;
    if (!window.ethereum) note.textContent += ' In dev mode the demo payer can pay instead.';
  } catch {
    // Without the mode the page still pays with a wallet.
  } finally {
    updatePayButtons();
  }
}

byId('pay-wallet').addEventListener('click', () => void pay('wallet'));
byId('pay-demo').addEventListener('click', () => void pay('demo'));
byId<HTMLFormElement>('job').addEventListener('submit', (event) => event.preventDefault());
void loadOperations();
void loadMode();
