// What the derived documents (catalog, OpenAPI, 402 resources) may read of the running
// service: a few settings and the chains offered, nothing else of the app.
import type { Config } from '../config.js';
import type { ChainConfig } from '../payment/gate.js';

export interface PublicView {
  config: Pick<Config, 'baseUrl' | 'urlInputs' | 'resultLinkTtlS' | 'ocrEngine' | 'ocrLanguages' | 'markdownOcr' | 'tablesEngine' | 'modelBaseUrl' | 'modelApiKey'>;
  gate: { chains: readonly ChainConfig[] };
}
