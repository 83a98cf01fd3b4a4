// Subprocesses left behind by a worker thread that died. A thread that crashes or is torn down
// by the pool runs no exit handlers, so the engines it started would keep running (and writing)
// with nobody waiting for them. Every engine runs inside its job's private directory, so the
// front end finds them by their working directory and kills their process groups; Chromium, whose
// working directory Playwright does not set, by its profile in the job directory.
import { readdir, readFile, readlink } from 'node:fs/promises';

export async function killProcessesIn(jobDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return 0; // no procfs (not Linux): nothing to find this way
  }
  let killed = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let cwd: string;
    try {
      cwd = await readlink(`/proc/${entry}/cwd`);
    } catch {
      continue; // exited, or not ours to inspect
    }
    const inJob = cwd === jobDir || cwd.startsWith(`${jobDir}/`)
      || (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).includes(`--user-data-dir=${jobDir}/`);
    if (!inJob) continue;
    const pid = Number(entry);
    // Engines run in process groups of their own (spawn-with-limits.ts); the group kill reaches what they forked.
    try { process.kill(-pid, 'SIGKILL'); } catch { /* not a group leader */ }
    try { process.kill(pid, 'SIGKILL'); killed += 1; } catch { /* already gone */ }
  }
  return killed;
}
