#!/usr/bin/env bash
# Install headless Chromium and its driver from Debian's packages, for the MLflow UI browser tests.
# Idempotent: does nothing when both are already on PATH. Needs root (CI and dev machines run as root);
# selenium-manager is never used, because nothing may be downloaded outside the package registries.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium and chromedriver already installed: $(chromium --version 2>/dev/null || true)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
else
    SUDO=""
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver
echo "installed: $(chromium --version) / $(chromedriver --version)"
