// Turns the results of a benchmark run into bench/REPORT.md and the SVG charts in bench/charts/.
// Steps that did not run in this invocation are shown from their last saved results, dated.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT, type Machine } from './lib/common.js';
import { barChart, scatterChart } from './lib/svg.js';
import { chaosHeadline, chaosSection } from './lib/chaos-report.js';
import { STYLE_SETS_PROTOCOL } from './markdown/pages.js';

export interface StepRecord {
  name: string;
  title: string;
  status: 'ok' | 'failed' | 'timeout' | 'missing' | 'skipped';
  seconds: number;
  detail?: string;
  /** When the step was run (ISO time), for reports that combine runs. */
  measured?: string;
}

export interface ReportInput {
  quick: boolean;
  outDir: string;
  resultsDir: string;
  fullResultsDir: string;
  records: StepRecord[];
  began: Date;
  loadAtStart: number[];
  loadAtEnd: number[];
  machine: Machine;
  wallSeconds: number;
  partial: boolean;
  /** Steps re-run later with --only, merged into the report of the last whole run. */
  rerun?: { steps: string[]; at: string };
}

type Json = any;

const f1 = (v: number | undefined | null) => (v === undefined || v === null || !Number.isFinite(v) ? '–' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const x = (v: number | undefined | null) => (v === undefined || v === null || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`);
const pct = (r: number | undefined | null) => (r === undefined || r === null || !Number.isFinite(r) ? '–' : `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(0)} %`);
const loadText = (l: number[]) => l.map((v) => v.toFixed(2)).join(', ');

/** Transactions by kind: `deposit ×1, claim ×6`. */
function kinds(byKind: Record<string, number>): string {
  return Object.entries(byKind).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';
}

function table(headers: string[], rows: Array<Array<string | number>>, align?: string[]): string[] {
  return [`| ${headers.join(' | ')} |`, `|${headers.map((_, i) => align?.[i] ?? '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

export async function buildReport(input: ReportInput): Promise<string> {
  const { quick, outDir, resultsDir, fullResultsDir, records } = input;
  const chartsDir = path.join(outDir, 'charts');
  await mkdir(chartsDir, { recursive: true });
  const ranNow = new Set(records.filter((r) => r.status === 'ok' || r.status === 'failed').map((r) => r.name));
  const when = (iso: string) => iso.slice(0, 16).replace('T', ' ');
  const provenance: string[] = [];
  /** This run's result, else the last saved full result (dated in the report). */
  const load = (name: string, step: string): Json | undefined => {
    for (const dir of [resultsDir, fullResultsDir]) {
      const file = path.join(dir, name);
      if (!existsSync(file)) continue;
      try {
        const data = JSON.parse(readFileSync(file, 'utf8'));
        if (!ranNow.has(step) || dir !== resultsDir) {
          provenance.push(`${step}: from ${path.relative(ROOT, file)}, measured ${data.measured ?? data.generated ?? 'at an unknown time'}`);
        }
        return data;
      } catch { /* unreadable: treated as absent */ }
    }
    return undefined;
  };
  /** A hand-written note kept in bench/notes/ (what no results file holds), without its leading comment. */
  const note = (name: string): string[] => {
    const file = path.join(ROOT, 'bench/notes', name);
    return existsSync(file) ? [readFileSync(file, 'utf8').replace(/^<!--[\s\S]*?-->\n/, '').trim(), ''] : [];
  };
  const chart = async (name: string, svg: string) => {
    await writeFile(path.join(chartsDir, name), `${svg}\n`);
    return `charts/${name}`;
  };

  const L: string[] = [];
  L.push(`# paydoc benchmarks${quick ? ' (quick subset)' : ''}`, '');
  L.push(`Measured ${when(input.began.toISOString())} UTC with \`npm run bench${quick ? ' -- --quick' : ''}\` in ${Math.round(input.wallSeconds / 60)} min`
    + `${input.rerun && input.partial ? `; re-run on ${when(input.rerun.at)} UTC with --only: ${input.rerun.steps.join(', ')}` : ''}.`, '');
  L.push(`**All absolute times are this machine's**: ${input.machine.cpus} cores (${input.machine.cpuModel}), ${input.machine.memoryGiB} GiB, Node ${input.machine.node}. `
    + `The machine was **shared with other work** during the run: load average ${loadText(input.loadAtStart)} at the start and ${loadText(input.loadAtEnd)} at the end (1, 5, 15 min), `
    + 'so absolute times are inflated and noisy. Every comparison was therefore measured side by side in the same run, alternating the two sides after a warm-up; '
    + 'read the ratios rather than the milliseconds. Medians are reported with the p95 or the interquartile range (IQR) as the spread.', '');
  L.push('| Step | Status | Time | Run at (UTC) |', '|---|---|---|---|');
  for (const r of records) L.push(`| ${r.title} | ${r.status}${r.detail ? `: ${r.detail.replace(/\|/g, '/')}` : ''} | ${r.seconds} s | ${r.measured ? when(r.measured) : ''} |`);
  L.push('');

  const ops = load('operations.json', 'operations');
  const pay = load('payment.json', 'payment');
  const channels = load('payment-channels.json', 'payment-channels');
  const thr = load('throughput.json', 'throughput');
  const mem = load('memory.json', 'memory');
  const comp = load('pdf-compress.json', 'pdf-compress');
  const md = load('markdown.json', 'markdown');
  const mdScanned = load('markdown-scanned.json', 'markdown-scanned');
  // Cell F1 of the tables: from the whole run when it has them, else from a run on a subset of the pages.
  const mdSubset = md?.tableCells ? undefined : load('markdown-subset.json', 'markdown (subset)');
  const cellRun: Json = md?.tableCells ? md : mdSubset;
  const fromMd = load('from-markdown.json', 'from-markdown');
  const ocr = load('ocr.json', 'ocr');
  const searchable = load('searchable.json', 'searchable');
  const chaos = load('chaos.json', 'chaos');
  // Measured once by hand (an install is not repeatable in a benchmark run); the image by the image test.
  const libreoffice = load('libreoffice-install.json', 'libreoffice-install');
  const image = load('image.json', 'image');
  const blocks = load('blocks.json', 'blocks');

  // ---- Headlines --------------------------------------------------------------------------
  const headlines: string[] = [];
  const resize = ops?.operations?.find((o: Json) => o.id === 'image.resize');
  if (resize) {
    headlines.push(`12 MP JPEG → 1024 px WebP, whole paid call vs sharp alone: median ${f1(resize.a.ms.median)} ms vs ${f1(resize.b.ms.median)} ms (${pct(resize.ratio)}), p95 ${pct(resize.p95Ratio)}; `
      + `without the payment round trips (the paid request minus verify and settle) ${pct(resize.processingRatio)} (target ≤ +10 %: ${resize.processingRatio <= 1.1 ? 'met' : 'missed'}).`);
  }
  if (ops?.summary) {
    const long = ops.summary.longDocument;
    headlines.push(`Across ${ops.summary.operations} rows (every operation once, and a second case of some), the whole paid call takes a median ${x(ops.summary.medianRatio)} the raw tool's time, and ${x(ops.summary.medianProcessingRatio)} without the payment path (target ≤ 1.15×)`
      + (long?.operations ? `; on a 117-page document the ${long.operations} qpdf and poppler operations take a median ${x(long.medianProcessingRatio)} (at most ${x(long.maxProcessingRatio)}).` : '.')
      + (ops.summary.medianFloorRatio !== undefined ? ` A bare HTTP route that does no work, called the same way with the same files, already takes a median ${x(ops.summary.medianFloorRatio)} the raw time; beyond that floor the service adds a median ${f1(ops.summary.medianBeyondFloorMs)} ms per call.` : ''));
  }
  const quoteCmp = pay?.comparisons?.[0];
  if (quoteCmp) {
    const base = pay.comparisons.find((c: Json) => c.name.includes('base'));
    headlines.push(`Payment path: the 402 quote takes ${f1(quoteCmp.a.ms.median)} ms (p95 ${f1(quoteCmp.a.ms.p95)}) on a tiny image; verify + settle through the local facilitator add ${f1(base?.a.parts.verifyMs.median)} + ${f1(base?.a.parts.settleMs.median)} ms on the local Base chain.`);
  }
  if (channels) {
    const [exactInstant, exactSlow] = channels.calls.also;
    const many = channels.manyCalls;
    const channelSlow = (channels.channelCalls ?? channels.calls).a;
    headlines.push(`On a chain mining a block every ${channels.blockTimeMs / 1000} s, a tiny paid call through a payment channel takes ${f1(channelSlow.ms.median)} ms, `
      + `${x(channels.channelRatio)} the same call on an instant chain (target ≤ ${x(channels.channelRatioTarget)}: ${channels.channelRatio <= channels.channelRatioTarget ? 'met' : 'missed'}); `
      + `through exact it takes ${f1(exactSlow.ms.median)} ms against ${f1(exactInstant.ms.median)} ms (${x(channels.exactRatio)}). `
      + `${many.made.toLocaleString('en-US')} calls through one channel made ${many.transactions.total} transactions: ${kinds(many.transactions.byKind)}.`);
  }
  const c8 = thr?.levels?.find((l: Json) => l.concurrency === 8);
  if (c8) {
    headlines.push(`Throughput at concurrency 8: ${f1(c8.servicePerSecond.median)} paid calls/s vs ${f1(c8.rawPerSecond.median)} raw sharp calls/s (${x(c8.ratio)}; target ≥ 0.90×: ${c8.ratio >= 0.9 ? 'met' : 'missed'}). `
      + `CPU per paid call: ${c8.cpuMsPerCall.service} ms in the service process (${x(c8.serviceCpuRatio)} raw sharp's ${c8.cpuMsPerCall.raw} ms), ${c8.cpuMsPerCall.clients} ms in the paying clients and ${c8.cpuMsPerCall.payments} ms in the facilitator and chain, all on the same 2 cores.`);
  }
  if (mem) headlines.push(`Peak memory under eight concurrent 50 MB uploads: ${mem.peakServicePlusToolsMB} MB for the service process and its tools (target < 1536 MB: ${mem.withinTarget ? 'met' : 'missed'}).`);
  const mdBest = md?.overall ? Object.entries(md.overall as Record<string, Json>).sort((a, b) => b[1].overall - a[1].overall) : undefined;
  if (mdBest?.length) headlines.push(`PDF to Markdown overall score (mean of NID, TEDS, MHS): ${mdBest.map(([id, s]) => `${id} ${s.overall.toFixed(3)}`).join(', ')}.`);
  const scannedRows = mdScanned?.overall ? Object.entries(mdScanned.overall as Record<string, Json>) : [];
  const scanRow = scannedRows.find(([id]) => id.includes('scan'))?.[1], textRow = scannedRows.find(([id]) => !id.includes('scan'))?.[1];
  if (scanRow && textRow) {
    headlines.push(`PDF to Markdown on 200 dpi scans (${scanRow.pages} pages): word recall ${scanRow.recall.toFixed(3)} (target ≥ 0.95: ${scanRow.recall >= 0.95 ? 'met' : 'missed'}; ${textRow.recall.toFixed(3)} from the text layer of the same pages), `
      + `${f1(scanRow.cpuSecondsPerPage * 1000)} ms of CPU per scanned page against ${f1(textRow.cpuSecondsPerPage * 1000)} ms per text-layer page (target ≤ 30 ms: ${textRow.cpuSecondsPerPage <= 0.03 ? 'met' : 'missed'}).`);
  }
  const cells = cellRun?.tableCells;
  if (cells?.targetEngine && cells.overall?.[cells.targetEngine]) {
    const byStyle = Object.entries(cells.targets as Record<string, number>).map(([style, target]) => {
      const f1 = cells.byStyle[style]?.[cells.targetEngine]?.f1 as number | undefined;
      return `${style} ${f1 === undefined ? '–' : f1.toFixed(2)} (target ${target.toFixed(2)}: ${f1 !== undefined && f1 >= target ? 'met' : 'missed'})`;
    });
    headlines.push(`Tables without a model (TABLES_ENGINE=local), cell F1 against the ground-truth tables${cellRun.subset ? ` (on ${cellRun.pages} of the ${cellRun.subset.of} pages)` : ''}: ${cells.overall[cells.targetEngine].f1.toFixed(3)} over all styles; ${byStyle.join(', ')}.`);
  }
  if (chaos) headlines.push(chaosHeadline(chaos));
  if (headlines.length) L.push('## Headline figures', '', ...headlines.map((h) => `- ${h}`), '');

  // ---- Operations -------------------------------------------------------------------------
  if (ops) {
    L.push('## Every operation: paid call vs the raw tool', '');
    L.push(ops.method, '');
    const opRows = (rows: Json[]) => table(
      ['Operation', 'Input', 'Service median (p95) ms', 'Raw median (p95) ms', 'Ratio', 'Without payment ms (ratio)', 'Work in pool ms', 'HTTP floor ms (best ratio)', 'Beyond floor ms', 'Payment path ms', 'Raw side'],
      rows.map((o: Json) => [
        `\`${o.id}\``, o.input, `${f1(o.a.ms.median)} (${f1(o.a.ms.p95)})`, `${f1(o.b.ms.median)} (${f1(o.b.ms.p95)})`, x(o.ratio),
        `${f1(o.a.parts.processingMs?.median)} (${x(o.processingRatio)})`, f1(o.a.parts.workMs?.median),
        o.floorMs ? `${f1(o.floorMs.median)} (${x(o.floorRatio)})` : '–', f1(o.beyondFloorMs), f1(o.paymentMs), o.raw,
      ]),
    );
    const longRows = ops.operations.filter((o: Json) => o.longDocument);
    L.push(...opRows(ops.operations.filter((o: Json) => !o.longDocument)));
    if (longRows.length) {
      L.push('', 'The same operations on a 117-page, 1.8 MB document. On the 4-page file above the tools finish in 10 to 30 ms, so the cost of any HTTP request (the floor column) and the service\'s own fixed cost (the pool hand-off, the job directory) are a large share; on a longer document they are not.', '');
      L.push(...opRows(longRows));
    }
    if (ops.failures?.length) L.push('', `Failed: ${ops.failures.map((f: Json) => `\`${f.id}\` (${f.error})`).join('; ')}.`);
    L.push('', `Pairs per operation: ${[...new Set(ops.operations.map((o: Json) => o.pairs))].join(', ')} (fewer where a side passed 15 s) after ${[...new Set(ops.operations.map((o: Json) => o.warmup))].join(', ')} warm-up(s) each. "Without payment" is the paid request minus the facilitator's verify and settle, i.e. upload, the pre-payment checks (for PDFs answered from the quote's inspection when it is cached), the worker pool, the work and the download. "Work in pool" is the time inside the worker pool, where the work function may do more than the raw command (for example \`pdf.extract\` also runs the scanned-page test, \`pdf.compress\` keeps the smallest of three candidates and checks links and outline). For the four model operations the provider is a local fake that answers at once, so their times are the service's own cost, not a model's. "HTTP floor" is a bare hapi route with the service's multipart settings, called in the same rounds with the same client, files and fields, answering a body of the result's size and type and doing nothing else: its ratio, (raw + floor) / raw, is the best any HTTP service could show on that row here. "Beyond floor" is the service's time without payment minus raw and floor: what the service itself adds; it is negative where the service's work ran faster than the raw command in that run.`, '');
    const charted = ops.operations.filter((o: Json) => !o.longDocument);
    const names = charted.map((o: Json) => o.id);
    const file = await chart('latency-by-operation.svg', barChart({
      title: 'Latency by operation: whole paid call vs raw tool (median, this machine)', unit: 'milliseconds', log: true, categories: names,
      series: [
        { name: 'service, paid call', values: charted.map((o: Json) => o.a.ms.median) },
        { name: 'service without payment path', values: charted.map((o: Json) => o.a.parts.processingMs?.median) },
        { name: 'raw tool', values: charted.map((o: Json) => o.b.ms.median) },
      ],
    }));
    L.push(`![Latency by operation](${file})`, '');
  }

  // ---- Payment ----------------------------------------------------------------------------
  if (pay) {
    L.push('## The payment path', '', pay.method, '');
    L.push(...table(['Measurement', 'Median ms', 'p95 ms', 'IQR ms', 'Runs'], pay.comparisons.flatMap((c: Json) => {
      const rows: Array<Array<string | number>> = [[c.a.label, f1(c.a.ms.median), f1(c.a.ms.p95), f1(c.a.ms.iqr), c.a.ms.n]];
      if (!c.name.includes('vs quote')) rows.push([c.b.label, f1(c.b.ms.median), f1(c.b.ms.p95), f1(c.b.ms.iqr), c.b.ms.n]);
      for (const [part, label] of [['quoteMs', 'quote request'], ['signMs', 'client signing'], ['verifyMs', 'verify (facilitator, in the gate)'], ['workMs', 'work (pool)'], ['settleMs', 'settle (facilitator, in the gate)']] as const) {
        const s = c.a.parts?.[part];
        if (s) rows.push([`— ${label}`, f1(s.median), f1(s.p95), f1(s.iqr), s.n]);
      }
      return rows;
    })));
    L.push('');
    const direct = Object.entries(pay.facilitatorDirect ?? {}) as Array<[string, Json]>;
    if (direct.length) {
      L.push(...table(['Facilitator called directly', 'verify median (p95) ms', 'settle median (p95) ms'], direct.map(([chain, d]) => [chain, `${f1(d.verify.median)} (${f1(d.verify.p95)})`, `${f1(d.settle.median)} (${f1(d.settle.p95)})`])));
      L.push('');
    }
    if (pay.solanaNote) L.push(pay.solanaNote, '');
  }

  // ---- Payment channels -------------------------------------------------------------------
  if (channels) {
    const c = channels.calls;
    L.push('## Payment channels on a chain that mines every 2 s', '', channels.method, '');
    L.push(`Measured ${when(channels.measured)} UTC on its own (\`npm run bench -- --only payment-channels\`), load average ${loadText(channels.machine.loadAverageAtStart)} at its start `
      + `(${channels.machine.cpus} cores shared with other work): the absolute times are inflated; the ratios are of sides measured alternately.`, '');
    // Every channel call of the timed part: the warm-ups and the rounds of both comparisons.
    const channelCallsMade = c.a.ms.n + c.b.ms.n + 2 * c.warmup
      + (channels.channelCalls ? channels.channelCalls.a.ms.n + channels.channelCalls.b.ms.n : 0);
    const perCall = (s: Json, part: string) => (s.parts[part] ? `${s.parts[part].median} (max ${s.parts[part].max})` : '–');
    const sides = [c.b, c.a, ...c.also, ...(channels.channelCalls ? [channels.channelCalls.b, channels.channelCalls.a] : [])];
    L.push(...table(['Paid call (tiny resize)', 'Median ms', 'p95 ms', 'IQR ms', 'Runs', 'Paid request ms', 'verify ms', 'settle ms', 'Facilitator requests', 'Buyer\'s chain requests'],
      sides.map((s: Json) => [
        s.label, f1(s.ms.median), f1(s.ms.p95), f1(s.ms.iqr), s.ms.n, f1(s.parts.paidMs?.median), f1(s.parts.verifyMs?.median),
        f1(s.parts.settleMs?.median), s.parts.facilitatorVerifies ? `${perCall(s, 'facilitatorVerifies')} verify, ${perCall(s, 'facilitatorSettles')} settle` : '–', perCall(s, 'buyerRpcRequests')])));
    L.push('', `A channel call on the 2 s chain takes ${x(channels.channelRatio)} the same call on the instant chain`
    + `${channels.channelCalls ? ` over the ${channels.channelCalls.pairs} pairs of the last two rows (${x(c.ratio)} in the ${c.pairs} four-way rounds)` : ''} (target ≤ ${x(channels.channelRatioTarget)}: `
    + `${channels.channelRatio <= channels.channelRatioTarget ? 'met' : '**missed**'}); exact takes ${x(channels.exactRatio)}. `
    + `verify and settle are the resource server's calls timed inside the gate (for a channel: the voucher checked locally and the channel `
    + `reserved, then the charge recorded). Each update of the channel store (a file written, flushed, renamed and its folder flushed) took a median `
    + `${f1(channels.channelStoreUpdateMs.median)} ms (p95 ${f1(channels.channelStoreUpdateMs.p95)}, ${channels.channelStoreUpdateMs.n} updates, `
    + `${(channels.channelStoreUpdateMs.n / channelCallsMade).toFixed(1)} per channel call: the reservation inside verify, the charge inside settle), `
    + 'on both chains alike: no chain and no facilitator is between a voucher and its answer, the store\'s flushes to the disk are. '
    + `The first call of each channel, with the deposit, took ${channels.firstCall.instant.ms} ms on the instant chain (the process's first paid call, `
    + `its warm-up included) and ${channels.firstCall.slow.ms} ms on the 2 s chain.`, '');
    const many = channels.manyCalls;
    const t = many.transactions;
    L.push(...table(['Calls through one channel', 'Chain', 'Seconds', 'First call (deposit) ms', 'Later calls median (p95, max) ms', 'Later calls over 500 ms',
      'Calls that sent a transaction', 'Transactions on the chain', 'Of them', 'Blocks with a transaction'], [[
      `${many.made.toLocaleString('en-US')}${many.stoppedEarly ? ` of ${many.planned} (time budget)` : ''}`, many.chain, many.seconds, many.firstCallMs,
      `${f1(many.callMs.median)} (${f1(many.callMs.p95)}, ${f1(many.callMs.max)})`, many.slowCalls, many.callsWithTransaction,
      t.total, kinds(t.byKind), `${t.blocksWithTransactions} of ${t.blocks}`,
    ]]));
    L.push('', `Claims every ${channels.claimIntervalS} s and sweeps every ${channels.settleIntervalS} s; the count runs from the block after the channel's payer was funded `
    + `to the chain's head after the service stopped (it claims and sweeps what it is owed), so it includes the claims of the other channel of the run. `
    + `Charged ${(Number(many.chargedAtomic) / 1e6).toFixed(3)} USDC; the merchant received ${(Number(many.merchantGainedAtomic) / 1e6).toFixed(3)} USDC over the same blocks `
    + `(its sweeps include the calls of the table above). Senders: ${Object.entries(t.bySender).map(([k, v]) => `${k} ×${v}`).join(', ')}.`, '');
    const near = many.besideClaims;
    if (near) {
      L.push(`Of the ${near.slowCalls} later calls over 500 ms, ${near.slowNearClaims} overlapped the 4 s before a block holding a claim or a sweep; `
        + `of all ${near.calls} later calls, ${near.callsNearClaims} (${((near.callsNearClaims / near.calls) * 100).toFixed(0)} %) did.`, '');
    }
  }

  // ---- Image resize and throughput --------------------------------------------------------
  if (resize || thr) {
    L.push('## Image resize: overhead and throughput (12 MP JPEG → 1024 px WebP)', '');
    if (resize) {
      L.push(...table(['', 'Median ms', 'p95 ms', 'Overhead at the median', 'Overhead at p95'], [
        ['raw sharp', f1(resize.b.ms.median), f1(resize.b.ms.p95), '', ''],
        ['whole paid call', f1(resize.a.ms.median), f1(resize.a.ms.p95), pct(resize.ratio), pct(resize.p95Ratio)],
        ['paid request without verify and settle', f1(resize.a.parts.processingMs.median), f1(resize.a.parts.processingMs.p95), pct(resize.processingRatio), pct(resize.a.parts.processingMs.p95 / resize.b.ms.p95)],
        ['work inside the pool', f1(resize.a.parts.workMs.median), f1(resize.a.parts.workMs.p95), pct(resize.a.parts.workMs.median / resize.b.ms.median), ''],
      ]));
      L.push('');
    }
    if (thr) {
      L.push(thr.method, '');
      L.push(...table(['Concurrency', 'Service paid calls/s (IQR)', 'Raw sharp calls/s (IQR)', 'Service / raw', 'CPU ms per paid call: service / clients / facilitator + chain', 'Raw sharp CPU ms per call', 'Service process CPU / raw', 'Service latency median ms', 'Per paid call: verify / work / settle ms'],
        thr.levels.map((l: Json) => [l.concurrency, `${f1(l.servicePerSecond.median)} (${f1(l.servicePerSecond.iqr)})`, `${f1(l.rawPerSecond.median)} (${f1(l.rawPerSecond.iqr)})`, x(l.ratio),
          `${l.cpuMsPerCall.service} / ${l.cpuMsPerCall.clients} / ${l.cpuMsPerCall.payments}`, l.cpuMsPerCall.raw, x(l.serviceCpuRatio), f1(l.serviceLatencyMs.median),
          `${l.serviceStageMsPerCall.verify} / ${l.serviceStageMsPerCall.work} / ${l.serviceStageMsPerCall.settle}`])));
      L.push('', 'CPU milliseconds per call are measured per process (all threads: process.cpuUsage for the service and the clients, /proc for the facilitator and its chain); unlike calls per second they hardly depend on the other work on the machine. All three parties share the same 2 cores with each other here, which a deployment would not.', '');
      if (thr.levels[0]?.serviceThreadsMsPerCall) {
        L.push('The service process\'s CPU per paid call by thread (from /proc, 10 ms clock ticks summed over each batch): the main thread takes both uploads (the quote\'s and the paid retry\'s), checks them, calls the facilitator twice and sends the result; the other threads do the image work (libvips and sharp spread it over their own and libuv\'s threads), the pool\'s JavaScript and V8\'s garbage collection. Raw sharp does the same image work on the same kinds of threads.', '');
        L.push(...table(['Concurrency', 'Main thread ms', 'Other threads ms', 'Raw sharp ms (whole call)'],
          thr.levels.map((l: Json) => [l.concurrency, l.serviceThreadsMsPerCall.mainThread, l.serviceThreadsMsPerCall.otherThreads, l.cpuMsPerCall.raw])), '');
      }
      const file = await chart('throughput.svg', barChart({
        title: 'Throughput, 12 MP JPEG → 1024 px WebP (calls per second, this machine)', unit: 'calls per second',
        categories: thr.levels.map((l: Json) => `concurrency ${l.concurrency}`),
        series: [
          { name: 'service, paid calls', values: thr.levels.map((l: Json) => l.servicePerSecond.median) },
          { name: 'raw sharp', values: thr.levels.map((l: Json) => l.rawPerSecond.median) },
        ],
      }));
      L.push(`![Throughput](${file})`, '');
    }
  }

  // ---- Memory -----------------------------------------------------------------------------
  if (mem) {
    L.push('## Memory under eight concurrent 50 MB uploads', '', mem.method, '');
    L.push(...table(['Phase', 'Answers', 'Seconds', 'Peak service + tools MB', 'Service process MB', 'Tools MB'],
      mem.phases.map((p: Json) => [p.name, `${p.answered}${p.errors?.length ? ` (${p.errors.join('; ').replace(/\|/g, '/').slice(0, 160)})` : ''}`, p.seconds, p.peakServicePlusToolsMB, p.peakServiceProcessMB, p.peakToolsMB])));
    L.push('', `Peak: **${mem.peakServicePlusToolsMB} MB** (target < ${mem.targetMB} MB: ${mem.withinTarget ? 'met' : '**missed**'}); the service process's own high-water mark (VmHWM) was ${mem.serviceProcessVmHWMMB} MB; idle it used ${mem.idle.serviceMB} MB. The local chain used up to ${mem.chainPeakMB} MB on top (development only).`, '');
  }

  // ---- PDF compression --------------------------------------------------------------------
  L.push('## PDF compression', '');
  if (comp) L.push(...compressionSection(comp, await chartFor(chart, comp)));
  else L.push('No results: bench/pdf-compress.ts has not produced bench/results/pdf-compress.json yet.', '');

  // ---- Markdown ---------------------------------------------------------------------------
  L.push('## PDF to Markdown, with peers', '');
  const quickMd = path.join(resultsDir, 'markdown-quick-output.txt');
  if (quick && ranNow.has('markdown') && existsSync(quickMd)) {
    L.push('Quick run (a few pages, one style); its table as printed:', '', '```', readFileSync(quickMd, 'utf8').trim().slice(-4000), '```', '');
  }
  if (md?.overall) {
    const engines = Object.entries(md.overall as Record<string, Json>);
    L.push(`${md.pages} ground-truth pages, ${md.styles?.length ?? '?'} rendering style(s). ${md.metrics ?? ''}`, '');
    L.push(...table(['Engine', 'Overall', 'NID', 'TEDS', 'MHS', 'ms per page (this machine)'],
      engines.map(([id, s]) => [id, f1(s.overall), f1(s.scores.nid), f1(s.scores.teds), f1(s.scores.mhs), f1(s.secondsPerPage * 1000)])));
    const file = await chart('markdown-scores.svg', barChart({
      title: 'PDF to Markdown scores by engine (higher is better)', unit: 'score (0 to 1)', categories: engines.map(([id]) => id),
      series: [
        { name: 'overall', values: engines.map(([, s]) => s.overall) },
        { name: 'NID (text)', values: engines.map(([, s]) => s.scores.nid ?? undefined) },
        { name: 'TEDS (tables)', values: engines.map(([, s]) => s.scores.teds ?? undefined) },
        { name: 'MHS (headings)', values: engines.map(([, s]) => s.scores.mhs ?? undefined) },
      ],
    }));
    L.push('', `![Markdown scores](${file})`, '', 'Per-style tables: [results/markdown.md](results/markdown.md).', '');
    if (typeof md.setsMarkdown === 'string') {
      L.push('### Tuning, held-out and unseen styles', '', `${STYLE_SETS_PROTOCOL} Cell F1 is that of the local tables engine.`, '', md.setsMarkdown, '');
      L.push(...note('held-out-styles.md'));
    }
  } else if (!quick) L.push('No results.', '');
  if (cellRun?.tableCells?.byStyle) L.push(...cellSection(cellRun));

  // ---- Markdown on scanned pages ------------------------------------------------------------
  if (mdScanned?.overall) {
    L.push('## PDF to Markdown on scanned pages', '');
    L.push(`${mdScanned.pages} ground-truth pages in ${mdScanned.styles?.length ?? '?'} style(s) (${(mdScanned.styles ?? []).map((s: Json) => s.id).join(', ')}), each page also as a 200 dpi scan. ${mdScanned.method ?? ''}`, '');
    L.push(...table(['Input', 'Word recall', 'Pages ≥ 0.95', 'Overall', 'NID', 'TEDS', 'MHS', 'ms/page CPU', 'ms/page wall'],
      Object.entries(mdScanned.overall as Record<string, Json>).map(([id, s]) => [id, s.recall.toFixed(4), `${s.pagesAtLeast95} of ${s.pages}`, f1(s.overall), f1(s.scores.nid), f1(s.scores.teds), f1(s.scores.mhs),
        s.cpuSecondsPerPage === null ? '–' : f1(s.cpuSecondsPerPage * 1000), f1(s.secondsPerPage * 1000)])));
    L.push('', 'Per-style tables: [results/markdown-scanned.md](results/markdown-scanned.md).', '');
  }

  // ---- Blocks beside the Markdown ---------------------------------------------------------------
  if (blocks?.summary) {
    const s = blocks.summary;
    const f3 = (v: number | null) => (v === null ? '–' : v.toFixed(3));
    L.push('## PDF blocks (/v1/pdf/blocks) beside the Markdown', '', `${blocks.pages} pages (${blocks.styles.length} styles). ${blocks.method}`, '');
    L.push(...table(['Scored', 'NID', 'TEDS', 'MHS', 'Text NID', 'Word recall', 'ms/page CPU (own process)'], [
      ['/v1/pdf/markdown', f3(s.markdown.nid), f3(s.markdown.teds), f3(s.markdown.mhs), f3(s.textNid.markdown), f3(s.wordRecall.markdown), f1(s.cpuMsPerPage.markdown)],
      ['/v1/pdf/blocks, blocks in order', f3(s.blocksMarkdown.nid), f3(s.blocksMarkdown.teds), f3(s.blocksMarkdown.mhs), f3(s.textNid.blocks), f3(s.wordRecall.blocks), f1(s.cpuMsPerPage.blocks)],
    ]));
    L.push('', `The blocks' Markdown scores exactly as the Markdown on ${s.pagesWithTheSameMarkdownScores} of ${blocks.pages} pages. Text NID and word recall compare plain text: the blocks' \`text\` joined, and the Markdown rendered to text.`, '');
  }

  // ---- Markdown to PDF --------------------------------------------------------------------
  if (fromMd?.sizes) {
    L.push('## Markdown to PDF: WeasyPrint (the service) vs Chromium', '', fromMd.note ?? '', '');
    L.push(...table(['Document', 'WeasyPrint median s (pages)', 'Chromium median s (pages)', 'WeasyPrint CPU s', 'PDF bytes WeasyPrint / Chromium'],
      fromMd.sizes.map((s: Json) => [`~${s.targetPages} pages`, `${s.weasyprint.medianWallSeconds} (${s.weasyprint.pages})`, s.chromium ? `${s.chromium.medianWallSeconds} (${s.chromium.pages})` : 'not installed',
        s.weasyprint.cpuSeconds, `${s.weasyprint.bytes} / ${s.chromium?.bytes ?? '–'}`])));
    L.push('');
  }
  if (fromMd?.hostile) {
    // Each shape at the largest size the pre-payment check accepts: the worst a paid call can cost.
    const largest = (shape: Json) =>
      (shape.sizes as Json[]).filter((s) => !s.service.refused).sort((a, b) => b.layoutUnits - a.layoutUnits)[0];
    const show = (t: Json) => !t ? '–' : t.stoppedAfterSeconds ? `stopped after ${t.stoppedAfterSeconds}` : t.cpuSeconds;
    const served = (t: Json) => !t ? '–' : t.failedAfterCheck ? `${t.cpuSeconds}, then ${t.failedAfterCheck} (uncharged)` : `${t.cpuSeconds} (${t.pages} pages)`;
    L.push('## Hostile Markdown: the slowest input the pre-payment check accepts', '', fromMd.hostileNote ?? '', '');
    L.push(...table(['Shape', 'Largest accepted (bytes)', 'Estimated layout ms', 'Service CPU s (pages)', 'Refused above it', 'Raw WeasyPrint CPU s at 40 KB'],
      (fromMd.hostile as Json[]).map((shape) => {
        const top = largest(shape);
        const refused = (shape.sizes as Json[]).find((s) => s.service.refused);
        const raw40 = (shape.sizes as Json[]).find((s) => s.bytes > 39_000 && s.bytes < 41_000)?.raw;
        return [shape.shape, top?.bytes ?? '–', top?.layoutUnits ?? '–', served(top?.service), refused ? `${refused.bytes} bytes: ${refused.service.refused}` : '–', show(raw40)];
      })));
    L.push('');
  }

  // ---- OCR --------------------------------------------------------------------------------
  if (ocr) {
    L.push('## Local OCR (tesseract)', '', ocr.note ?? '', '');
    L.push(`${ocr.pages} pages: ${ocr.pagesPerSecond} pages/s wall, ${ocr.toolCpuSecondsPerPage} CPU s per page (${ocr.pagesPerSecondPerIdleCore} pages/s per idle core), at ${ocr.dpi} dpi.`, '');
    if (ocr.samples) L.push(...table(['Sample', 'Pages', 'Pages/s', 'CPU s/page', 'Word recall'], ocr.samples.map((s: Json) => [s.kind, s.pages, s.pagesPerSecond, s.toolCpuSecondsPerPage, s.wordRecall])), '');
  }

  if (searchable?.summary) {
    const { summary } = searchable;
    L.push('## Searchable PDFs (OCRmyPDF) beside tesseract', '', searchable.method ?? '', '');
    L.push(...table(['Path', 'Pages', 'CPU s/page', 'Wall s/page', 'Word recall', 'Min recall'], (['ocrmypdf', 'tesseract'] as const).map((side) =>
      [side === 'ocrmypdf' ? 'OCRmyPDF (/v1/pdf/searchable)' : 'tesseract (/v1/pdf/ocr, local)', summary.pages, summary[side].cpuSecondsPerPage.toFixed(2),
        summary[side].wallSecondsPerPage.toFixed(2), summary[side].recall.toFixed(3), summary[side].recallMin.toFixed(3)])), '');
  }

  if (libreoffice) {
    L.push('## What LibreOffice adds (/v1/office/pdf)', '',
      `Its conversion time is the office.pdf row of the operations table above (a fresh profile per job on both sides). Installing it (${libreoffice.how}; measured ${when(libreoffice.measured)}): ${libreoffice.packages} Debian packages, ${libreoffice.downloadMB} MB downloaded, ${libreoffice.unpackAndConfigureSeconds} s to unpack and configure, ${libreoffice.installedKiB.toLocaleString('en-US')} KiB installed by dpkg-query's Installed-Size (${libreoffice.usrGrowthMB} MB more under /usr by du).`
      + (image ? ` The container image with it is ${image.imageMB} MB, paydoc's layer ${image.addedMB} MB (the image test, ${when(image.measured)}).` : ''), '');
  }

  if (chaos) L.push(...chaosSection(chaos));

  const realFiles = load('real-files.json', 'real-files');
  if (realFiles) L.push(...realFilesSection(realFiles), ...note('real-files.md'));

  L.push('## Reproducing', '', '```sh', 'npm run bench                 # the whole suite (15 minutes here on 2 cores shared with other work)', 'npm run bench -- --quick      # a subset in a few minutes, written under bench/quick/',
    'npm run bench -- --only operations,payment   # some steps; the report shows the others from their last results',
    'npm run bench -- --only payment-channels      # channels vs exact on a chain mining every 2 s, 1,000 calls in one channel (about 4 minutes; --quick: 200)',
    'npm run bench -- --only chaos                 # three replicas behind HAProxy under faults (2,000 paid calls, about 10 minutes here; --quick: 200)',
    'REAL_FILES_DIR=DIR npm run bench -- --only real-files   # other projects\' test files (DIR: bench/real-files-corpus.sh)',
    'npm run bench -- --report-only                # rebuild this report and the charts from bench/results', '```', '');
  L.push('Raw results: `bench/results/*.json` (each carries the machine, the load average and the method).', '');
  if (provenance.length) L.push('Results not measured in this invocation:', '', ...provenance.map((p) => `- ${p}`), '');

  const file = path.join(outDir, 'REPORT.md');
  await writeFile(file, L.join('\n'));
  return file;
}

async function chartFor(chart: (name: string, svg: string) => Promise<string>, comp: Json): Promise<string | undefined> {
  const rows: Json[] = Array.isArray(comp.rows) ? comp.rows : Array.isArray(comp.results) ? comp.results : [];
  const sizeKey = ['sizeRatio', 'ratio', 'relativeSize'].find((k) => rows.some((r) => typeof r[k] === 'number'));
  const simKey = ['similarity', 'ssim', 'visualSimilarity', 'psnr'].find((k) => rows.some((r) => typeof r[k] === 'number'));
  if (!sizeKey || !simKey) return undefined;
  const seriesKey = ['tool', 'engine', 'level', 'method'].find((k) => rows.some((r) => typeof r[k] === 'string')) ?? 'tool';
  const labelKey = undefined as string | undefined;
  const similarities = rows.map((r) => r[simKey]).filter((v): v is number => typeof v === 'number');
  return chart('compression-size-vs-similarity.svg', scatterChart({
    title: 'PDF compression: size versus similarity (up and left is better)', xLabel: `output size / input size (${sizeKey})`, yLabel: `${simKey} of the rendered pages`,
    xMin: 0, yMin: Math.floor(Math.min(...similarities) * 20) / 20, yMax: Math.max(1, ...similarities),
    points: rows.filter((r) => typeof r[sizeKey] === 'number' && typeof r[simKey] === 'number')
      .map((r) => ({ x: r[sizeKey], y: r[simKey], series: String(r[seriesKey] ?? 'result'), ...(labelKey && r[labelKey] ? { label: String(r[labelKey]).slice(0, 14) } : {}) })),
  }));
}

function compressionSection(comp: Json, chartFile: string | undefined): string[] {
  const L: string[] = [];
  if (typeof comp.method === 'string') L.push(comp.method, '');
  if (typeof comp.note === 'string') L.push(comp.note, '');
  if (typeof comp.markdown === 'string') L.push(comp.markdown, '');
  else {
    const rows: Json[] = Array.isArray(comp.rows) ? comp.rows : Array.isArray(comp.results) ? comp.results : [];
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => ['string', 'number', 'boolean'].includes(typeof r[k]))))].slice(0, 10);
    if (rows.length && keys.length) {
      const cell = (v: unknown) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : Math.abs(v) < 10 ? v.toFixed(3) : f1(v)) : String(v ?? '–'));
      L.push(...table(keys, rows.map((r) => keys.map((k) => cell(r[k])))), '');
    } else L.push('See bench/results/pdf-compress.json.', '');
  }
  const targets: Json[] = Array.isArray(comp.targets) ? comp.targets : [];
  if (targets.length) {
    const keys = Object.keys(targets[0]);
    L.push('Targets:', '', ...table(keys, targets.map((t) => keys.map((k) => (t[k] === true ? 'met' : t[k] === false ? '**missed**' : String(t[k]))))), '');
  }
  if (chartFile) L.push(`![Compression size versus similarity](${chartFile})`, '');
  return L;
}

/** Cell F1 of every engine's tables, per style, with the local tables engine's targets. */
/** Other projects' test files through the paid service: the counts, then every call that did not answer 200. */
function realFilesSection(run: Json): string[] {
  const s = run.summary;
  const records: Json[] = run.records;
  const final = (r: Json) => r.paidStatus ?? r.quoteStatus;
  const L = ['## Real files nobody here made', '',
    `Measured ${String(run.measured).slice(0, 16).replace('T', ' ')} UTC (bench/real-files.ts). `
    + 'Every file went through the in-process service on the local Base chain with the standard x402 client (quote, then the paid retry), '
    + 'the payer\'s USDC balance read before and after '
    + 'each call; the raw tool ran on the same file (qpdf --check and pdftotext for PDFs, sharp decoding every pixel for images, '
    + 'soffice --convert-to pdf for the Office files the service refused). The files are not committed: '
    + '`sh bench/real-files-corpus.sh MIRRORS_DIR DIR` takes every k-th file of each source from bare git mirrors, then '
    + '`REAL_FILES_DIR=DIR npm run bench -- --only real-files`.', ''];
  const operationsOf = (kind: string) => [...new Set(records.filter((r) => r.kind === kind).map((r) => r.operation))].join(', ');
  L.push(...table(['Source', 'Files', 'Operations per file'],
    Object.entries(run.sources as Record<string, string>).map(([kind, source]) => [source, s.files[kind] ?? 0, operationsOf(kind)])), '');
  L.push(...table(['Calls', '200', '4xx before payment', '501 before payment', '4xx after payment', '5xx after payment',
    'Charged without a result', 'Other 5xx or no answer', 'Refused, raw tool reads it'],
  [[s.calls, s.ok, s.refusedBeforePayment, s.notImplemented, s.failedAfterPayment4xx, s.failedAfterPayment5xx, s.chargedWithoutResult,
    s.serverErrors, s.refusedButRawHandles]]), '');
  const failed = records.filter((r) => final(r) !== 200);
  const status = (code: number | undefined, name: string | undefined) => (code ? `${code}${name ? ` ${name}` : ''}` : '');
  if (failed.length) {
    L.push('Every call that did not answer 200 (the message is the service\'s):', '');
    L.push(...table(['File', 'Operation', 'Quote', 'Paid', 'Charged', 'Raw tool', 'Message'], failed.map((r) => [
      r.file, r.operation, status(r.quoteStatus, r.quoteCode), status(r.paidStatus, r.paidCode), r.charged ? '**yes**' : 'no',
      `${r.rawHandles ? 'reads it' : 'fails'} (${r.rawDetail})`,
      String(r.message ?? '').replace(/\|/g, '/').replace(/\s+/g, ' ').slice(0, 220)])), '');
  }
  return L;
}

function cellSection(run: Json): string[] {
  const cells = run.tableCells;
  const where = run.subset
    ? `Measured ${String(run.generated).slice(0, 16).replace('T', ' ')} UTC on ${run.pages} of the ${run.subset.of} ground-truth pages (${run.subset.args.join(' ')}: the first pages and every page with a table; the machine was too busy for the whole set), in ${run.styles?.length ?? '?'} styles; the table is also in [results/markdown-subset.md](results/markdown-subset.md). `
    : '';
  const styles = Object.keys(cells.byStyle as Record<string, Json>);
  const engines = Object.keys(cells.overall as Record<string, Json>);
  const cell = (s: Json) => (!s ? '–' : s.predicted === 0 ? '0 (no tables returned)' : `${s.f1.toFixed(3)} (P ${s.precision.toFixed(2)}, R ${s.recall.toFixed(2)})`);
  const rows = styles.map((style) => {
    const target = cells.targets?.[style] as number | undefined;
    const local = cells.byStyle[style]?.[cells.targetEngine];
    return [style, ...engines.map((e) => cell(cells.byStyle[style][e])), target === undefined ? '' : `${target.toFixed(2)}${local ? `: ${local.f1 >= target ? 'met' : '**missed**'}` : ''}`];
  });
  rows.push(['all styles', ...engines.map((e) => cell(cells.overall[e])), '']);
  return ['### Tables: cell F1 by style', '', `${where}${cells.method ?? ''}`, '', ...table(['Style', ...engines, `Target (${cells.targetEngine})`], rows), ''];
}
