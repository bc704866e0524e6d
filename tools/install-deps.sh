#!/usr/bin/env bash
# Installs the Debian packages calscope's build, tests and benchmark need, when missing.
# Why each is there: see README.md, "Dependencies".
set -euo pipefail
need=()
for p in build-essential pkg-config libncurses-dev libcsv-dev libcmocka-dev zlib1g-dev \
         clang libclang-rt-14-dev tmux python3 python3-numpy python3-pandas python3-sklearn \
         python3-torch python3-scipy python3-deprecation stress \
         libnifti2-dev libminizip-dev libisal-dev isal python3-nibabel python3-dask python3-distributed linux-perf; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${need[*]}"
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
