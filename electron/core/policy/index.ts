/** The policy engine: pure `decide`, path rules, and the normalization step that runs before it. */
export { decide } from './engine';
export { hostPaths, isPathUnder, MAX_SYMLINKS, normalizePolicyPath, resolvePathLikeKernel, resolveSymlinks, type PathFs, type PathResolution, type PathSemantics } from './paths';
export { normalizeArgumentsForPolicy, normalizeForPolicy, pathFieldsFor, pathRulesFor, type NormalizedArguments, type NormalizeOptions, type PathRules } from './normalize';
export { loadOrganizationPolicy, parseOrganizationPolicy, type OrganizationPolicy } from './organization';
export { PolicyStore, type ChangeSource, type RuleChange } from './store';
