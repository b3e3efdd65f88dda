/**
 * The values Coffer uses of @kubernetes/client-node, the only module that imports them (eslint). The package's index
 * loads every API group the generator knows (25 MB of JavaScript: 78 MiB of a process's RSS, 16 MiB of it source text
 * V8 keeps); `npm run build` replaces this module's output with a bundle of what it exports and what they reach
 * (scripts/bundle-client-node.ts, 2.1 MB). Run from the sources (tests, `node src/...`) it is the package as installed.
 */
export {
  ApiException,
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  setHeaderMiddleware,
  setHeaderOptions,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
