#!/usr/bin/env bash
# The one test command (README): typecheck, lint, build, then unit + integration + e2e tests.
# Tests run inside a private D-Bus session with an unlocked gnome-keyring, so keychain tests use
# the real OS keychain. Any failure fails the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== typecheck"; npm run --silent typecheck
echo "== lint"; npm run --silent lint
echo "== build"; npm run --silent build
echo "== tests (unit, integration, e2e) in a keyring session"
scripts/with-keyring.sh npx vitest run "$@"
