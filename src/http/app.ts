import etag from '@fastify/etag';
import formBody from '@fastify/formbody';
import Fastify, { type FastifyBaseLogger, type FastifyRequest, type FastifySchema } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { type CacheRequestScope, runInCacheRequestScope } from '../caches/cache-versions.ts';
import { type CommittedRevisions, trackCommittedRevisions } from '../services/committed-revisions.ts';
import type { Services } from '../app/container.ts';
import { requireAuthentication } from './authenticate.ts';
import { registerDocs } from './docs/openapi-document.ts';
import { clientErrorHandler, frameworkErrors, newRequestId, registerErrorHandling } from './error-handler.ts';
import { type HttpMetrics, registerHttpMetrics } from './metrics.ts';
import { RequestLogController } from './request-log.ts';
import { committedRevisionsOf, REVISION_HEADER } from './revision-header.ts';
import { type ConsoleFiles } from './console/console-files.ts';
import { registerConsoleCookie } from './console/console-cookie.ts';
import { consoleAssetRoutes, consolePageFor, sendConsolePage } from './console/console-routes.ts';
import { consoleSessionRoutes, publicConsoleRoutes } from './routes/console.routes.ts';
import { approvalRoutes } from './routes/approvals.routes.ts';
import { auditRoutes } from './routes/audit.routes.ts';
import { auditLogStreamRoutes } from './routes/audit-log-streams.routes.ts';
import { snapshotRoutes } from './routes/snapshots.routes.ts';
import { webhookRoutes } from './routes/webhooks.routes.ts';
import { bodyTokenRoutes, publicAuthRoutes, tokenRoutes } from './routes/auth.routes.ts';
import { changeRoutes } from './routes/changes.routes.ts';
import { environmentRoutes } from './routes/environments.routes.ts';
import { type EventStreamSettings, eventRoutes } from './routes/events.routes.ts';
import { folderRoutes } from './routes/folders.routes.ts';
import { identityRoutes } from './routes/identities.routes.ts';
import { importRoutes } from './routes/imports.routes.ts';
import { integrationRoutes } from './routes/integrations.routes.ts';
import { membershipRoutes } from './routes/memberships.routes.ts';
import { operatorRoutes } from './routes/operator.routes.ts';
import { namespaceGrantRoutes } from './routes/namespace-grants.routes.ts';
import { clusterRoutes } from './routes/clusters.routes.ts';
import { privilegeRoutes } from './routes/privileges.routes.ts';
import { projectRoutes } from './routes/projects.routes.ts';
import { roleRoutes } from './routes/roles.routes.ts';
import { secretRoutes } from './routes/secrets.routes.ts';
import { secretV4Routes } from './routes/secrets-v4.routes.ts';
import { publicSsoRoutes, ssoConfigRoutes } from './routes/sso.routes.ts';
import { mfaEnrolmentRoutes, sessionRoutes } from './routes/account.routes.ts';
import { systemRoutes } from './routes/system.routes.ts';
import { tagRoutes } from './routes/tags.routes.ts';
import { appConnectionRoutes } from './routes/app-connections.routes.ts';
import { secretRotationRoutes } from './routes/secret-rotations.routes.ts';
import { dynamicSecretRoutes } from './routes/dynamic-secrets.routes.ts';
import { universalAuthRoutes } from './routes/universal-auth.routes.ts';
import { userRoutes } from './routes/users.routes.ts';
import { jwtAuthRoutes, kubernetesAuthRoutes, workloadLoginRoutes } from './routes/workload-auth.routes.ts';
import type { ZodApp } from './zod-app.ts';

export type { ZodApp };

export interface RegisteredRoute {
  method: string;
  url: string;
  /** The route's schema (zod): the API reference's tests check its examples against it. */
  schema?: FastifySchema;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of the app (HEAD aside), in registration order; the authorization tests walk it. */
    registeredRoutes: RegisteredRoute[];
  }
}

export interface AppOptions {
  logger: FastifyBaseLogger;
  /** Addresses/CIDRs whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  /** Event streams' heartbeat, recheck and stall intervals (defaults 15 s, 60 s and 60 s). */
  eventStreams?: Partial<EventStreamSettings>;
  /** The built web console (http/console/console-files.ts), served at `/`; without it `/` answers as an API. */
  console?: ConsoleFiles;
}

export interface ApiApp {
  app: ZodApp;
  metrics: HttpMetrics;
}

/** Access control: identities, universal, Kubernetes and JWT auth, tokens, users, memberships, roles, privileges. */
const accessControlRouteGroups = [
  identityRoutes,
  universalAuthRoutes,
  kubernetesAuthRoutes,
  jwtAuthRoutes,
  tokenRoutes,
  userRoutes,
  membershipRoutes,
  roleRoutes,
  privilegeRoutes,
  ssoConfigRoutes,
  sessionRoutes,
  consoleSessionRoutes,
];

/** Route groups that need an access token, in registration order. */
const protectedRouteGroups = [
  auditRoutes,
  auditLogStreamRoutes,
  projectRoutes,
  namespaceGrantRoutes,
  environmentRoutes,
  folderRoutes,
  secretRoutes,
  secretV4Routes,
  approvalRoutes,
  snapshotRoutes,
  webhookRoutes,
  tagRoutes,
  dynamicSecretRoutes,
  importRoutes,
  integrationRoutes,
  operatorRoutes,
  clusterRoutes,
  appConnectionRoutes,
  secretRotationRoutes,
];

export async function buildApiApp(services: Services, options: AppOptions): Promise<ApiApp> {
  const app = Fastify({
    loggerInstance: options.logger,
    genReqId: newRequestId,
    frameworkErrors,
    clientErrorHandler,
    logController: new RequestLogController(options.logger),
    trustProxy: options.trustedProxies.length > 0 ? options.trustedProxies : false,
    // Secret names (up to 500 characters, URL-encoded) travel as path parameters.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
  }).withTypeProvider<ZodTypeProvider>();
  const registeredRoutes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') registeredRoutes.push({ method, url: route.url, schema: route.schema });
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Each request compares one reading of the cache versions (caches/cache-versions.ts), made when it is authenticated:
  // the scope opens before the authentication hooks and is entered again around the handler.
  const cacheScopes = new WeakMap<FastifyRequest, CacheRequestScope>();
  app.addHook('onRequest', (request, _reply, done) => {
    const scope: CacheRequestScope = {};
    cacheScopes.set(request, scope);
    runInCacheRequestScope(scope, done);
  });
  // Each request tracks the revisions its writes commit (services/committed-revisions.ts); the answer names the newest.
  // preHandler, not onRequest: a body is parsed in the socket's own async context, which would lose the scope.
  app.addHook('preHandler', (request, _reply, done) => {
    const revisions: CommittedRevisions = {};
    committedRevisionsOf.set(request, revisions);
    trackCommittedRevisions(revisions, () => runInCacheRequestScope(cacheScopes.get(request) ?? {}, done));
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const newest = committedRevisionsOf.get(request)?.newest;
    if (newest !== undefined) reply.header(REVISION_HEADER, String(newest));
  });
  const consoleFiles = options.console;
  registerErrorHandling(app, (request, reply) => {
    const page = consolePageFor(consoleFiles, request);
    return page && sendConsolePage(reply, page);
  });
  registerConsoleCookie(app);
  const metrics = registerHttpMetrics(app);
  await app.register(formBody);
  // Every answer carries a strong ETag (a hash of its body, so right for each caller and never stale); a GET
  // whose If-None-Match names it gets 304 without a body, as the reference and its clients expect.
  await app.register(etag);
  await registerDocs(app);
  // open event streams end (and let the server close) when the app closes
  app.addHook('preClose', async () => {
    await services.changeFanout.close();
    await services.accessWatch.close();
  });

  systemRoutes(app, services, consoleFiles);
  if (consoleFiles) consoleAssetRoutes(app, consoleFiles);
  publicAuthRoutes(app, services);
  publicConsoleRoutes(app, services);
  publicSsoRoutes(app, services);
  mfaEnrolmentRoutes(app, services);
  workloadLoginRoutes(app, services);
  bodyTokenRoutes(app, services);
  const streams = { heartbeatMs: 15_000, recheckMs: 60_000, stallTimeoutMs: 60_000, ...options.eventStreams };
  await app.register(async (scope) => {
    const zodScope = scope.withTypeProvider<ZodTypeProvider>();
    requireAuthentication(zodScope, services.auth, services.accessWatch);
    for (const routes of [...protectedRouteGroups, ...accessControlRouteGroups]) routes(zodScope, services);
    eventRoutes(zodScope, services, streams);
    changeRoutes(zodScope, services, streams);
  });
  return { app, metrics };
}
