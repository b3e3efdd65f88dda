/** What this process already reported, so a conflict is told once per resource and once per installation. */
export class ConflictReports {
  readonly #resources = new Set<string>();
  readonly #installations = new Set<string>();

  /** True the first time `uid` is noted. */
  noteResource(uid: string): boolean {
    if (this.#resources.has(uid)) return false;
    this.#resources.add(uid);
    return true;
  }

  noteInstallation(id: string): boolean {
    if (this.#installations.has(id)) return false;
    this.#installations.add(id);
    return true;
  }
}
