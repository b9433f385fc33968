/** The policy engine: pure `decide`, path rules, and the normalization step that runs before it. */
export { decide, effectiveMode } from './engine';
export { hostPaths, isPathUnder, MAX_SYMLINKS, normalizePolicyPath, resolvePathLikeKernel, type PathFs, type PathResolution, type PathSemantics } from '../paths/resolve';
export { normalizeForPolicy, pathRulesFor, type NormalizedArguments, type NormalizeOptions, type PathRules } from './normalize';
export { loadOrganizationPolicy, parseOrganizationPolicy, type OrganizationPolicy } from './organization';
export { PolicyStore, type ChangeSource, type RuleChange } from './store';
