/** The release of this build: `coffer --version`, the OpenAPI document, the operator's user agent. */
export const VERSION = '0.1.0';
