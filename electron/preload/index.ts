// Placeholder: replaced by the preload that exposes the contract.
export {};
