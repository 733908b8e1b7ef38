// A wrong wall clock for one process, as a host whose NTP is broken has: libfaketime (Debian's
// faketime package) preloaded, shifting what Date.now() reads and leaving the monotonic clock
// (timers, performance.now) alone.
import { existsSync, readdirSync } from 'node:fs';

/** Debian puts it under the architecture's library directory (x86_64-linux-gnu...). */
function libfaketime(): string {
  const lib = readdirSync('/usr/lib')
    .map((dir) => `/usr/lib/${dir}/faketime/libfaketime.so.1`)
    .find((path) => existsSync(path));
  if (!lib)
    throw new Error("libfaketime not found: install Debian's faketime package (.ci/run does)");
  return lib;
}

/** The environment that runs a process with its wall clock `offset` off (e.g. '+120s', '-10m'). */
export function wrongWallClock(offset: string): Record<string, string> {
  return {
    LD_PRELOAD: libfaketime(),
    FAKETIME: offset,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}
