/** The policy engine: pure `decide`, path rules, and the normalization step that runs before it. */
export { decide } from './engine';
export { hostPaths, isPathUnder, normalizePolicyPath, resolveSymlinks, type PathFs, type PathSemantics } from './paths';
export { normalizeArgumentsForPolicy, pathFieldsFor, type NormalizeOptions } from './normalize';
export { loadOrganizationPolicy, parseOrganizationPolicy, type OrganizationPolicy } from './organization';
export { PolicyStore, type ChangeSource, type RuleChange } from './store';
