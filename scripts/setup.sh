#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages Proxima builds and tests with. As root it runs
# apt-get; otherwise it prints the exact command and stops. Extra package
# names can be passed as arguments (the bench and browser tests do).
set -u
pkgs="build-essential libcglm-dev libcjson-dev libcurl4-openssl-dev libsqlite3-dev libcmocka-dev libmicrohttpd-dev libssl-dev sqlite3 libzstd-dev liblz4-dev libmimalloc-dev libturbojpeg0-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev $*"
missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "error: missing Debian packages:$missing" >&2
	echo "run: sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "setup: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq $missing >/dev/null 2>&1; then
	apt-get update -qq >/dev/null 2>&1
	apt-get install -y -qq $missing >/dev/null || {
		echo "error: apt-get install failed for:$missing" >&2
		exit 1
	}
fi
exit 0
