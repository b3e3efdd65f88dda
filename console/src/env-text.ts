/** The KEY=value pairs of pasted .env text: comments and blank lines skipped, `export ` and matching quotes removed. */
export function parseEnvText(text: string): { secretKey: string; secretValue: string }[] {
  const pairs: { secretKey: string; secretValue: string }[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const separator = line.indexOf('=');
    if (separator <= 0) continue;
    const secretKey = line
      .slice(0, separator)
      .replace(/^export\s+/, '')
      .trim();
    let secretValue = line.slice(separator + 1).trim();
    const quote = secretValue[0];
    if ((quote === '"' || quote === "'") && secretValue.length >= 2 && secretValue.endsWith(quote)) secretValue = secretValue.slice(1, -1);
    if (quote === '"') secretValue = secretValue.replaceAll('\\n', '\n');
    pairs.push({ secretKey, secretValue });
  }
  return pairs;
}
