#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bootstrap.sh - installs what building and testing vramz needs on Debian
# or Ubuntu, only the packages that are missing.  Run as root (or with
# sudo available).  Nothing outside the distribution's packages.
set -eu
pkgs="build-essential cmake pkg-config libncurses-dev libmicrohttpd-dev libcmocka-dev
      zlib1g-dev libcrypt-dev libyaml-dev
      python3 python3-venv python3-pip tmux prometheus curl procps util-linux systemd chromium
      dpkg-dev file passwd man-db bash-completion zsh fish openssl
      debhelper dh-python lintian"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "bootstrap: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
