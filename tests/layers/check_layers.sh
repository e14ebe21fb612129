#!/usr/bin/env bash
# check_layers.sh [ROOT] — fails when an include in core/ goes up or sideways between the layer folders
# (DESIGN §11.1, docs/architecture.md), or when the core reaches for UI, platform or I/O.
#
# The layers, bottom to top: base < scenario < data < step < serving < plan. A file in core/<layer>/ may include
# "core/<same or lower layer>/..." only; core/moe.h (the umbrella header) may include any of them. Every include of
# a core header is written from the project root ("core/step/estimate.h"), so a bare "estimate.h" is an error too.
# Files outside these folders, directly in core/ (other than moe.h) or in an unknown folder, are errors: a new room
# is added to the list below, in its place.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
layers=(base scenario data step serving plan)
rank() { local i; for i in "${!layers[@]}"; do [[ ${layers[$i]} == "$1" ]] && { echo "$i"; return; }; done; echo -1; }
# Headers no core file may include: UI, windowing, the browser or platform, files and streams (the core is pure and
# reports errors as values; I/O belongs to native/ and web/).
forbidden='imgui|GLFW|emscripten|SDL|<fstream>|<iostream>|<filesystem>|<thread>|<unistd.h>|<CLI/'

bad=0
checked=0
while IFS= read -r f; do
  rel=${f#core/}
  if [[ $rel == */* ]]; then
    layer=${rel%%/*}
    mine=$(rank "$layer")
    if ((mine < 0)); then echo "$f: folder core/$layer/ is not a layer (${layers[*]})"; bad=1; continue; fi
  elif [[ $rel == moe.h ]]; then
    mine=${#layers[@]}
  else
    echo "$f: core files live in a layer folder (${layers[*]})"; bad=1; continue
  fi
  while IFS= read -r line; do
    n=${line%%:*}; inc=${line#*:}
    checked=$((checked + 1))
    if [[ $inc =~ $forbidden ]]; then echo "$f:$n: the core includes UI / platform / I/O: $inc"; bad=1; continue; fi
    [[ $inc =~ \"([^\"]+)\" ]] || continue
    target=${BASH_REMATCH[1]}
    if [[ $target != core/*/* ]]; then
      echo "$f:$n: include \"$target\": write core includes from the project root (core/<layer>/<file>)"; bad=1; continue
    fi
    tl=${target#core/}; tl=${tl%%/*}
    theirs=$(rank "$tl")
    if ((theirs < 0)); then echo "$f:$n: \"$target\" is in no layer"; bad=1
    elif ((theirs > mine)); then echo "$f:$n: \"$target\" goes up (core/$layer/ may include ${layers[*]:0:mine+1})"; bad=1
    elif [[ ! -f $target ]]; then echo "$f:$n: \"$target\" does not exist"; bad=1
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*/\1:/')
done < <(find core -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
if ((checked == 0)); then echo "check_layers: no includes found under $root/core"; exit 1; fi
if ((bad)); then echo "check_layers: FAILED"; exit 1; fi
echo "check_layers: $checked includes in core/ respect ${layers[*]}"
