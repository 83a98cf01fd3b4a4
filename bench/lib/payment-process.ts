// The local Base chain and its facilitator in a process of their own, as a deployed service
// meets them: the facilitator is another party's server, reached over HTTP. Started by the
// throughput benchmark with fork(); it sends the rig's public facts once, then serves until
// told to stop (or until its parent goes away).
import { startEvmRig } from '../../devchains/index.js';

export interface PaymentProcessReady {
  kind: 'ready';
  facilitatorUrl: string;
  rpcUrl: string;
  payTo: string;
  payerKey: string;
  network: string;
  asset: string;
}

const rig = await startEvmRig();
const ready: PaymentProcessReady = {
  kind: 'ready', facilitatorUrl: rig.facilitatorUrl, rpcUrl: rig.rpcUrl, payTo: rig.payTo, payerKey: rig.payerKey, network: rig.network, asset: rig.asset,
};
process.send!(ready);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await rig.stop();
  process.exit(0);
};
process.on('message', (message: { kind?: string }) => { if (message.kind === 'stop') void stop(); });
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());
