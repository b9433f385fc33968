#!/usr/bin/env bash
# `npm start`: build Warden and run it in Electron.
# keytar (the OS keychain) is a native module. Electron loads native modules built against its
# own ABI, while the test suite runs in Node and needs the Node build, so the start script
# rebuilds keytar for Electron first (scripts/test.sh switches it back when needed). The Electron
# binary itself is fetched by the `electron` package on first launch.
set -euo pipefail
cd "$(dirname "$0")/.."
npx electron-rebuild --force --only keytar
exec npx electron-vite preview "$@"
