// JSON answers from the model: asked for with a JSON Schema response format, always checked with
// ajv afterwards (non-strict servers and strict: false only take the schema as a hint), and asked
// again once, with the reason, when the answer is not JSON or does not match.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { fail } from '../../core/errors.js';
import type { Job } from '../../core/job.js';
import { complete, ProviderFailure, type ChatRequest, type Provider } from './provider.js';

export interface JsonRequest {
  messages: ChatCompletionMessageParam[];
  /** Letters, digits, _ and - (OpenAI's rule for response-format names). */
  schemaName: string;
  schema: Record<string, unknown>;
  strict: boolean;
  validate: ValidateFunction;
}

const ATTEMPTS = 2;

/** Models on non-strict servers like to wrap JSON in a Markdown fence. */
export function stripFence(text: string): string {
  const fenced = /^\s*```[\w-]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return fenced ? (fenced[1] as string) : text.trim();
}

function explain(errors: ErrorObject[] | null | undefined): string {
  const list = (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  return list.join('; ') || 'it does not match the schema';
}

type Parsed = { ok: true; value: unknown } | { ok: false; reason: string };

function parseAndCheck(content: string, validate: ValidateFunction): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(stripFence(content));
  } catch {
    return { ok: false, reason: 'it is not valid JSON' };
  }
  if (!validate(value)) return { ok: false, reason: `it does not match the schema: ${explain(validate.errors)}` };
  return { ok: true, value };
}

function strictRefused(err: unknown): boolean {
  return err instanceof ProviderFailure && err.providerStatus === 400;
}

/** One JSON value that passes `validate`, or PROVIDER_FAILED after a second invalid answer. */
export async function completeJson(
  provider: Provider,
  input: Pick<Job, 'deadline'>,
  request: JsonRequest,
  cancel?: AbortSignal,
): Promise<unknown> {
  let strict = request.strict;
  const messages = [...request.messages];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const chat: ChatRequest = {
      messages,
      response_format: { type: 'json_schema', json_schema: { name: request.schemaName, schema: request.schema, strict } },
    };
    let content: string;
    let finishReason: string | undefined;
    try {
      ({ content, finishReason } = await complete(provider, input, chat, cancel));
    } catch (err) {
      // Providers differ in which keywords strict mode takes; the same schema as a hint is the fallback.
      if (strict && strictRefused(err)) {
        strict = false;
        attempt--;
        continue;
      }
      throw err;
    }
    const parsed = parseAndCheck(content, request.validate);
    if (parsed.ok) return parsed.value;
    if (attempt === ATTEMPTS) {
      const cut = finishReason === 'length' ? ' (the answer was cut off at the output limit)' : '';
      fail('PROVIDER_FAILED', `the model did not return JSON matching the schema after ${ATTEMPTS} attempts${cut}; nothing was charged`);
    }
    messages.push(
      { role: 'assistant', content },
      { role: 'user', content: `That reply cannot be used: ${parsed.reason}. Reply again with only the JSON object, matching the schema exactly.` },
    );
  }
  fail('INTERNAL');
}
