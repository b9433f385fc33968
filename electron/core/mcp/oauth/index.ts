/**
 * OAuth 2.1 for remote MCP servers: the SDK provider, the login service, the loopback
 * redirect receiver and the https-or-loopback URL guard.
 */
export { OAuthService, type OAuthServiceDeps, type OAuthServerLookup } from './oauth-service';
export { WardenOAuthProvider, checkMetadata, type WardenOAuthProviderOptions } from './provider';
export { OAuthCredentialVault, OAUTH_SECRET_NAMES } from './credential-vault';
export { startLoopbackCallback, randomState, type LoopbackCallback } from './loopback-callback';
export { createGuardedFetch, oauthUrlProblem, assertOAuthUrl } from './url-policy';
export { OAuthNetworkScope, classifyAddress, type OriginConfirmer, type OriginQuestion, type ResolveHost } from './network-scope';
export { createAuthHandlers } from './auth-handlers';
