#!/usr/bin/env bash
# cli_test.sh — end-to-end tests of the moe-roofline binary, one case per ctest entry (tests/cli/tests.cmake).
#
#   bash tests/cli/cli_test.sh ./build/moe-roofline grid        # run one case; exit 0 = pass
#   bash tests/cli/cli_test.sh ./build/moe-roofline list        # the case names
#
# Every case runs in a fresh temporary directory, so "no file left behind" is checked by listing it. The cases are in
# cases_sweep.sh, cases_eval.sh, cases_plan.sh and cases_serving.sh (sourced below); this file is the driver and the
# scenario files they share.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
case_name=$2
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# fail, run, listing, expect_bad_input, expect_lines, expect_ok, json_get
source "$here/lib.sh"

# A DeepSeek-V3 decode scenario on 8 H800s (DP-attention 8, EP 8), and a base for sweeps.
write_scenarios() {
    cat >dsv3.json <<'EOF'
{"model":"deepseek-v3","hardware":"h800","parallel":{"dp":8,"ep":8},"workload":{"phase":"decode","batch":32}}
EOF
    cat >qwen.json <<'EOF'
{"model":"qwen3-30b-a3b","hardware":"h20","workload":{"phase":"decode"}}
EOF
}

# A small MoE HF config (Qwen3-MoE layout) for --presets-dir and file-path model references.
write_tiny_model() {
    mkdir -p "$1"
    cat >"$1/tiny-moe.json" <<'EOF'
{"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe","hidden_size":1024,"intermediate_size":3072,
 "moe_intermediate_size":512,"num_experts":32,"num_experts_per_tok":4,"num_hidden_layers":8,
 "num_attention_heads":16,"num_key_value_heads":4,"head_dim":64,"vocab_size":32000,"torch_dtype":"bfloat16",
 "tie_word_embeddings":false,"decoder_sparse_step":1,"mlp_only_layers":[],"max_position_embeddings":32768}
EOF
}

# The cases, by section (each file only defines case_* functions and their own helpers).
for section in sweep eval plan serving; do
    source "$here/cases_$section.sh"
done

case_list() { declare -F | sed -n 's/^declare -f case_//p' | grep -v '^list$'; }

declare -F "case_$case_name" >/dev/null || fail "no such case"
"case_$case_name"
