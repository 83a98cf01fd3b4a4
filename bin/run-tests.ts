// Runs the whole lab suite on the compiled tests and ends with one plain summary line
// ("N passed, N failed") that CI reads.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const labBin = path.join(root, 'node_modules', '@hapi', 'lab', 'bin', 'lab');
const targets = process.argv.slice(2).length ? process.argv.slice(2) : ['dist/test'];

const child = spawn(process.execPath, [labBin, '-P', 'test', ...targets], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.on('data', (chunk: Buffer) => { process.stdout.write(chunk); out += chunk.toString(); if (out.length > 1_000_000) out = out.slice(-100_000); });
child.on('close', (code) => {
  const failed = /(\d+) of (\d+) tests failed/.exec(out);
  const complete = /(\d+) tests? complete/.exec(out);
  if (failed) console.log(`${Number(failed[2]) - Number(failed[1])} passed, ${failed[1]} failed`);
  else if (complete) console.log(`${complete[1]} passed, 0 failed`);
  process.exit(code ?? 1);
});
