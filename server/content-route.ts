// Where an operation's file content goes on this deployment. Each operation declares its route
// (`content` in operations/define.ts); this resolves it against the settings, and everything that
// says or enforces where content goes reads the resolution: the 503 before payment when no
// provider is configured, the catalog's thirdParty and scannedPages, the descriptions, the MCP
// tools' openWorldHint, /llms.txt and the engines the boot check requires.
import type { ContentRoute, LocalEngineSetting } from '../operations/define.js';
import { ServiceError } from '../core/errors.js';
import type { EngineCommand } from '../tools/engines/index.js';
import { TESSERACT } from '../tools/engines/tesseract.js';
import type { Config } from './config.js';

type EngineSettings = Pick<Config, 'ocrEngine' | 'ocrLanguages' | 'markdownOcr' | 'tablesEngine'>;
export type ContentSettings = EngineSettings & Pick<Config, 'modelBaseUrl' | 'modelApiKey'>;

export interface LocalEngine {
  /** Whether the configuration chooses this engine. */
  chosen(config: EngineSettings): boolean;
  /** The engine as the catalog and OpenAPI name it. */
  named(config: EngineSettings): Record<string, unknown>;
  /** For an engine that stands in for the provider: where the content is read, as a clause of the operation's description. */
  readsHere?: string;
  /** The programs it runs, which the boot check then requires. */
  commands?: readonly EngineCommand[];
}

const namedTesseract = (config: EngineSettings) => ({ engine: 'tesseract (local)', languages: config.ocrLanguages.split('+') });

const LOCAL_ENGINES: Record<LocalEngineSetting, LocalEngine> = {
  'OCR_ENGINE=tesseract': {
    chosen: (config) => config.ocrEngine === 'tesseract',
    named: namedTesseract,
    readsHere: 'OCR runs on this server (tesseract)',
    commands: TESSERACT.commands,
  },
  'TABLES_ENGINE=local': {
    chosen: (config) => config.tablesEngine === 'local',
    named: () => ({ engine: 'paydoc layout engine (local: tables read from the PDF\'s text layer and drawn rules, as for /v1/pdf/markdown)' }),
    readsHere: 'the tables are read on this server by its own layout engine, from the PDF\'s text layer (pages without one yield no tables)',
  },
  // MARKDOWN_OCR=auto is resolved to tesseract or off by loadConfig.
  'MARKDOWN_OCR=tesseract': {
    chosen: (config) => config.markdownOcr === 'tesseract',
    named: namedTesseract,
    commands: TESSERACT.commands,
  },
};

/** An operation's content route, resolved against this deployment's settings. */
export interface ContentResolution {
  /** Declared for the model provider, whether or not a local engine takes its place here. */
  forProvider: boolean;
  /** The file content is sent to the third-party provider on this deployment. */
  sendsContent: boolean;
  /** The operation can run here: it needs no provider, or one is configured. */
  available: boolean;
  /** The local engine that reads the content in the provider's place, when the settings choose it. */
  localEngine?: LocalEngine;
  /** For an operation that can read pages without a text layer: the engine that does here, if any. */
  scans?: { engine?: LocalEngine };
}

/** A key alone means OpenAI itself; a base URL alone means a keyless OpenAI-compatible server. */
function providerConfigured(config: ContentSettings): boolean {
  return config.modelBaseUrl !== '' || config.modelApiKey !== '';
}

function chosenEngine(setting: LocalEngineSetting | undefined, config: EngineSettings): LocalEngine | undefined {
  const engine = setting === undefined ? undefined : LOCAL_ENGINES[setting];
  return engine?.chosen(config) ? engine : undefined;
}

export function resolveContent(config: ContentSettings, op: { content: ContentRoute }): ContentResolution {
  const route = op.content;
  if ('local' in route) {
    return {
      forProvider: false, sendsContent: false, available: true,
      ...(route.scansReadWhen ? { scans: { engine: chosenEngine(route.scansReadWhen, config) } } : {}),
    };
  }
  const localEngine = chosenEngine(route.localWhen, config);
  if (localEngine) return { forProvider: true, sendsContent: false, available: true, localEngine };
  return { forProvider: true, sendsContent: true, available: providerConfigured(config) };
}

/** Refuses, before any payment, an operation that needs the model provider where none is configured. */
export function requireProvider(config: ContentSettings, op: { path: string; content: ContentRoute }): void {
  if (!resolveContent(config, op).available) {
    throw new ServiceError('PROVIDER_DISABLED', `${op.path} is not enabled on this deployment: the model provider is not configured (MODEL_BASE_URL)`, { retryAfterSeconds: 3600 });
  }
}

/** The commands of the local engines the settings choose for these operations (the boot check requires them). */
export function localEngines(config: ContentSettings, ops: readonly { content: ContentRoute }[]): EngineCommand[] {
  const commands = ops.flatMap((op) => {
    const { localEngine, scans } = resolveContent(config, op);
    return [...localEngine?.commands ?? [], ...scans?.engine?.commands ?? []];
  });
  return [...new Set(commands)];
}
