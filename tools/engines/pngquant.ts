// pngquant (libimagequant): reduces a PNG to an exact number of palette colours, for counts that
// libvips cannot write (it takes a palette size only as a bit depth: 2, 4, 16 or 256 entries).
import { runTool, type RunOptions } from '../process/run-tool.js';
import { toolFailure } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

export const PNGQUANT = declareEngine({ name: 'pngquant', commands: ['pngquant'], package: 'pngquant' });

/** pngquant's exit statuses: 0 success; 98 and 99 when the quality limits were not met; others on errors. */
export const PNGQUANT_EXIT = { ok: 0 } as const;

/**
 * The PNG with at most `colors` palette entries. `speed` is pngquant's 1 (slowest, best) to 11
 * (fastest). Any failure fails the job (toolFailure maps a deadline or a missing command).
 */
export async function quantisePng(
  png: Uint8Array, colors: number, speed: number, outputBound: number, options: RunOptions,
): Promise<Uint8Array> {
  const args = [
    // --speed: the caller's trade of time for size.
    '--speed', String(speed),
    // --strip: no metadata chunks in the output.
    '--strip',
    String(colors),
    // "-": the PNG from stdin, the result to stdout.
    '-',
  ];
  try {
    const result = await runTool(PNGQUANT.commands[0], args, { ...options, input: png, maxStdout: outputBound });
    if (result.exitCode !== PNGQUANT_EXIT.ok) throw new Error(`pngquant exited with ${result.exitCode}`);
    return result.stdout;
  } catch (err) {
    toolFailure(err, 'pngquant');
  }
}
