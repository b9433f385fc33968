#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, so that
# keychain tests use the real Secret Service (libsecret → gnome-keyring), not a mock.
# Usage: scripts/with-keyring.sh <command> [args...]
set -euo pipefail
if [ -z "${WARDEN_IN_KEYRING:-}" ]; then
  command -v dbus-run-session >/dev/null || { echo "with-keyring: dbus-run-session not found (apt-get install dbus)" >&2; exit 1; }
  command -v gnome-keyring-daemon >/dev/null || { echo "with-keyring: gnome-keyring-daemon not found (apt-get install gnome-keyring)" >&2; exit 1; }
  export WARDEN_IN_KEYRING=1
  exec dbus-run-session -- "$0" "$@"
fi
# A throwaway HOME so the keyring file and any app data never touch the real user's.
tmp_home=$(mktemp -d -t warden-home-XXXXXX)
export HOME="$tmp_home"
export XDG_DATA_HOME="$tmp_home/.local/share" XDG_CONFIG_HOME="$tmp_home/.config" XDG_RUNTIME_DIR="$tmp_home/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
# An empty password on stdin creates and unlocks the login keyring.
mkdir -p "$XDG_DATA_HOME/keyrings"
eval "$(echo '' | gnome-keyring-daemon --unlock --components=secrets)"
eval "$(gnome-keyring-daemon --start --components=secrets)"
export GNOME_KEYRING_CONTROL
status=0
"$@" || status=$?
rm -rf "$tmp_home"
exit $status
