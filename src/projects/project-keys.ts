import { findAnyProjectDataKey, listProjectDataKeys, setProjectDataKey } from './project-store.ts';

/**
 * The projects' wrapped data keys, for the root key's check and rotation
 * (installation/root-key.ts): read one, list them all locked, store one re-wrapped.
 */
export { findAnyProjectDataKey, listProjectDataKeys, setProjectDataKey };
