// Every setting comes from an environment variable, validated at boot. The configuration table in
// docs/configuration.md lists the same names, defaults and meanings (test/docs-configuration.test.ts).
import convict from 'convict';
import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MODEL_DPI, type WorkerSettings } from '../core/job.js';
import { TESSERACT } from '../tools/engines/tesseract.js';

// The channel contract's bounds on a channel's withdrawal delay (15 minutes to 30 days).
export const MIN_WITHDRAW_DELAY_S = 900;
export const MAX_WITHDRAW_DELAY_S = 30 * 86400;

const schema = {
  port: { doc: 'TCP port to listen on.', format: 'port', default: 8080, env: 'PORT' },
  host: { doc: 'Address to listen on.', format: String, default: '0.0.0.0', env: 'HOST' },
  baseUrl: { doc: 'Public base URL used in 402 resources, OpenAPI and the catalog (default http://localhost:PORT).', format: String, default: '', env: 'BASE_URL' },
  workers: { doc: 'Worker threads in the processing pool (default: number of cores).', format: 'nat', default: 0, env: 'WORKERS' },
  queueMax: { doc: 'Jobs allowed to wait for a worker; beyond it requests get 503 with Retry-After.', format: 'nat', default: 32, env: 'QUEUE_MAX' },
  uploadTimeoutMs: { doc: 'How long a request body may take to arrive, in milliseconds; a slower upload is answered 408 and its connection closed.', format: 'nat', default: 120000, env: 'UPLOAD_TIMEOUT_MS' },
  jobTimeoutMs: { doc: 'Upper bound on any job deadline in milliseconds (operations may have shorter ones).', format: 'nat', default: 240000, env: 'JOB_TIMEOUT_MS' },
  tmpDir: { doc: 'RAM-backed directory for per-job private directories (replicas may share it: what a killed process left is removed once older than any request can last).', format: String, default: '/dev/shm/paydoc', env: 'TMP_DIR' },
  logLevel: { doc: 'pino log level.', format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', env: 'LOG_LEVEL' },
  maxZipBytes: { doc: 'Largest ZIP a job may produce, in bytes.', format: 'nat', default: 512 * 1024 * 1024, env: 'MAX_ZIP_BYTES' },
  urlInputs: { doc: 'on: a URL may be given wherever a file is taken (file_url, {url}) and results pushed to deliver_to; off: both answer 422 naming this setting.', format: ['on', 'off'], default: 'on', env: 'URL_INPUTS' },
  urlFetchTimeoutMs: { doc: 'Deadline for one fetch of a buyer\'s URL (an input, or a push to deliver_to), redirects included, in milliseconds.', format: 'nat', default: 20000, env: 'URL_FETCH_TIMEOUT_MS' },
  urlFetchAllow: { doc: 'Comma-separated host:port list exempt from the address rule, where plain http is allowed too (tests on loopback, private deployments).', format: String, default: '', env: 'URL_FETCH_ALLOW' },
  mcpInlineMaxBytes: { doc: 'Largest result an MCP tool call returns inline (before base64); a larger one is answered 413 RESULT_TOO_LARGE, uncharged: ask for delivery=link.', format: 'nat', default: 100 * 1024 * 1024, env: 'MCP_INLINE_MAX_BYTES' },
  resultLinkTtlS: { doc: 'How long a result link (delivery=link) can be downloaded, in seconds; it works once.', format: 'nat', default: 600, env: 'RESULT_LINK_TTL_S' },
  corsOrigins: { doc: 'Comma-separated allowed CORS origins, or * (no credentials are ever used).', format: String, default: '*', env: 'CORS_ORIGINS' },

  payments: { doc: 'dev: start a local chain and facilitators; live: use the configured facilitators.', format: ['dev', 'live'], default: 'dev', env: 'PAYMENTS' },
  evmNetwork: { doc: 'CAIP-2 id of the EVM chain.', format: String, default: 'eip155:8453', env: 'EVM_NETWORK' },
  evmPayTo: { doc: 'Address that receives USDC on the EVM chain (dev: a local-chain account).', format: String, default: '', env: 'EVM_PAY_TO' },
  evmAsset: { doc: 'Token contract on the EVM chain (empty: the network\'s USDC from x402\'s own table, e.g. Base and Base Sepolia).', format: String, default: '', env: 'EVM_ASSET' },
  evmFacilitatorUrl: { doc: 'Facilitator for the EVM chain (live mode; empty: Coinbase\'s CDP facilitator when the CDP key is set, otherwise chain not offered).', format: String, default: '', env: 'EVM_FACILITATOR_URL' },
  evmFacilitatorAuth: { doc: 'One fixed Authorization header value sent to the EVM facilitator, if it needs one (not with the CDP key).', format: String, default: '', env: 'EVM_FACILITATOR_AUTH', sensitive: true },
  cdpApiKeyId: { doc: 'CDP API key id: the EVM facilitator calls carry a fresh JWT signed with the CDP key (live mode).', format: String, default: '', env: 'CDP_API_KEY_ID', sensitive: true },
  cdpApiKeySecret: { doc: 'CDP API key secret: Ed25519 (base64) or ES256 (PEM); never logged.', format: String, default: '', env: 'CDP_API_KEY_SECRET', sensitive: true },
  evmRpcUrl: { doc: 'EVM JSON-RPC the service reads a payment\'s authorization from (USDC\'s authorizationState), when the retry of a held result can no longer be settled: charged, it is delivered; expired unspent, the buyer is told to pay again (live mode; empty: the chain\'s public RPC, https://mainnet.base.org on Base). Dev mode uses the local chain.', format: String, default: '', env: 'EVM_RPC_URL' },
  svmNetwork: { doc: 'CAIP-2 id of the Solana chain.', format: String, default: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', env: 'SVM_NETWORK' },
  svmPayTo: { doc: 'Owner address that receives USDC on Solana (dev: a local account).', format: String, default: '', env: 'SVM_PAY_TO' },
  svmAsset: { doc: 'Token mint on Solana (empty: the network\'s USDC from x402\'s own table, mainnet or devnet).', format: String, default: '', env: 'SVM_ASSET' },
  svmFacilitatorUrl: { doc: 'Facilitator for Solana (live mode; empty: PayAI\'s facilitator when the PayAI key is set, otherwise chain not offered).', format: String, default: '', env: 'SVM_FACILITATOR_URL' },
  svmFacilitatorAuth: { doc: 'One fixed Authorization header value sent to the Solana facilitator, if it needs one (not with the PayAI key).', format: String, default: '', env: 'SVM_FACILITATOR_AUTH', sensitive: true },
  payaiApiKeyId: { doc: 'PayAI API key id: the Solana facilitator calls carry a JWT signed with the PayAI key (live mode; beyond PayAI\'s free tier).', format: String, default: '', env: 'PAYAI_API_KEY_ID', sensitive: true },
  payaiApiKeySecret: { doc: 'PayAI API key secret: Ed25519 PKCS#8, base64, with or without payai_sk_; never logged.', format: String, default: '', env: 'PAYAI_API_KEY_SECRET', sensitive: true },
  svmRpcUrl: { doc: 'Solana RPC the web page reads the mint and a recent blockhash from, through the service, to pay with a Solana wallet, and that the service reads a held result\'s payment from when its retry cannot be confirmed by the facilitator (the payer\'s recent transactions) (live mode; empty: the page has no Solana path, and the network\'s public RPC is read). Dev mode uses the local chain.', format: String, default: '', env: 'SVM_RPC_URL' },
  devChains: { doc: 'Chains the dev rig starts: evm, svm or both (comma-separated).', format: String, default: 'evm,svm', env: 'DEV_CHAINS' },
  facilitatorTimeoutMs: { doc: 'How long a facilitator call (verify, settle) may take, in milliseconds; a settlement past it counts as unconfirmed.', format: 'nat', default: 30000, env: 'FACILITATOR_TIMEOUT_MS' },
  replicaUrl: { doc: 'This replica\'s address as the other replicas reach it (e.g. http://10.0.0.5:8080), recorded in the shared store (REDIS_URL) with the results it holds: a retry or a result link download reaching another replica is passed on to it (empty: the others answer 503 until the load balancer sends it here).', format: String, default: '', env: 'REPLICA_URL' },
  redisUrl: { doc: 'Redis for the payment guards and payment channels shared by replicas (empty: in-process guards, channels in CHANNEL_STORE_DIR).', format: String, default: '', env: 'REDIS_URL' },
  batchReceiverAuthorizerKey: { doc: 'Private key (0x and 64 hex digits) that signs the claims and refunds of payment channels (batch-settlement on the EVM chain); its address is the channels\' receiverAuthorizer. Empty: channels are not offered (dev: the local chain\'s key).', format: String, default: '', env: 'BATCH_RECEIVER_AUTHORIZER_KEY', sensitive: true },
  batchWithdrawDelayS: { doc: 'The withdrawal delay of the channels this service opens, in seconds (900 to 2592000): how long a buyer\'s timed withdrawal waits, during which unclaimed vouchers are claimed.', format: 'nat', default: 86400, env: 'BATCH_WITHDRAW_DELAY_S' },
  batchClaimIntervalS: { doc: 'How often charged channel vouchers are claimed on the chain, in seconds (at most a third of BATCH_WITHDRAW_DELAY_S).', format: 'nat', default: 60, env: 'BATCH_CLAIM_INTERVAL_S' },
  batchSettleIntervalS: { doc: 'How often claimed channel funds are swept to EVM_PAY_TO, in seconds.', format: 'nat', default: 300, env: 'BATCH_SETTLE_INTERVAL_S' },
  batchIdleRefundS: { doc: 'A channel without a paid call for this long gets its unspent deposit back, in seconds (0: never).', format: 'nat', default: 604800, env: 'BATCH_IDLE_REFUND_S' },
  channelStoreDir: { doc: 'Folder of the embedded channel store (one process; every charged voucher is flushed to it before the answer). Required for channels in live mode without REDIS_URL; dev: a fresh folder per run, as the local chain is new.', format: String, default: '', env: 'CHANNEL_STORE_DIR' },

  modelBaseUrl: { doc: 'OpenAI-compatible API base URL (with MODEL_API_KEY alone, OpenAI itself; with neither, the four model endpoints answer 503).', format: String, default: '', env: 'MODEL_BASE_URL' },
  modelApiKey: { doc: 'API key for the model provider.', format: String, default: '', env: 'MODEL_API_KEY', sensitive: true },
  modelName: { doc: 'Model name, e.g. gpt-4o-mini.', format: String, default: 'gpt-4o-mini', env: 'MODEL_NAME' },
  modelConcurrency: { doc: 'Concurrent provider requests per job.', format: 'nat', default: 4, env: 'MODEL_CONCURRENCY' },
  modelDpi: { doc: 'Resolution at which PDF pages are rendered for the model (72 to 300).', format: 'nat', default: 150, env: 'MODEL_DPI' },
  ocrEngine: { doc: 'OCR engine: model (the provider) or tesseract (local; files never leave the server).', format: ['model', 'tesseract'], default: 'model', env: 'OCR_ENGINE' },
  ocrLanguages: { doc: 'tesseract languages, joined with + (e.g. eng+deu).', format: String, default: 'eng', env: 'OCR_LANGUAGES' },
  markdownOcr: { doc: 'Scanned pages in /v1/pdf/markdown: tesseract (read locally), off (a note per page), or auto (tesseract when the engine is installed, else off).', format: ['auto', 'tesseract', 'off'], default: 'auto', env: 'MARKDOWN_OCR' },
  tablesEngine: { doc: 'Tables engine for /v1/pdf/tables: model (the provider) or local (the layout engine of /v1/pdf/markdown, on the PDF\'s text layer; files never leave the server).', format: ['model', 'local'], default: 'model', env: 'TABLES_ENGINE' },
} as const;

/** The environment variables the service reads (docs/configuration.md's table lists them all). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.values(schema).map((s) => s.env);

/** Each environment variable with its default in the schema (docs/configuration.md's table gives the same). */
export const ENVIRONMENT_DEFAULTS: ReadonlyMap<string, string | number> = new Map(Object.values(schema).map((s) => [s.env, s.default]));

type SettingType<S> = S extends { format: readonly (infer Choice)[] } ? Choice
  : S extends { format: 'port' | 'nat' } ? number : string;

/**
 * The validated configuration: one property per setting of the schema, typed by its format.
 * MARKDOWN_OCR=auto is resolved by loadConfig, so the rest of the service sees what it does.
 */
export type Config = { -readonly [K in keyof typeof schema]: SettingType<(typeof schema)[K]> } & { markdownOcr: 'tesseract' | 'off' };

/** Whether a program is installed on this machine's PATH. */
export function installed(name: string): boolean {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    try {
      accessSync(path.join(dir || '.', name), constants.X_OK);
      return true;
    } catch { /* keep looking */ }
  }
  return false;
}

export class ConfigError extends Error {}

/** Reads and validates the configuration; overrides win over the environment (tests use them). */
export function loadConfig(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const conf = convict(schema as never, { env: env as Record<string, string> } as never);
  conf.load(overrides as never);
  try {
    conf.validate({ allowed: 'strict' });
  } catch (err) {
    // convict names the setting; add the environment variable so the message is actionable.
    const message = (err as Error).message.replace(/^(\w+): /gm, (_m, key: string) => {
      const envName = (schema as Record<string, { env?: string }>)[key]?.env;
      return envName ? `${envName} (${key}): ` : `${key}: `;
    });
    throw new ConfigError(`invalid configuration: ${message}`);
  }
  const config = conf.getProperties() as unknown as Config;
  // The engine's presence is the machine's, not the environment's: PATH of this process decides.
  if ((config.markdownOcr as string) === 'auto') config.markdownOcr = installed(TESSERACT.commands[0]) ? 'tesseract' : 'off';
  if (config.workers === 0) config.workers = Math.max(1, os.availableParallelism());
  if (!config.baseUrl) config.baseUrl = `http://localhost:${config.port}`;
  config.baseUrl = config.baseUrl.replace(/\/+$/, '');
  if (config.replicaUrl) {
    const replica = URL.canParse(config.replicaUrl) ? new URL(config.replicaUrl) : undefined;
    if (!replica || !['http:', 'https:'].includes(replica.protocol) || replica.username || replica.password || replica.pathname !== '/' || replica.search || replica.hash) {
      throw new ConfigError('invalid configuration: REPLICA_URL (replicaUrl): must be an http or https origin, such as http://10.0.0.5:8080 (no path, no credentials)');
    }
    config.replicaUrl = replica.origin;
  }
  if (config.batchReceiverAuthorizerKey && !/^0x[0-9a-fA-F]{64}$/.test(config.batchReceiverAuthorizerKey)) {
    throw new ConfigError('invalid configuration: BATCH_RECEIVER_AUTHORIZER_KEY (batchReceiverAuthorizerKey): must be a private key, 0x and 64 hex digits');
  }
  if (config.batchWithdrawDelayS < MIN_WITHDRAW_DELAY_S || config.batchWithdrawDelayS > MAX_WITHDRAW_DELAY_S) {
    throw new ConfigError(`invalid configuration: BATCH_WITHDRAW_DELAY_S (batchWithdrawDelayS): must be between ${MIN_WITHDRAW_DELAY_S} and ${MAX_WITHDRAW_DELAY_S} (the channel contract's bounds)`);
  }
  // A buyer's timed withdrawal ends after the delay; vouchers must be claimed before, with room for a failed attempt or two.
  if (config.batchClaimIntervalS < 1 || config.batchClaimIntervalS * 3 > config.batchWithdrawDelayS) {
    throw new ConfigError('invalid configuration: BATCH_CLAIM_INTERVAL_S (batchClaimIntervalS): must be at least 1 and at most a third of BATCH_WITHDRAW_DELAY_S, so vouchers are claimed before a withdrawal can complete');
  }
  if (config.batchSettleIntervalS < 1) throw new ConfigError('invalid configuration: BATCH_SETTLE_INTERVAL_S (batchSettleIntervalS): must be at least 1');
  if (config.payments === 'live' && config.batchReceiverAuthorizerKey && !config.redisUrl && !config.channelStoreDir) {
    throw new ConfigError('invalid configuration: CHANNEL_STORE_DIR (channelStoreDir): payment channels (BATCH_RECEIVER_AUTHORIZER_KEY) need a durable store: a folder that outlives the process, or REDIS_URL');
  }
  if (config.modelConcurrency < 1) throw new ConfigError('invalid configuration: MODEL_CONCURRENCY (modelConcurrency): must be at least 1');
  if (config.modelDpi < MODEL_DPI.min || config.modelDpi > MODEL_DPI.max) {
    throw new ConfigError(`invalid configuration: MODEL_DPI (modelDpi): must be between ${MODEL_DPI.min} and ${MODEL_DPI.max}`);
  }
  // The hosted facilitators' keys matter only in live mode: `npm start` (dev) settles locally and
  // ignores them, as an environment may hold the standard CDP variables for other tools.
  if (config.payments === 'live') {
    const cdp = keyPair(config.cdpApiKeyId, config.cdpApiKeySecret, 'CDP_API_KEY_ID', 'CDP_API_KEY_SECRET');
    const payai = keyPair(config.payaiApiKeyId, config.payaiApiKeySecret, 'PAYAI_API_KEY_ID', 'PAYAI_API_KEY_SECRET');
    if (cdp && config.evmFacilitatorAuth) {
      throw new ConfigError('invalid configuration: EVM_FACILITATOR_AUTH cannot be combined with CDP_API_KEY_ID and CDP_API_KEY_SECRET: the CDP key signs a fresh Authorization for every facilitator call; unset one of them');
    }
    if (payai && config.svmFacilitatorAuth) {
      throw new ConfigError('invalid configuration: SVM_FACILITATOR_AUTH cannot be combined with PAYAI_API_KEY_ID and PAYAI_API_KEY_SECRET: the PayAI key signs the Authorization of every facilitator call; unset one of them');
    }
    if (config.evmRpcUrl && !/^https?:\/\/[^/]/.test(config.evmRpcUrl)) throw new ConfigError('invalid configuration: EVM_RPC_URL (evmRpcUrl): must be an http or https URL');
    const evm = Boolean(config.evmFacilitatorUrl) || cdp;
    const svm = Boolean(config.svmFacilitatorUrl) || payai;
    if (!evm && !svm) {
      throw new ConfigError('invalid configuration: PAYMENTS=live needs EVM_FACILITATOR_URL or SVM_FACILITATOR_URL, or the CDP_API_KEY_* or PAYAI_API_KEY_* keys of a hosted facilitator (at least one chain must be offered)');
    }
    if (evm && !config.evmPayTo) throw new ConfigError(`invalid configuration: EVM_PAY_TO (evmPayTo): required when ${config.evmFacilitatorUrl ? 'EVM_FACILITATOR_URL' : 'the CDP key'} is set`);
    if (svm && !config.svmPayTo) throw new ConfigError(`invalid configuration: SVM_PAY_TO (svmPayTo): required when ${config.svmFacilitatorUrl ? 'SVM_FACILITATOR_URL' : 'the PayAI key'} is set`);
  }
  return config;
}

/** CORS_ORIGINS as a list: "*" or exact origins. */
export function corsOriginList(config: Pick<Config, 'corsOrigins'>): string[] {
  return config.corsOrigins.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Whether a hosted facilitator's key is set; half a key is a configuration error, not "no key". */
function keyPair(id: string, secret: string, idName: string, secretName: string): boolean {
  if (Boolean(id) !== Boolean(secret)) {
    throw new ConfigError(`invalid configuration: ${id ? secretName : idName} is missing: ${idName} and ${secretName} are set together or not at all`);
  }
  return Boolean(id);
}

/** The settings the pool's threads need, given to each thread once. */
export function workerSettings(config: Config): WorkerSettings {
  return {
    ...(config.modelBaseUrl ? { modelBaseUrl: config.modelBaseUrl } : {}),
    ...(config.modelApiKey ? { modelApiKey: config.modelApiKey } : {}),
    modelName: config.modelName,
    modelConcurrency: config.modelConcurrency,
    modelDpi: config.modelDpi,
    ocrEngine: config.ocrEngine,
    ocrLanguages: config.ocrLanguages,
    markdownOcr: config.markdownOcr,
    tablesEngine: config.tablesEngine,
    maxZipBytes: config.maxZipBytes,
  };
}
