#!/usr/bin/env bash
# Installs the system packages sleepcycle builds against (Debian/Ubuntu), and Chromium, in which the tests render
# the HTML report (headless). Idempotent; quiet when all present.
set -euo pipefail
pkgs=(libfftw3-dev libsndfile1-dev libflac-dev libvorbis-dev libasound2-dev libsqlite3-dev libxml2 pkg-config chromium)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "installing: ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "install-deps: the Swift toolchain (6.1 or later) is not on PATH; see https://swift.org/install" >&2; exit 1; }
