// How demo lines look: a local timestamp, a tag, and ANSI colours only when writing to a terminal.

export type Colour = 'dim' | 'bold' | 'red' | 'green' | 'yellow' | 'blue' | 'magenta' | 'cyan';

const CODES: Record<Colour, [number, number]> = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
};

export interface Style {
  paint(text: string, ...colours: Colour[]): string;
}

export function styleFor(isTty: boolean): Style {
  return {
    paint: (text, ...colours) =>
      isTty
        ? colours.reduce((t, c) => `\u001b[${CODES[c][0]}m${t}\u001b[${CODES[c][1]}m`, text)
        : text,
  };
}

/** `HH:MM:SS.mmm` in local time. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** A duration for people: `840 ms`, `2.41 s`. */
export function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export interface Printer {
  /** One line: timestamp, fixed-width tag, text. */
  line(tag: string, text: string, colour?: Colour): void;
  readonly style: Style;
}

export function printer(out: NodeJS.WriteStream, now: () => number = Date.now): Printer {
  const style = styleFor(out.isTTY);
  return {
    style,
    line(tag, text, colour) {
      const stamp = style.paint(clockTime(now()), 'dim');
      const label = tag.padEnd(9);
      out.write(`${stamp} ${colour ? style.paint(label, colour, 'bold') : label} ${text}\n`);
    },
  };
}
