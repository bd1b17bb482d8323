import { describe, expect, it } from 'vitest';
import {
  checkProfileShape,
  readSbpl,
  SbplShapeError,
  SbplSyntaxError,
  writeSExpression,
} from './sbpl-reader.js';

const valid = [
  '; a comment (with "quotes" and parentheses',
  '(version 1)',
  '(deny default)',
  '(allow file-read* (subpath "/Users/dev/a \\"b\\" (c); #d\\\\e")) ; trailing comment',
  '(allow file-write* (require-all (subpath (param "PATH_0")) (require-not (literal "/x"))))',
  '(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))',
].join('\n');

describe('the test S-expression reader', () => {
  it('reads strings with escaped quotes, backslashes and parentheses back to their text', () => {
    const forms = readSbpl(valid);
    expect(forms.map(writeSExpression)).toEqual([
      '(version 1)',
      '(deny default)',
      '(allow file-read* (subpath "/Users/dev/a \\"b\\" (c); #d\\\\e"))',
      '(allow file-write* (require-all (subpath (param "PATH_0")) (require-not (literal "/x"))))',
      '(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))',
    ]);
    const path = forms[2]?.kind === 'list' ? forms[2].items[2] : undefined;
    expect(path?.kind === 'list' ? path.items[1] : undefined).toEqual({
      kind: 'string',
      value: '/Users/dev/a "b" (c); #d\\e',
    });
    expect(checkProfileShape(forms, { PATH_0: '/Users/Zoë' })).toHaveLength(3);
  });

  it('rejects text that is not well formed', () => {
    const broken = [
      '(version 1',
      '(version 1))',
      '(allow file-read* (literal "/x',
      '(allow file-read* (literal "/x\\n"))',
      '(allow file-read* (literal "/x\ny"))',
      '(allow file-read* (regex #"^/x"))',
      '(allow file-read* (literal "/caf\u00e9"))',
    ];
    for (const text of broken) expect(() => readSbpl(text), text).toThrow(SbplSyntaxError);
  });

  it('rejects forms, operations, filters and paths the generator never writes', () => {
    const wrong = [
      '(deny default)',
      '(version 1) (allow file-read* (literal "/x"))',
      '(version 1) (deny default) (deny default)',
      '(version 1) (deny default) (deny file-read*)',
      '(version 1) (deny default) (allow file-read-and-write (literal "/x"))',
      '(version 1) (deny default) (allow (literal "/x"))',
      '(version 1) (deny default) (allow file-read* (prefix "/x"))',
      '(version 1) (deny default) (allow file-read* (subpath "/x/"))',
      '(version 1) (deny default) (allow file-read* (subpath "/x//y"))',
      '(version 1) (deny default) (allow file-read* (subpath "/x/./y"))',
      '(version 1) (deny default) (allow file-read* (subpath "x/y"))',
      '(version 1) (deny default) (allow file-read* (subpath (param "PATH_9")))',
      '(version 1) (deny default) (allow signal (target others))',
      '(version 1) (deny default) (allow file-read* (require-not (literal "/a") (literal "/b")))',
      '(version 1) (deny default) (allow sysctl-read (sysctl-name kern.hostname))',
      '(version 1) (deny default) (allow file-read-metadata)',
    ];
    for (const text of wrong)
      expect(() => checkProfileShape(readSbpl(text), {}), text).toThrow(SbplShapeError);
  });
});
