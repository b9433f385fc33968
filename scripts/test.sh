#!/usr/bin/env bash
# The one test command (README): typecheck, lint, build, then unit + integration + e2e tests.
# Tests run inside a private D-Bus session with an unlocked gnome-keyring, so keychain tests use
# the real OS keychain. Any failure fails the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."
# The MCP conformance runner needs Node 22; it lives in its own folder so it never shadows Node 20.
if [ ! -x tools/node22/node_modules/node/bin/node ]; then
  echo "== installing the Node 22 runtime for the conformance suite (tools/node22)"
  npm ci --prefix tools/node22 --no-audit --no-fund
fi
# keytar may have been rebuilt for Electron by `npm start`; the tests run it in Node.
if ! node -e "require('keytar')" >/dev/null 2>&1; then
  echo "== rebuilding keytar for Node (it was built for Electron)"
  npm rebuild keytar
fi
echo "== typecheck"; npm run --silent typecheck
echo "== lint"; npm run --silent lint
echo "== build"; npm run --silent build
echo "== tests (unit, integration, e2e) in a keyring session"
scripts/with-keyring.sh npx vitest run "$@"
