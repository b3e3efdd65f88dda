import { describe, expect, test } from 'vitest';
import { detectUserAgentType } from '../../src/actor/actor.ts';
import { BadRequestError } from '../../src/errors.ts';
import { normalizeSecretPath, parseSecretPath } from '../../src/folders/secret-path.ts';

describe('secret paths', () => {
  test.each([
    ['/', '/'],
    ['', '/'],
    ['a', '/a'],
    ['/a/b/', '/a/b'],
    ['//a//b', '/a/b'],
    [' /app_1/x-y ', '/app_1/x-y'],
  ])('%j normalises to %j', (input, expected) => {
    expect(normalizeSecretPath(input)).toBe(expected);
  });

  test.each(['/a b', '/a/../b', '/a/./b', '/ä', `/${'x'.repeat(129)}`])('%j is rejected with 400', (path) => {
    expect(() => parseSecretPath(path)).toThrow(BadRequestError);
  });
});

describe('userAgentType', () => {
  test.each([
    [undefined, 'other'],
    ['cli', 'cli'],
    ['k8-operator', 'k8-operator'],
    ['k8-operator/v0.11.5', 'k8-operator'],
    ['terraform', 'terraform'],
    ['Mozilla/5.0 (X11; Linux x86_64)', 'web'],
    ['InfisicalNodeSDK/3.0', 'InfisicalNodeSDK'],
    ['python InfisicalPythonSDK', 'InfisicalPythonSDK'],
    ['curl/8.5.0', 'other'],
  ])('%j → %s', (header, expected) => {
    expect(detectUserAgentType(header)).toBe(expected);
  });
});
