#!/usr/bin/env bash
# Installs every dependency of MoE Roofline on Debian bookworm, idempotently and quietly.
# Everything comes from Debian's packages and the npm registry; nothing else is downloaded.
#   bash scripts/setup.sh        (as root, or with sudo available)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

pkgs=(cmake g++ clang make emscripten nlohmann-json3-dev doctest-dev libcli11-dev libbenchmark-dev
      libclang-rt-14-dev fonts-dejavu-core chromium nodejs python3 xz-utils dpkg-dev
      python3-dev pybind11-dev python3-pandas python3-pytest)
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
# npm may come from outside Debian on this machine; only install Debian's if there is none at all
command -v npm >/dev/null || missing+=(npm)

src_list=/etc/apt/sources.list.d/debian-src.sources
need_update=0
if [[ ! -f $src_list && -f /etc/apt/sources.list.d/debian.sources ]]; then
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$src_list" >/dev/null
  need_update=1
fi
if ((${#missing[@]})) || ((need_update)); then
  echo "setup: apt-get install ${missing[*]:-(sources only)}"
  $SUDO apt-get update -qq >/dev/null
  if ((${#missing[@]})); then
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# Dear ImGui 1.86 from Debian's source package (checked by sha256 in cmake/imgui.cmake too)
third=$here/third_party_cache
imgui_tar=$third/imgui_1.86+ds.orig.tar.xz
imgui_sha=0dace0e8e57d298eb6e93af12dc19420cb96330832f6495c733b90aeeef11f64
mkdir -p "$third"
if [[ ! -f $imgui_tar ]] || ! echo "$imgui_sha  $imgui_tar" | sha256sum -c --status; then
  echo "setup: fetching imgui 1.86 source package from Debian"
  (cd "$third" && apt-get source --download-only -qq imgui=1.86+ds-1 >/dev/null 2>&1 ||
     { $SUDO apt-get update -qq >/dev/null; apt-get source --download-only -qq imgui=1.86+ds-1 >/dev/null; })
  echo "$imgui_sha  $imgui_tar" | sha256sum -c --status || { echo "setup: imgui checksum mismatch" >&2; exit 1; }
fi

# playwright-core from npm, pinned by the committed lock file
if [[ ! -d $here/node_modules/playwright-core ]]; then
  echo "setup: npm ci (playwright-core)"
  (cd "$here" && npm ci --silent --no-audit --no-fund >/dev/null)
fi
echo "setup: ok"
