/**
 * A name pattern where `*` stands for any characters (slashes too) and every other character
 * is literal, matched against the whole text: GitLab's Gitlab::ProtectedRefMatcher (protected
 * branches) and HasEnvironmentScope (feature flag scopes, SQL LIKE). Without a regular
 * expression: the first piece must be a prefix, the last a suffix, and each middle piece is
 * taken at its leftmost place after the one before — always right, and one scan of the text,
 * where a RegExp with a `.*` per star backtracks polynomially in the number of stars.
 */
export function wildcardMatches(pattern: string, text: string): boolean {
  const pieces = pattern.split('*');
  if (pieces.length === 1) return pattern === text;
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = text.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}
