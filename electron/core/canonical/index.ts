/** Canonical JSON and the identity hashes built on it (fingerprint, contract, endpoint). */
export { canonicalCopy, canonicalJson, deepFreeze, deepFreezeCopy, jsonCopy, plainCopy } from './canonical-json';
export { contractHash, endpointHash, fingerprint, instructionsHash, sha256Hex, type Endpoint, type FingerprintInput, type ToolContract } from './hashes';
