const MAX_DERIVED_TITLE = 80;

/** A run without a title gets the first line of its prompt, cut at a word boundary. */
export function deriveTitle(prompt: string, skillName: string | null): string {
  const firstLine = prompt
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .find((line) => line !== '');
  if (!firstLine) return skillName ? `Run skill ${skillName}` : 'Untitled run';
  if (firstLine.length <= MAX_DERIVED_TITLE) return firstLine;
  const cut = firstLine.slice(0, MAX_DERIVED_TITLE - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${lastSpace > MAX_DERIVED_TITLE / 2 ? cut.slice(0, lastSpace) : cut}…`;
}
