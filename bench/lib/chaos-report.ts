// The report's section for bench/chaos.ts (three replicas behind HAProxy under faults), written
// from bench/results/chaos.json only, so that a rebuilt report says what the last run measured.

type Json = any;

const pct = (part: number, whole: number) => (whole ? `${Math.round((part / whole) * 1000) / 10} %` : '–');

function table(headers: string[], rows: Array<Array<string | number>>): string[] {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

const checkNames: Record<string, string> = {
  noPaymentSettledTwice: 'payments settled twice: 0',
  noResultWithoutPayment: 'results without a payment on the chain: 0',
  noPaymentBoughtTwoResults: 'payments that bought two results: 0',
  noChargeWithoutResultExceptSigkill: 'charges without a delivered or held result, apart from those lost to the SIGKILL: 0',
  noCallChargedTwice: 'calls charged twice: 0',
  no402ForSpentPayment: 'a 402 for a payment already spent on the chain: never',
  noUndocumented5xx: '5xx other than the documented ones: 0',
  chainsAgree: 'transfers, balances and charged payments agree on both chains',
  killedReplicaLeftNothing: 'no process of the killed replica left running',
};

export function chaosHeadline(c: Json): string {
  const p = c.payments;
  const failed = Object.entries(c.checks as Record<string, boolean>).filter(([, ok]) => !ok).map(([k]) => checkNames[k] ?? k);
  return `Three replicas behind HAProxy, ${c.requests} paid calls at concurrency ${c.concurrency} on both chains with a replica SIGKILLed, Redis restarted empty and the facilitator slowed: `
    + `${p.charged} payments charged on the chains, ${p.deliveredThroughLoadBalancer} results delivered, ${p.settledTwice} settled twice, ${p.resultsWithoutPayment} results without payment, `
    + `${p.chargedAndHeldWhenClientGaveUp} results still held when their clients stopped retrying, ${p.chargedWithoutResultCutBySigkill} charges lost to the SIGKILL, ${p.chargedWithoutResultOther} other charges without a result, ${p.answered402WhileSpent} 402s for spent payments, ${c.answers.other5xx} undocumented 5xx`
    + (failed.length ? ` (checks failed: ${failed.join('; ')}).` : ' (every check met).');
}

export function chaosSection(c: Json): string[] {
  const L: string[] = [];
  const p = c.payments;
  const h = c.heldResults;
  L.push('## Replicas behind HAProxy under faults', '');
  L.push(c.method, '');
  if (c.machine) L.push(`Measured ${String(c.measured).slice(0, 16).replace('T', ' ')} UTC on ${c.machine.cpus} cores (${c.machine.cpuModel}), shared with other work: load average ${(c.machine.loadAverageAtStart as number[]).join(', ')} at the start (1, 5, 15 min). Every service process, HAProxy, Redis, both chains with their facilitators and the clients ran on these cores.`, '');
  L.push(`Parts: ${c.versions.haproxy.split(' - ')[0]}, ${c.versions.redis.split(' ').slice(0, 3).join(' ')}, anvil, LiteSVM, @x402/fetch. ${c.calls.total} calls in ${c.seconds} s; latency of the calls that got their result: p50 ${c.calls.latencyMsOfDelivered.p50} ms, p90 ${c.calls.latencyMsOfDelivered.p90} ms, p99 ${c.calls.latencyMsOfDelivered.p99} ms (retries included).`, '');
  L.push('What happened when (seconds from the start, calls finished):', '');
  L.push(...table(['s', 'Calls done', 'Event'], c.events.map((e: Json) => [(e.at / 1000).toFixed(1), e.completed, `${e.what}${e.detail ? `: ${e.detail}` : ''}`])), '');

  L.push('### Checks', '');
  for (const [name, ok] of Object.entries(c.checks as Record<string, boolean>)) L.push(`- ${ok ? 'met' : '**FAILED**'}: ${checkNames[name] ?? name}`);
  L.push('');

  L.push('### Payments against the chains', '');
  const b = p.byChain.base, s = p.byChain.solana;
  L.push(...table(['', 'Base', 'Solana', 'Both'], [
    ['Calls', b.calls, s.calls, c.calls.total],
    ['Payments signed', b.signed, s.signed, p.signed],
    ['Transfers on the chain', c.chains.base.transfers, c.chains.solana.transfers, c.chains.base.transfers + c.chains.solana.transfers],
    ['Payments charged (a transfer for the payment\'s id)', b.charged, s.charged, p.charged],
    ['Results delivered through the load balancer', b.deliveredThroughLoadBalancer, s.deliveredThroughLoadBalancer, p.deliveredThroughLoadBalancer],
    ['Results held (a 503 SETTLEMENT_UNCONFIRMED from the replica holding it)', b.held, s.held, h.held],
    ['Held results collected by the client\'s retries through the load balancer', b.heldCollectedThroughLoadBalancer, s.heldCollectedThroughLoadBalancer, h.collectedThroughLoadBalancer],
    ['Charged, result still held for a retry when the client stopped retrying (its last answer 503 SETTLEMENT_UNCONFIRMED)', b.chargedAndHeldWhenClientGaveUp, s.chargedAndHeldWhenClientGaveUp, p.chargedAndHeldWhenClientGaveUp],
    ['Charged, last answer through the load balancer another one, result collected afterwards by asking each replica directly', b.collectedDirectlyAfterOtherAnswers, s.collectedDirectlyAfterOtherAnswers, p.collectedDirectlyAfterOtherAnswers],
    ['Charged, no result: reply cut by the SIGKILL, or held by the killed replica', b.chargedWithoutResultCutBySigkill, s.chargedWithoutResultCutBySigkill, p.chargedWithoutResultCutBySigkill],
    ['Charged, no result delivered or held, not lost to the SIGKILL (must be 0)', b.chargedWithoutResultOther, s.chargedWithoutResultOther, p.chargedWithoutResultOther],
    ['402 answered for a payment spent on the chain (must be 0)', b.answered402WhileSpent, s.answered402WhileSpent, p.answered402WhileSpent],
    ['Payments settled twice (must be 0)', '', '', p.settledTwice],
    ['Results without payment (must be 0)', '', '', p.resultsWithoutPayment],
    ['USDC moved (atomic units): payer paid / payee received / sum of charged payments', `${c.chains.base.payerPaidAtomic} / ${c.chains.base.payToReceivedAtomic} / ${c.chains.base.chargedPaymentsAtomic}`, `${c.chains.solana.payerPaidAtomic} / ${c.chains.solana.payToReceivedAtomic} / ${c.chains.solana.chargedPaymentsAtomic}`, ''],
  ]), '');
  if (p.reconciliation) {
    const { transfers, chargedPaymentsAccountedFor, ...fates } = p.reconciliation as Record<string, number>;
    L.push(`Every transfer accounted for: ${transfers} transfers on the chains, ${chargedPaymentsAccountedFor} charged payments: ${Object.entries(fates).map(([k, n]) => `${k} ${n}`).join(', ')}.`, '');
  }
  if (Object.keys(p.chargedWithoutResultLastToldByKind ?? {}).length) {
    L.push('Charged without a result through the load balancer, by the last answer the client got there:', '');
    for (const [kind, n] of Object.entries(p.chargedWithoutResultLastToldByKind as Record<string, number>)) L.push(`- ${kind}: ${n}`);
    L.push('');
  }
  if (Object.keys(p.heldAskedDirectlyAfterwards ?? {}).length) {
    L.push(`The ${p.chargedAndHeldWhenClientGaveUp} results still held when their clients stopped retrying, asked for directly at each replica after the load (the holder's answer; a real client sees only the load balancer):`, '');
    for (const [kind, n] of Object.entries(p.heldAskedDirectlyAfterwards as Record<string, number>)) L.push(`- ${kind}: ${n}`);
    L.push('');
  }
  if (Object.keys(p.answered402WhileSpentByKind ?? {}).length) {
    L.push('402 answers through the load balancer to payments that were spent on the chain:', '');
    for (const [kind, n] of Object.entries(p.answered402WhileSpentByKind as Record<string, number>)) L.push(`- ${kind}: ${n}`);
    L.push('');
  }

  L.push('### Held results and the retries that collect them', '');
  L.push(`${h.held} results were held after a settlement the replica could not confirm (${h.heldAndCharged} of them charged). `
    + `${h.collectedThroughLoadBalancer} (${pct(h.collectedThroughLoadBalancer, h.held)}) were collected by the client's retries through the load balancer`
    + (h.retriesToCollect.median !== null ? `, after a median ${h.retriesToCollect.median} retries (p90 ${h.retriesToCollect.p90}, at most ${h.retriesToCollect.max})` : '')
    + `; ${h.notCollectedWithinRetries} were not, of which ${h.ofThoseCollectedAfterwardsFromHolder} were still at the replica holding them when it was asked directly. `
    + `Only the replica holding a result can deliver it, and round robin sends a retry there by chance: ${h.retriesThatReachedHolder} of the ${h.retries} retries of held results (${pct(h.retriesThatReachedHolder, h.retries)}) reached the holder. `
    + `Answers to the retries that reached another replica: ${Object.entries(h.answersToRetriesElsewhere as Record<string, number>).map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}.`, '');

  L.push('### Answers through the load balancer', '');
  L.push(...table(['Status and code', 'Answers'], Object.entries(c.answers.byStatus as Record<string, number>).map(([k, n]) => [k, n])), '');
  L.push(`5xx: ${Object.entries(c.answers.fiveXxByCode as Record<string, number>).map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}; ${c.answers.cutBySigkill} answers were cut by the SIGKILL (HAProxy's 502 naming the killed replica, or the connection closed), ${c.answers.other5xx} 5xx were neither a catalog code these faults cause (SETTLEMENT_UNCONFIRMED, GUARD_UNAVAILABLE, QUEUE_FULL) nor such a cut.`, '');

  const f = c.facilitator;
  L.push(`The facilitators (through the proxy) answered ${f.settles} settlements, ${f.slowed} of them slowed; ${f.settlesUnheard} answers came after the replica had stopped waiting (${f.settlesUnheardSucceeded} of those were transfers that happened). Settle answers: ${Object.entries(f.settleAnswers as Record<string, number>).map(([k, n]) => `${k} ×${n}`).join(', ')}. Verify refusals: ${Object.entries(f.verifyRefusals as Record<string, number>).map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}.`, '');
  const leftDirs = Object.entries(c.replicas.jobDirsLeft as Record<string, number>).filter(([, n]) => n > 0);
  L.push(`HAProxy: ${(c.haproxy.servers as Json[]).map((sv) => `${sv.name} ${sv.sessions} sessions, ${sv.responses5xx} 5xx, down ${sv.downtimeS} s`).join('; ')}; ${c.haproxy.backend.redispatches} requests redispatched to another replica after a refused connection. `
    + `The killed replica had ${c.replicas.killedProcessTree} processes (itself and its tool launchers); ${c.replicas.leftAliveAfterKill} outlived it. `
    + (leftDirs.length ? `Job directories left in TMP_DIR at the end: ${leftDirs.map(([r, n]) => `${r} ${n}`).join(', ')} (a SIGKILLed replica cannot remove its jobs' files, and the restarted process does not clear them).` : 'No job directory was left in any replica\'s TMP_DIR.'), '');
  return L;
}
