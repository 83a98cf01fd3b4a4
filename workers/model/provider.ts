// The model provider: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama,
// LiteLLM). One client per job, built from the job's settings; retries are ours, not the SDK's,
// so every wait is bounded by the job's deadline. Nothing sent or received is ever logged.
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { fail, ServiceError } from '../../core/errors.js';
import { timeLeft, type Job, type WorkerSettings } from '../../core/job.js';

/** Used when the deployment sets a model and a key but no base URL: OpenAI itself. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

const MAX_ATTEMPTS = 5;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/**
 * The provider is configured when a model is named and there is somewhere to send it: a base URL
 * (local servers often need no key) or an API key (OpenAI's default URL).
 */
export function providerConfigured(settings: Pick<WorkerSettings, 'modelName' | 'modelBaseUrl' | 'modelApiKey'>): boolean {
  return Boolean(settings.modelName && (settings.modelBaseUrl || settings.modelApiKey));
}

export interface Provider {
  client: OpenAI;
  model: string;
}

export function createProvider(settings: WorkerSettings): Provider {
  if (!providerConfigured(settings)) fail('PROVIDER_DISABLED');
  const client = new OpenAI({
    baseURL: settings.modelBaseUrl || OPENAI_BASE_URL,
    // The SDK insists on a key; servers that need none (Ollama, a local vLLM) ignore this one.
    apiKey: settings.modelApiKey || 'not-needed',
    maxRetries: 0,
    // The job's AbortSignal is the real limit; this only has to be longer than any job.
    timeout: 30 * 60_000,
    logLevel: 'off',
  });
  return { client, model: settings.modelName as string };
}

function retryable(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return false;
  // Dropped connections and refused sockets are as transient as a 503.
  if (err instanceof APIConnectionError) return true;
  if (err instanceof APIError && typeof err.status === 'number') return err.status === 429 || err.status >= 500;
  return false;
}

/** The provider's own hint (Retry-After in seconds or retry-after-ms), when it gives one. */
function suggestedDelayMs(err: unknown): number | undefined {
  // instanceof leaves APIError's type parameters `any`; its headers are a Headers or undefined.
  const headers = err instanceof APIError ? (err as APIError).headers : undefined;
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const seconds = Number(headers.get('retry-after'));
  if (Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
  return undefined;
}

function backoffMs(attempt: number, err: unknown): number {
  const hinted = suggestedDelayMs(err);
  if (hinted !== undefined) return Math.min(hinted, MAX_BACKOFF_MS * 4);
  const base = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));
  // Jitter keeps concurrent page requests from retrying in lockstep.
  return base / 2 + Math.random() * (base / 2);
}

function describe(err: unknown): string {
  if (err instanceof APIError && typeof err.status === 'number') return `status ${err.status}`;
  if (err instanceof APIConnectionError) return 'no connection';
  return 'an unexpected answer';
}

/** PROVIDER_FAILED that remembers the provider's status, so callers can tell a refused request apart. */
export class ProviderFailure extends ServiceError {
  constructor(message: string, readonly providerStatus: number | undefined) {
    super('PROVIDER_FAILED', message);
  }
}

function providerStatus(err: unknown): number | undefined {
  return err instanceof APIError && typeof err.status === 'number' ? err.status : undefined;
}

function timedOut(): never {
  fail('JOB_TIMEOUT', 'the model provider did not answer within the job time limit; nothing was charged');
}

/**
 * Runs one provider call with retries on 429, 5xx and dropped connections, each attempt and each
 * wait bounded by the job's deadline. `cancel` stops everything early (a sibling request failed).
 */
export async function withRetries<T>(
  input: Pick<Job, 'deadline'>,
  cancel: AbortSignal | undefined,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const deadline = AbortSignal.timeout(timeLeft(input));
    const signal = cancel ? AbortSignal.any([deadline, cancel]) : deadline;
    try {
      return await call(signal);
    } catch (err) {
      if (cancel?.aborted) throw cancel.reason ?? err;
      if (deadline.aborted || err instanceof APIConnectionTimeoutError) timedOut();
      if (err instanceof ServiceError) throw err;
      if (!retryable(err) || attempt >= MAX_ATTEMPTS) {
        throw new ProviderFailure(
          `the model provider failed (${describe(err)} after ${attempt} attempt${attempt === 1 ? '' : 's'}); nothing was charged`,
          providerStatus(err),
        );
      }
      const wait = backoffMs(attempt, err);
      if (wait >= timeLeft(input)) {
        throw new ProviderFailure(`the model provider failed (${describe(err)}) and there is no time left to retry; nothing was charged`, providerStatus(err));
      }
      try {
        await sleep(wait, undefined, cancel ? { signal: cancel } : undefined);
      } catch {
        throw cancel?.reason ?? err;
      }
    }
  }
}

export type ChatRequest = Omit<ChatCompletionCreateParamsNonStreaming, 'model'>;

/** One chat completion (with retries); returns the assistant's text. */
export async function complete(
  provider: Provider,
  input: Pick<Job, 'deadline'>,
  request: ChatRequest,
  cancel?: AbortSignal,
): Promise<{ content: string; finishReason: string | undefined }> {
  const completion: ChatCompletion = await withRetries(input, cancel, (signal) =>
    provider.client.chat.completions.create({ ...request, model: provider.model, stream: false }, { signal }));
  const choice = completion.choices?.[0];
  if (!choice || !choice.message) fail('PROVIDER_FAILED', 'the model provider answered without a message; nothing was charged');
  if (choice.message.refusal) fail('PROVIDER_FAILED', 'the model refused the request; nothing was charged');
  return { content: choice.message.content ?? '', finishReason: choice.finish_reason ?? undefined };
}
