// A synchronous throw turned into the rejection a promise-returning function owes its caller (one
// that is not `async`, to spare a promise on a hot path, must not throw instead).

/** A promise rejected with `err`, as an Error. */
export function rejection<T>(err: unknown): Promise<T> {
  return Promise.reject(err instanceof Error ? err : new Error(String(err)));
}
