// What Linux's /proc says of a benchmark's child processes: their CPU, their memory, and how many
// files (sockets) they may open. Read from outside, so that measuring never runs on the event loop
// being measured.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU of a process so far, in ms (/proc/<pid>/stat fields 14 and 15). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** Resident memory of a process now (VmRSS), in bytes; null once it is gone. */
export function rssOf(pid: number): number | null {
  const rss = memoryOf(pid)?.rss;
  return rss === undefined || Number.isNaN(rss) ? null : rss;
}

/**
 * Resident memory of a process now, in bytes, whole and in its two parts (/proc/<pid>/status):
 * anonymous (its heaps and stacks: its own) and file-backed (mostly the node binary's pages, which
 * every process of one image on a host shares); null once it is gone.
 */
export function memoryOf(pid: number): { rss: number; anon: number; file: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
  } catch {
    return null;
  }
}

/**
 * The soft limit on open files of this process, which the children it forks inherit; null where
 * /proc does not say (not Linux) or there is no limit.
 */
export function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
