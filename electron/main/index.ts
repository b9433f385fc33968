// Placeholder: replaced by the secure Electron shell.
export {};
