// Runs the service. With PAYMENTS=dev (the default) it also runs a local Base chain and a local
// Solana chain, each with its own facilitator, and prints how to make a paid call at once.
import { createServer } from '../server/index.js';
import { ConfigError } from '../server/config.js';
import { operations } from '../operations/index.js';

async function main() {
  let service;
  try {
    service = await createServer();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  await service.server.start();
  const { app } = service;
  const base = app.config.baseUrl;
  app.logger.info({ url: service.server.info.uri, operations: operations.length, workers: app.config.workers, payments: app.config.payments }, 'listening');
  if (app.config.payments === 'dev') {
    const { evm, svm } = app.rigs;
    const lines = [
      '',
      `paydoc is running at ${base} with LOCAL TEST CHAINS (PAYMENTS=dev): no real money moves.`,
      `  web page: ${base}/ (try any operation in a browser; in dev mode it pays with the demo payer, no wallet needed)`,
      `  API description: ${base}/openapi.json    catalog: ${base}/v1/discovery    MCP: ${base}/mcp`,
    ];
    if (evm) {
      lines.push(
        '',
        `Base (eip155:8453) local chain: RPC ${evm.rpcUrl}, facilitator ${evm.facilitatorUrl}`,
        `  demo payer ${evm.payerAddress} holds test USDC; its key (dev only): ${evm.payerKey}`,
        '  pay for a resize with the bundled x402 client:',
        `    PAYER_KEY=${evm.payerKey} node dist/bin/pay.js ${base}/v1/image/resize file=@photo.jpg width=800 --out small.jpg`,
        '  or through a payment channel (one deposit, then a voucher per call: no transaction, no wait for a block):',
        `    PAYER_KEY=${evm.payerKey} EVM_RPC_URL=${evm.rpcUrl} node dist/bin/pay.js --deposit 0.05 ${base}/v1/image/resize file=@photo.jpg width=800 --out small.jpg`,
        `    PAYER_KEY=${evm.payerKey} EVM_RPC_URL=${evm.rpcUrl} node dist/bin/pay.js --refund ${base}    (the rest of the deposit back)`,
      );
    }
    if (svm) {
      lines.push(
        '',
        `Solana (${svm.network}) local chain: RPC ${svm.rpcUrl}, facilitator ${svm.facilitatorUrl}`,
        `  demo payer ${svm.payerAddress}; its secret key (dev only): ${svm.payerSecretKey}`,
        `    SVM_PAYER_KEY=${svm.payerSecretKey} SVM_RPC_URL=${svm.rpcUrl} node dist/bin/pay.js --chain solana ${base}/v1/pdf/extract file=@doc.pdf --out text.json`,
      );
    }
    lines.push('', 'Stop with Ctrl-C; the local chains stop with the service.', '');
    console.log(lines.join('\n'));
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'stopping: finishing in-flight jobs');
    await service.stop({ timeout: 300_000 });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error('paydoc failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
