// docs/configuration.md's table is written by hand; the settings are declared once, in the convict
// schema of server/config.ts. This holds the table to the schema: every variable the service reads
// is a row, once, with the schema's default, and no row names anything else. A default the schema
// leaves empty and the service works out at boot (the cores, the network's USDC) is described in
// words; each such description is checked against what the service or x402's tables give.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getDefaultAsset as evmUsdc } from '@x402/evm';
import { getDefaultAsset as svmUsdc } from '@x402/svm';
import { base } from 'viem/chains';
import { ENVIRONMENT_DEFAULTS, ENVIRONMENT_VARIABLES, loadConfig } from '../server/config.js';
import { IMAGE_TIMEOUT_MS, MODEL_TIMEOUT_MS, PDF_TIMEOUT_MS } from '../operations/shared.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');

interface Row { line: number; variable: string; default: string; meaning: string }

/** The table's rows: `| \`NAME\` | default | meaning |`. */
function rows(): Row[] {
  const out: Row[] = [];
  for (const [i, line] of page.split('\n').entries()) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split(' | ');
    const variable = /^\| `([A-Z0-9_]+)`$/.exec(cells[0])?.[1];
    if (!variable || cells.length < 3) throw new Error(`docs/configuration.md line ${i + 1}: cannot read the row`);
    out.push({ line: i + 1, variable, default: cells[1].trim(), meaning: cells.slice(2).join(' | ').replace(/ \|$/, '') });
  }
  return out;
}

/** `0x8335…2913`: the first and last characters of an address the row abbreviates. */
function abbreviates(meaning: string, address: string): boolean {
  return [...meaning.matchAll(/`([0-9A-Za-z]+)…([0-9A-Za-z]+)`/g)]
    .some(([, head, tail]) => address.startsWith(head) && address.endsWith(tail));
}

/** Defaults the schema leaves empty and the service works out at boot: the words, and what they must match. */
const WORKED_OUT: Record<string, { words: string; check: (row: Row) => void }> = {
  WORKERS: {
    words: 'number of cores',
    check: () => expect(loadConfig({}, {}).workers).to.equal(Math.max(1, os.availableParallelism())),
  },
  BASE_URL: {
    words: '`http://localhost:PORT`',
    check: () => expect(loadConfig({}, { PORT: '9123' }).baseUrl).to.equal('http://localhost:9123'),
  },
  EVM_ASSET: {
    words: 'the network\'s USDC',
    check: (row) => {
      expect(abbreviates(row.meaning, evmUsdc('eip155:8453').asset), 'Base USDC').to.be.true();
      expect(abbreviates(row.meaning, evmUsdc('eip155:84532').asset), 'Base Sepolia USDC').to.be.true();
    },
  },
  SVM_ASSET: {
    words: 'the network\'s USDC',
    check: (row) => {
      expect(abbreviates(row.meaning, svmUsdc('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp').asset), 'mainnet USDC').to.be.true();
      expect(abbreviates(row.meaning, svmUsdc('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1').asset), 'devnet USDC').to.be.true();
    },
  },
  EVM_RPC_URL: {
    words: 'the chain\'s public RPC',
    check: (row) => expect(row.meaning).to.include(`\`${base.rpcUrls.default.http[0]}\``),
  },
  // The facilitators a hosted facilitator's key brings: docs/going-live.md says which, and where.
  EVM_FACILITATOR_URL: { words: 'CDP\'s with the CDP key, else –', check: (row) => expect(row.meaning).to.include('CDP') },
  SVM_FACILITATOR_URL: { words: 'PayAI\'s with the PayAI key, else –', check: (row) => expect(row.meaning).to.include('PayAI') },
};

describe('the configuration table (docs/configuration.md)', () => {
  const table = rows();

  it('has a row for every variable the schema reads, once, and no other', () => {
    const names = table.map((r) => r.variable);
    expect(new Set(names).size, 'a variable listed twice').to.equal(names.length);
    expect([...names].sort()).to.equal([...ENVIRONMENT_VARIABLES].sort());
  });

  it('gives each variable the schema\'s default', () => {
    for (const row of table) {
      const where = `docs/configuration.md line ${row.line} (${row.variable})`;
      const declared = ENVIRONMENT_DEFAULTS.get(row.variable);
      if (declared !== '' && declared !== 0) {
        expect(row.default, where).to.equal(String(declared));
        continue;
      }
      const worked = WORKED_OUT[row.variable];
      if (worked) {
        expect(row.default, where).to.equal(worked.words);
        worked.check(row);
      } else {
        // Empty: nothing is used, or what the local chains bring in dev mode.
        expect(row.default, `${where}: "–", or "– (dev: …)"`).to.match(/^–(?: \(dev: [^)]+\))?$/);
      }
    }
  });

  it('quotes the operations\' deadlines, which JOB_TIMEOUT_MS bounds, from their constants', () => {
    const jobTimeout = table.find((r) => r.variable === 'JOB_TIMEOUT_MS')!;
    const s = (ms: number) => `${ms / 1000} s`;
    const deadlines = `(image jobs ${s(IMAGE_TIMEOUT_MS)}, PDF jobs ${s(PDF_TIMEOUT_MS)}, model jobs ${s(MODEL_TIMEOUT_MS)})`;
    expect(jobTimeout.meaning).to.include(deadlines);
    expect(ENVIRONMENT_DEFAULTS.get('JOB_TIMEOUT_MS')).to.equal(MODEL_TIMEOUT_MS);
  });
});
