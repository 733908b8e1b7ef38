// Headings as GitHub links to them, for the docs tests.

/** GitHub's anchor of a heading: lower case, punctuation but '-' dropped, spaces to '-'. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}
