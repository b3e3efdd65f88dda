import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils';
import { expect, test } from 'vitest';

/**
 * No engine builds the image here, so the Dockerfile is checked by a linter (dockerfile-utils, the parser and
 * validator behind the Docker language server) with every optional rule raised to an error, beside
 * scripts/image.sh --dry-run. A real build runs in the release workflow.
 */
const STRICT: ValidatorSettings = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};

const lint = (dockerfile: string) =>
  validate(dockerfile, STRICT).map((problem) => `line ${problem.range.start.line + 1}: ${typeof problem.message === 'string' ? problem.message : problem.message.value}`);

test('the Dockerfile passes the strict lint', () => {
  expect(lint(readFileSync(join(import.meta.dirname, '../../Dockerfile'), 'utf8'))).toEqual([]);
});

test('the lint catches what a broken Dockerfile would carry', () => {
  const problems = lint("FROM node:24\nworkdir app\nEXPOSE http\nCMD ['serve']\nCMD serve\n");
  expect(problems.length).toBeGreaterThanOrEqual(4);
  expect(problems.join('\n')).toMatch(/containerPort/);
});
