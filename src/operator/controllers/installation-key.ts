/**
 * The installation's key for every digest of secret data kept outside the
 * Secret (the reload checksums on workloads, the data hash in an
 * Integration's status and on its target): a plain hash of a short value can
 * be reversed by trying every value, by anyone who may read where it is kept.
 * One Secret in the operator's namespace holds it (reload-key.ts), read or
 * made when first needed (a standby replica writes nothing) and shared by
 * every replica and restart, local or remote, so the same data always gives
 * the same digest. A failed read is tried again at the next need.
 */
export class InstallationKey {
  readonly #load: () => Promise<Buffer>;
  #loading: Promise<Buffer> | undefined;

  constructor(load: () => Promise<Buffer>) {
    this.#load = load;
  }

  get(): Promise<Buffer> {
    this.#loading ??= this.#load().catch((error: unknown) => {
      this.#loading = undefined;
      throw error;
    });
    return this.#loading;
  }
}
