/**
 * Formats a count of bytes the way every code-mode message does: `1,000,000`. Not with `Intl`:
 * this runs in engine hosts too, and an `Intl` object cannot be part of a Node startup snapshot.
 * A count past the safe integers (a hostile host's claims, added up) is not exact any more, and
 * `String` would write it in exponent notation: it reads `more than 9,007,199,254,740,991`.
 */
export function formatBytes(bytes: number): string {
  const whole = Math.round(bytes);
  if (!Number.isSafeInteger(whole)) return `more than ${formatBytes(Number.MAX_SAFE_INTEGER)}`;
  return String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * `text` cut to at most `maxBytes` of UTF-8 when it is longer: its head and its tail, with a note
 * between them saying how many bytes of `what` were cut and which limit cut them. The note counts
 * toward `maxBytes` (but is kept whole when the limit is smaller than the note itself).
 *
 * @example
 * ```ts
 * keepHeadAndTail(error, limits.outputBytes, { what: 'the error message', limit: 'outputBytes' });
 * ```
 */
export function keepHeadAndTail(
  text: string,
  maxBytes: number,
  { what, limit }: { readonly what: string; readonly limit: string },
): string {
  // Cheap first: a string of n UTF-16 units never takes more than 3n bytes of UTF-8.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  const bytes = Buffer.from(text);
  const describe = (cut: number) =>
    `\n[… ${formatBytes(cut)} bytes of ${what} cut here: it passed its ${formatBytes(maxBytes)}-byte limit (limits.${limit}), so its start and end are kept …]\n`;
  // The note's length depends on the count it prints; sized for the largest count it can print.
  const budget = Math.max(0, maxBytes - Buffer.byteLength(describe(bytes.length)));
  const headBytes = Math.floor(budget / 2);
  const tailBytes = budget - headBytes;
  // Cut on character boundaries: a split character decodes to U+FFFD, dropped with its bytes.
  const head = bytes
    .subarray(0, headBytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  const tail = bytes
    .subarray(bytes.length - tailBytes)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
  const cut = bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return `${head}${describe(cut)}${tail}`;
}
