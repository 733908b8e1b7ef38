export function runDemo(_args: string[]): Promise<number> {
  return Promise.resolve(1);
}
