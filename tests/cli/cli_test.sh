#!/usr/bin/env bash
# cli_test.sh — end-to-end tests of the moe-roofline binary, one case per ctest entry (tests/cli/tests.cmake).
#
#   bash tests/cli/cli_test.sh ./build/moe-roofline grid        # run one case; exit 0 = pass
#   bash tests/cli/cli_test.sh ./build/moe-roofline list        # the case names
#
# Every case runs in a fresh temporary directory, so "no file left behind" is checked by listing it.
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

case_grid() {  # header and row count of a 4 x 3 grid, first axis outermost
    write_scenarios
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1:8:x2 --axis workload.context_len=1024,4096,8192 \
        --columns decode.tpot_ms,memory.fits -o grid.csv -q
    [[ -f grid.csv ]] || fail "grid.csv not written"
    [[ $(head -1 grid.csv) == "workload.batch,workload.context_len,decode.tpot_ms,memory.fits,status,error" ]] ||
        fail "header: $(head -1 grid.csv)"
    [[ $(wc -l <grid.csv) -eq 13 ]] || fail "expected 1 header + 12 rows, got $(wc -l <grid.csv) lines"
    [[ $(sed -n 2p grid.csv | cut -d, -f1,2) == "1,1024" ]] || fail "row 1: $(sed -n 2p grid.csv)"
    [[ $(sed -n 3p grid.csv | cut -d, -f1,2) == "1,4096" ]] || fail "row 2 (inner axis fastest): $(sed -n 3p grid.csv)"
    [[ $(sed -n 5p grid.csv | cut -d, -f1,2) == "2,1024" ]] || fail "row 4: $(sed -n 5p grid.csv)"
    [[ $(tail -1 grid.csv | cut -d, -f1,2) == "8,8192" ]] || fail "last row: $(tail -1 grid.csv)"
    python3 - grid.csv <<'EOF' || fail "row contents"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert all(len(r) == 6 for r in rows), [len(r) for r in rows]
for r in rows[1:]:
    assert r[4] == "ok" and r[5] == "", r
    assert float(r[2]) > 0, r
    assert r[3] in ("true", "false"), r
# TPOT grows with context at a fixed batch
t = {(r[0], r[1]): float(r[2]) for r in rows[1:]}
assert t[("8", "1024")] < t[("8", "8192")], t
EOF
    ls -A | grep -q '^\.grid' && fail "temporary file left: $(ls -A)"
    true
}

case_default_columns() {  # without --columns: the axes, then every output column, including DESIGN §4.3's names
    write_scenarios
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=16,32 -q
    header=$(head -1 .stdout)
    for name in prefill.step_ms prefill.ttft_ms prefill.tokens_per_s_per_gpu decode.step_ms decode.tpot_ms \
        decode.tokens_per_s_per_gpu decode.tokens_per_s_per_user memory.weights_bytes memory.kv_cache_bytes \
        memory.activation_bytes memory.workspace_bytes memory.comm_buffer_bytes memory.reserved_bytes \
        memory.total_bytes memory.capacity_bytes memory.fits memory.kv_bytes_per_token memory.max_batch \
        model.total_params model.active_params status error; do
        [[ ",$header," == *",$name,"* ]] || fail "column $name missing from header: $header"
    done
    [[ $header == workload.batch,* ]] || fail "axis column is not first: $header"
    [[ $(wc -l <.stdout) -eq 3 ]] || fail "expected 3 lines on stdout"
    expect_ok "$bin" presets columns
    n_columns=$(($(wc -l <.stdout) - 1))
    [[ $(($(tr -cd , <<<"$header" | wc -c) + 1)) -eq $((n_columns + 1)) ]] || fail "header has not 1 + $n_columns columns"
}

case_determinism() {  # the same command twice gives byte-identical files, and stdout holds the same bytes
    write_scenarios
    args=(sweep dsv3.json --axis parallel.ep=1,2,4,8 --axis workload.batch=1:256:x2 --axis model=deepseek-v3,kimi-k2 -q)
    expect_ok "$bin" "${args[@]}" -o a.csv
    expect_ok "$bin" "${args[@]}" -o b.csv
    expect_ok "$bin" "${args[@]}" -o -
    cmp a.csv b.csv || fail "two runs differ"
    cmp a.csv .stdout || fail "file and stdout differ"
    [[ $(wc -l <a.csv) -eq $((1 + 4 * 9 * 2)) ]] || fail "row count $(wc -l <a.csv)"
}

case_invalid_point() {  # a point whose scenario is invalid gets a row with status and error; the sweep goes on
    write_scenarios
    expect_ok "$bin" sweep dsv3.json --axis parallel.ep=1,3,8 --columns decode.tpot_ms -q -o pts.csv
    python3 - pts.csv <<'EOF' || fail "rows: $(cat pts.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["parallel.ep"] for r in rows] == ["1", "3", "8"], rows
assert rows[0]["status"] == "ok" and rows[2]["status"] == "ok", rows
bad = rows[1]
assert bad["status"] != "ok" and "parallel.ep" in bad["error"], bad
assert bad["decode.tpot_ms"] == "", bad
EOF
}

case_bad_json() {
    write_scenarios
    printf '{"model": "deepseek-v3", "hardware": }\n' >broken.json
    expect_bad_input "broken.json: invalid JSON" "$bin" eval broken.json
    expect_bad_input "broken.json: invalid JSON" "$bin" sweep broken.json --axis workload.batch=1,2 -o out.csv
    expect_bad_input "standard input: invalid JSON" sh -c "echo '[1,' | '$bin' eval -"
    expect_bad_input "--set model" "$bin" eval dsv3.json --set 'model={"hidden_size":'
}

case_unknown_path() {
    write_scenarios
    expect_bad_input "foo.bar" "$bin" eval dsv3.json --set foo.bar=1
    expect_bad_input "foo.bar" "$bin" sweep dsv3.json --axis foo.bar=1,2 -o out.csv
    expect_bad_input "workload.batch" "$bin" eval dsv3.json --set workload.batch=many
    expect_bad_input "--set" "$bin" eval dsv3.json --set workload.batch
    printf '{"model":"deepseek-v3","parallel":{"epp":8}}' >typo.json
    expect_bad_input "parallel.epp" "$bin" eval typo.json
}

case_malformed_range() {
    write_scenarios
    for values in 1:0:x2 1:10:x1 a:b 1:8 1,,2 0:16:+4; do
        expect_bad_input "workload.batch" "$bin" sweep dsv3.json --axis "workload.batch=$values" -o out.csv
    done
    expect_bad_input "--axis" "$bin" sweep dsv3.json --axis workload.batch -o out.csv
    expect_bad_input "given twice" "$bin" sweep dsv3.json --axis workload.batch=1 --axis workload.batch=2 -o out.csv
    expect_bad_input "precision.kv_cache=fp9" "$bin" sweep dsv3.json --axis precision.kv_cache=fp8,fp9 -o out.csv
}

case_unknown_column() {
    write_scenarios
    expect_bad_input "decode.nope" "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns decode.tpot_ms,decode.nope -o out.csv
    expect_bad_input "given twice" "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns decode.tpot_ms,decode.tpot_ms -o out.csv
}

case_unreadable_scenario() {
    expect_bad_input "missing.json" "$bin" eval missing.json
    expect_bad_input "missing.json" "$bin" sweep missing.json --axis workload.batch=1,2 -o out.csv
    mkdir adir
    expect_bad_input "adir" "$bin" eval adir/
    expect_bad_input "no-such-preset" "$bin" eval no-such-preset
    printf '{"model":"./nowhere/config.json"}' >ref.json
    expect_bad_input "nowhere/config.json" "$bin" eval ref.json
}

case_unwritable_output() {
    write_scenarios
    expect_bad_input "nodir/out.csv" "$bin" sweep dsv3.json --axis workload.batch=1,2 -o nodir/out.csv
    touch plain
    expect_bad_input "plain/out.csv" "$bin" sweep dsv3.json --axis workload.batch=1,2 -o plain/out.csv
    mkdir outdir
    expect_bad_input "outdir" "$bin" sweep dsv3.json --axis workload.batch=1,2 -o outdir
}

case_keeps_old_file() {  # a failed sweep leaves an existing output file exactly as it was
    write_scenarios
    echo "precious" >out.csv
    expect_bad_input "workload.batch" "$bin" sweep dsv3.json --axis workload.batch=1:0:x2 -o out.csv
    [[ $(cat out.csv) == precious ]] || fail "out.csv was modified"
}

case_interrupt() {  # SIGINT and SIGTERM mid-sweep: exit 128+N, the old output file untouched, no temporary file
    write_scenarios
    echo precious >big.csv
    for sig in INT TERM; do
        "$bin" sweep dsv3.json --axis workload.batch=1:4096:+1 --axis workload.context_len=1024:65536:+2 \
            --axis parallel.ep=1,2,4,8 -o big.csv -q 2>err.txt &
        pid=$!
        # the temporary file appears once the grid is checked and the handlers are installed: interrupt mid-write
        for _ in $(seq 100); do ls -A | grep -q '^\.big\.csv\.' && break; sleep 0.1; done
        ls -A | grep -q '^\.big\.csv\.' || fail "SIG$sig: no temporary file while the sweep runs: $(ls -A)"
        sleep 0.2
        kill -$sig $pid
        wait $pid
        st=$?
        expected=$((128 + $(kill -l $sig)))
        [[ $st -eq $expected ]] || fail "SIG$sig: exit $st, expected $expected ($(cat err.txt))"
        grep -q "interrupted" err.txt || fail "SIG$sig: no message: $(cat err.txt)"
        rm -f err.txt
        [[ -z $(ls -A | grep -v -e '^dsv3.json$' -e '^qwen.json$' -e '^big.csv$') ]] || fail "SIG$sig left files: $(ls -A)"
        [[ $(cat big.csv) == precious ]] || fail "SIG$sig: big.csv was modified"
    done
}

case_output_links_and_kills() {  # issue 27: -o through symlinks writes their target; killed runs' temporaries are removed
    write_scenarios
    mkdir sub
    echo old >sub/t.csv
    ln -s sub/t.csv link.csv
    ln -s link.csv chain.csv
    ln -s sub/new.csv dangling.csv
    for out in link.csv chain.csv dangling.csv; do
        expect_ok "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns decode.tpot_ms -q -o "$out"
        [[ -L $out ]] || fail "-o $out replaced the link"
    done
    [[ $(head -1 sub/t.csv) == workload.batch,decode.tpot_ms,status,error ]] || fail "sub/t.csv: $(head -1 sub/t.csv)"
    [[ $(wc -l <sub/new.csv) -eq 3 ]] || fail "the dangling link's target was not written"
    ln -s loop2 loop1 && ln -s loop1 loop2
    expect_bad_input "-o loop1: too many levels of symbolic links" "$bin" sweep dsv3.json --axis workload.batch=1 -o loop1
    rm -f loop1 loop2 link.csv chain.csv dangling.csv && rm -rf sub
    # signals that end the process: the temporary file goes, exit 128+N (SIGKILL cannot be caught: the next run
    # into the directory removes what it left, and only temporaries of processes that are gone)
    echo precious >big.csv
    for sig in QUIT USR1 KILL; do
        "$bin" sweep dsv3.json --axis workload.batch=1:4096:+1 --axis workload.context_len=1024:65536:+2 -o big.csv -q 2>err.txt &
        pid=$!
        for _ in $(seq 100); do ls -A | grep -q '^\.big\.csv\.' && break; sleep 0.1; done
        sleep 0.2
        kill -$sig $pid
        wait $pid 2>/dev/null
        st=$?
        [[ $st -eq $((128 + $(kill -l $sig))) ]] || fail "SIG$sig: exit $st ($(cat err.txt))"
        [[ $sig == KILL ]] || [[ -z $(ls -A | grep '^\.big') ]] || fail "SIG$sig left $(ls -A | grep '^\.big')"
    done
    rm -f err.txt
    [[ $(ls -A | grep -c '^\.big\.csv\.moe-roofline-') -eq 1 ]] || fail "SIGKILL: expected one temporary: $(ls -A)"
    sleep 30 &
    local live=$!
    touch ".big.csv.moe-roofline-$(hostname | cut -c1-32)-$live-ABCDEF"
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1,2 -q -o big.csv
    kill $live
    [[ $(ls -A | grep '^\.big') == ".big.csv.moe-roofline-$(hostname | cut -c1-32)-$live-ABCDEF" ]] ||
        fail "after the next run: $(ls -A | grep '^\.big' | tr '\n' ' ') (the dead run's temporary removed, the live one's kept)"
    rm -f .big.csv.moe-roofline-*
    [[ $(wc -l <big.csv) -eq 3 ]] || fail "big.csv not written"
}

case_progress() {  # stderr that is not a terminal gets one line per 10% and a summary; a terminal, one redrawn line
    write_scenarios
    export MOE_ROOFLINE_PROGRESS_DELAY=0  # instead of a sweep that runs over a second
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1:1024:+1 --axis workload.context_len=1024:32768:+1024 \
        --columns status -o /dev/null
    grep -q "points/s" .stderr || fail "no progress lines: $(cat .stderr)"
    grep -q "s left" .stderr || fail "no ETA: $(cat .stderr)"
    [[ $(grep -c "%" .stderr) -ge 9 && $(grep -c "%" .stderr) -le 11 ]] || fail "not one line per 10%: $(cat .stderr)"
    tail -1 .stderr | grep -q "32768 points in" || fail "no summary line: $(tail -1 .stderr)"
    [[ -c /dev/null ]] || fail "/dev/null is no longer a device"
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1:1024:+1 --columns status -o out.csv -q
    [[ ! -s .stderr ]] || fail "--quiet printed: $(cat .stderr)"
    if command -v script >/dev/null; then  # a pseudo-terminal: redrawn in place with \r
        script -qec "'$bin' sweep dsv3.json --axis workload.batch=1:1024:+1 --axis workload.context_len=1024:32768:+1024 --columns status -o out.csv" tty.txt >/dev/null
        grep -q $'\r' tty.txt || fail "no carriage return on a terminal"
        [[ $(grep -c "points in" tty.txt) -eq 1 ]] || fail "terminal summary: $(cat -v tty.txt | tail -c 300)"
    fi
}

case_eval_json() {
    write_scenarios
    expect_ok "$bin" eval dsv3.json
    cp .stdout e.json
    [[ $(json_get e.json 'j["decode"]["tpot_ms"] > 0') == True ]] || fail "decode.tpot_ms: $(head -c 400 e.json)"
    [[ $(json_get e.json 'j["memory"]["weights_bytes"] > 0') == True ]] || fail "memory.weights_bytes"
    [[ $(json_get e.json 'len(j["layers"]) > 0') == True ]] || fail "layers"
    [[ $(json_get e.json 'j["errors"] == [] and j["status"] == "ok"') == True ]] || fail "errors/status"
    [[ $(json_get e.json 'isinstance(j["warnings"], list)') == True ]] || fail "warnings"
    # standard input and a --set give the same numbers as the file with the field edited
    expect_ok sh -c "cat dsv3.json | '$bin' eval - --set workload.batch=64"
    cp .stdout stdin.json
    sed 's/"batch":32/"batch":64/' dsv3.json >b64.json
    expect_ok "$bin" eval b64.json
    cmp -s .stdout stdin.json || fail "eval - --set workload.batch=64 differs from the edited file"
}

case_eval_invalid() {  # a cross-field error: one line naming the field; json still printed with its errors
    write_scenarios
    expect_bad_input "parallel.ep: 3 does not divide tp*dp = 8" "$bin" eval dsv3.json --set parallel.ep=3 --format table
    expect_lines 2
    [[ $(sed -n 2p .stderr) == "moe-roofline: parallel.ep: 3 does not divide 256 routed experts + 0 redundant" ]] ||
        fail "line 2: $(sed -n 2p .stderr)"
    run "$bin" eval dsv3.json --set parallel.ep=3
    [[ $status -eq 2 ]] || fail "exit $status"
    cp .stdout e.json
    [[ $(json_get e.json 'any("parallel.ep" in str(x) for x in j["errors"])') == True ]] || fail "errors: $(cat e.json)"
}

case_eval_table() {
    write_scenarios
    expect_ok "$bin" eval dsv3.json --format table
    for text in "TPOT" "tokens/s per GPU" "Decode operators" "Memory per GPU" "KV cache" "largest decode batch"; do
        grep -qF "$text" .stdout || fail "table lacks '$text'"
    done
    expect_bad_input "--format" "$bin" eval dsv3.json --format yaml
}

case_url_roundtrip() {  # url -> the page's codec -> the same scenario, and the same numbers
    write_scenarios
    expect_ok "$bin" url dsv3.json
    link=$(cat .stdout)
    [[ $link == "http://127.0.0.1:8080/#s="* ]] || fail "link: $link"
    expect_ok "$bin" url --decode "$link"
    cp .stdout decoded.json
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a!=b)' \
        dsv3.json decoded.json || fail "decoded $(cat decoded.json) != $(cat dsv3.json)"
    expect_ok "$bin" eval dsv3.json
    cp .stdout direct.json
    expect_ok sh -c "'$bin' url --decode '$link' | '$bin' eval -"
    cmp -s .stdout direct.json || fail "eval of the decoded link differs"
    expect_ok "$bin" url dsv3.json --base https://example.org/calc/ --set workload.batch=7
    [[ $(cat .stdout) == "https://example.org/calc/#s="* ]] || fail "--base: $(cat .stdout)"
    expect_ok "$bin" url --decode "$(cat .stdout)"
    [[ $(json_get .stdout 'j["workload"]["batch"]') == 7 ]] || fail "--set not in the link: $(cat .stdout)"
    expect_bad_input "--decode" "$bin" url --decode 'http://x/#s=%%%not-base64'
}

case_presets_dir() {  # a user's model via --presets-dir, via a path in --set, and via a path in a scenario file
    write_scenarios
    write_tiny_model mine/models
    expect_ok "$bin" --presets-dir mine presets models
    grep -q '^ *tiny-moe ' .stdout || fail "tiny-moe not listed: $(cat .stdout)"
    grep -q 'deepseek-v3' .stdout || fail "builtin models missing"
    expect_ok "$bin" eval qwen.json --presets-dir mine --set model=tiny-moe
    cp .stdout preset.json
    [[ $(json_get preset.json 'j["model"]["total_params"] < 1e9') == True ]] || fail "not the tiny model"
    expect_ok "$bin" eval qwen.json --set model=./mine/models/tiny-moe.json
    cp .stdout path.json
    [[ $(json_get path.json 'j["decode"]["tpot_ms"]') == $(json_get preset.json 'j["decode"]["tpot_ms"]') ]] ||
        fail "a config path and the same config as a preset give different TPOT"
    mkdir -p runs
    printf '{"model":"../mine/models/tiny-moe.json","hardware":"h20","workload":{"phase":"decode"}}' >runs/tiny.json
    expect_ok "$bin" eval runs/tiny.json
    [[ $(json_get .stdout 'j["decode"]["tpot_ms"]') == $(json_get preset.json 'j["decode"]["tpot_ms"]') ]] ||
        fail "a config path inside a scenario file (relative to it) differs"
    expect_ok "$bin" sweep qwen.json --axis model=./mine/models/tiny-moe.json,qwen3-30b-a3b --columns model.total_params -q
    [[ $(wc -l <.stdout) -eq 3 ]] || fail "model path axis: $(cat .stdout)"
    # a user's GPU and a user's scenario that names the user's model by a path relative to itself
    mkdir -p mine/hardware mine/scenarios
    printf '{"name":"Test GPU","arch":"hopper","dense_tflops_bf16":500,"dense_tflops_fp8":1000,"hbm_bandwidth_GBps":2000,"hbm_capacity_GiB":64,"nvlink_bandwidth_GBps":200,"rdma_bandwidth_GBps":25,"gpus_per_node":8,"sm_count":100,"tables_fallback":"h800"}' >mine/hardware/test-gpu.json
    printf '{"description":"tiny on the test GPU","model":"../models/tiny-moe.json","hardware":"test-gpu","workload":{"phase":"decode"}}' >mine/scenarios/tiny-test.json
    expect_ok "$bin" --presets-dir mine presets
    grep -q 'test-gpu .*Test GPU' .stdout || fail "test-gpu not listed: $(cat .stdout)"
    grep -q 'tiny-test .*tiny on the test GPU' .stdout || fail "tiny-test not listed"
    expect_ok "$bin" --presets-dir mine eval tiny-test
    [[ $(json_get .stdout 'j["model"]["total_params"] < 1e9') == True ]] || fail "user scenario: not the tiny model"
    expect_ok "$bin" --presets-dir mine eval tiny-test --set hardware=h20
    [[ $(json_get .stdout 'j["decode"]["tpot_ms"]') == $(json_get preset.json 'j["decode"]["tpot_ms"]') ]] ||
        fail "user scenario on h20 differs from the same model on h20"
    mkdir -p bad/models
    echo '{"hidden_size": "big"}' >bad/models/broken.json
    expect_bad_input "broken" "$bin" --presets-dir bad presets models
    expect_bad_input "nope" "$bin" --presets-dir nope presets
}

case_presets() {
    expect_ok "$bin" presets
    for id in deepseek-v3 kimi-k2 qwen3-30b-a3b h800 h200 b200; do grep -q "$id" .stdout || fail "$id not listed"; done
    expect_ok "$bin" presets hardware
    grep -q "TFLOPS" .stdout || fail "hardware without specs: $(cat .stdout)"
    expect_ok "$bin" presets fields
    grep -q "workload.batch" .stdout || fail "fields listing"
    expect_bad_input "KIND" "$bin" presets gpus
}

case_help() {
    for sub in eval sweep presets url plan; do
        expect_ok "$bin" $sub --help
        grep -q "Examples" .stdout || fail "$sub --help has no examples"
    done
    expect_bad_input "moe-roofline" "$bin" frobnicate
    expect_bad_input "SCENARIO" "$bin" eval
}

case_limits() {  # issue 8: oversized, deeply nested and hostile inputs are bad input naming the file or field, never a crash
    write_scenarios
    python3 -c "open('big.json','w').write('{\"description\":\"' + 'x' * (5 << 20) + '\"}')"
    expect_bad_input "big.json: larger than 4 MiB" "$bin" eval big.json
    expect_bad_input "standard input: larger than 4 MiB" sh -c "'$bin' eval - <big.json"
    python3 -c "open('deep.json','w').write('{\"model\":' + '[' * 100000 + ']' * 100000 + '}')"
    expect_bad_input "deep.json: nested deeper than 64 levels at line 1, column 73" "$bin" eval deep.json
    mkdir -p presets/models && cp deep.json presets/models/deep.json
    expect_bad_input "presets/models/deep.json: nested deeper than 64 levels" "$bin" --presets-dir presets presets models
    printf '{"model":"qwen3-8b","description":"[[[[{{{{ \\" [[[["}' >brackets.json
    expect_ok "$bin" eval brackets.json
    expect_bad_input "--set model: 70" "$bin" eval dsv3.json --set "model={\"a\":\"$(printf '%*s' 70000 '' | tr ' ' x)\"}"
    expect_bad_input "precision.kv_cache: unknown dtype" "$bin" eval dsv3.json --set precision.kv_cache=$'\xff'
    expect_bad_input "model: unknown preset" "$bin" eval dsv3.json --set model=$'\xff' --format json
    python3 -c "import json,sys; json.load(open(sys.argv[1]))" .stdout || fail "eval --format json printed invalid JSON"
    expect_bad_input "(workload.batch 1000 x workload.prompt_len 1000 x workload.output_len 1001 x ...); the limit is 1e9" \
        "$bin" sweep dsv3.json --axis workload.batch=1:1000:+1 --axis workload.prompt_len=1:1000:+1 \
        --axis workload.output_len=1:1001:+1 --axis workload.context_len=1:10:+1 -o out.csv
}

case_number_overflow() {  # issue 27: a number beyond a double (1e999) on every input path: exit 2 naming file, line and field
    write_scenarios
    write_tiny_model .
    local tail="is out of range: a number is at most 1.8e308 in magnitude"
    expect_bad_input "standard input: line 1, column 22: workload.batch: 1e999 $tail" \
        sh -c "echo '{\"workload\":{\"batch\":1e999}}' | '$bin' eval -"
    printf '{\n  "model": "deepseek-v3",\n  "workload": {"batch": -1e400}\n}\n' >huge.json
    for cmd in "eval huge.json" "url huge.json" "sweep huge.json --axis workload.batch=1,2 -o out.csv" "plan huge.json --gpus 8"; do
        # shellcheck disable=SC2086
        expect_bad_input "huge.json: line 3, column 25: workload.batch: -1e400 $tail" "$bin" $cmd
    done
    sed 's/"hidden_size":1024/"hidden_size":1e999/' tiny-moe.json >cfg.json
    expect_bad_input "cfg.json: line 1, column 81: hidden_size: 1e999" "$bin" eval dsv3.json --set model=./cfg.json
    expect_bad_input "cfg.json: line 1, column 81: hidden_size: 1e999" "$bin" sweep dsv3.json --axis model=deepseek-v3,./cfg.json -o out.csv
    printf '{"model":"./cfg.json","hardware":"h200"}' >ref.json
    expect_bad_input "cfg.json: line 1, column 81: hidden_size: 1e999" "$bin" eval ref.json
    mkdir -p mine/models && cp cfg.json mine/models/big.json
    expect_bad_input "mine/models/big.json: line 1, column 81: hidden_size: 1e999" "$bin" --presets-dir mine presets models
    expect_bad_input "--set model: line 1, column 16: model.hidden_size: 1e999" "$bin" eval dsv3.json --set 'model={"hidden_size":1e999}'
    expect_bad_input "--set hardware: line 1, column 21: hardware.hbm_capacity_GiB: 1e999" \
        "$bin" eval dsv3.json --set 'hardware={"hbm_capacity_GiB":1e999}'
    printf '{"batch": [16, 32,\n  1e999]}' >space.json
    expect_bad_input "space.json: line 2, column 3: space.batch[2]: 1e999" "$bin" plan dsv3.json --gpus 8 --space space.json
    local link
    link=$(printf '{"workload":{"batch":1e999}}' | base64 -w0 | tr '+/' '-_' | tr -d '=')
    expect_bad_input "line 1, column 22: workload.batch: 1e999" "$bin" url --decode "#s=$link"
}

case_messages() {  # issue 27: each error on its own line naming its own field, at most 300 bytes, long values cut
    write_scenarios
    local long
    long=$(printf '%*s' 70000 '' | tr ' ' x)
    expect_bad_input "--columns: unknown column 'xxxxxxxx" "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns "decode.tpot_ms,$long" -o out.csv
    grep -qF "xxx..." .stderr || fail "the long column name is not cut: $(cut -c1-200 .stderr)"
    expect_lines 1
    expect_bad_input "SCENARIO 'xxxx" "$bin" eval "$long"
    expect_bad_input "--axis model: /missing.json: cannot read" "$bin" sweep dsv3.json --axis model=deepseek-v3,/missing.json -o out.csv
    expect_bad_input "--set model: ./nowhere.json: cannot read" "$bin" eval dsv3.json --set model=./nowhere.json
    echo '{"model":"deepseek-v3","workload":{"batch":-1,"context_len":-5},"precision":{"kv_cache":"fp9"}}' >three.json
    expect_bad_input "workload.context_len: -5 is out of range" "$bin" eval three.json
    expect_lines 3
    [[ $(sed -n 1p .stderr) == "moe-roofline: precision.kv_cache: unknown dtype \"fp9\""* ]] || fail "line 1: $(sed -n 1p .stderr)"
    [[ $(sed -n 2p .stderr) == "moe-roofline: workload.batch: -1 is out of range"* ]] || fail "line 2: $(sed -n 2p .stderr)"
    # a too-large attention DP without EP names dp, not the ep it never set
    echo '{"model":"deepseek-v3","serving":{"mode":"disaggregated","decode":{"parallel":{"dp":4096}}}}' >dp.json
    expect_bad_input "serving.decode.parallel.dp: 4096 with ep 1 leaves experts tensor-parallel" "$bin" eval dp.json
    expect_lines 1
    expect_bad_input "parallel.dp: 4096 with ep 1" "$bin" eval dsv3.json --set parallel.dp=4096 --set parallel.ep=1
}

# ---- plan, --threads, --shard (issue 13) ----------------------------------------------------------------------------
write_plan_scenario() {  # DeepSeek-V3 on H200 at 2K in / 1K out
    echo '{"model":"deepseek-v3","hardware":"h200","workload":{"prompt_len":2048,"output_len":1024}}' >plan.json
}

case_plan_front_sla() {  # the front of DeepSeek-V3 on 64 H200 at TPOT <= 30 ms: every row, through its link, meets the SLA and fits
    write_plan_scenario
    expect_ok "$bin" plan plan.json --gpus 64 --tpot-ms 30 --format csv
    cp .stdout front.csv
    python3 - "$bin" front.csv <<'PY' || fail "the front does not hold"
import csv, json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path)))
assert len(rows) >= 3, f"a front of {len(rows)} rows"
for k, r in enumerate(rows):
    assert r["rank"] == str(k + 1) and r["status"] == "front", r
    scenario = subprocess.run([binary, "url", "--decode", r["link"]], check=True, capture_output=True, text=True).stdout
    e = json.loads(subprocess.run([binary, "eval", "-"], input=scenario, check=True, capture_output=True, text=True).stdout)
    assert e["status"] == "ok" and e["memory"]["fits"] is True, (r["rank"], e["errors"], e["memory"]["fits"])
    assert e["decode"]["tpot_ms"] <= 30, (r["rank"], e["decode"]["tpot_ms"])
    assert e["decode"]["tpot_ms"] == float(r["tpot_ms"]), (r["rank"], e["decode"]["tpot_ms"], r["tpot_ms"])
    assert e["decode"]["tokens_per_s_per_gpu"] == float(r["output_tokens_per_s_per_gpu"]), r["rank"]
    assert e["prefill"]["ttft_ms"] == float(r["ttft_ms"]), r["rank"]
    assert r["command"].startswith("python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3"), r["command"]
g = [float(r["output_tokens_per_s_per_gpu"]) for r in rows]
u = [float(r["tokens_per_s_per_user"]) for r in rows]
for i in range(len(rows)):
    for j in range(len(rows)):
        assert not (i != j and g[j] >= g[i] and u[j] >= u[i] and (g[j] > g[i] or u[j] > u[i])), f"row {i+1} dominated by {j+1}"
assert g == sorted(g, reverse=True), "not best per GPU first"
PY
    # --all: the front first, then every other point with its reason; the counts add up
    expect_ok "$bin" plan plan.json --gpus 64 --tpot-ms 30 --format json --all
    json_get .stdout 'j["counts"]["points"] == len(j["front"]) + len(j["others"]) and j["counts"]["front"] == len(j["front"]) and all(o["reason"] for o in j["others"])' |
        grep -qx True || fail "--all does not list every point with a reason"
    expect_ok "$bin" plan plan.json --gpus 64 --tpot-ms 30
    grep -q '^front: ' .stdout || fail "table without its summary"
    grep -q 'miss TPOT' .stdout || fail "table summary without the reasons"
}

case_plan_default_ttft() {  # issue 26: a serving plan with no TTFT limit gets 10 s, says so, and marks queue-bound rows
    printf '%s' '{"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}}' >serve.json
    expect_ok "$bin" plan serve.json --gpus 64 --tpot-ms 30 --format csv
    grep -q 'TTFT <= 10000 ms by default (--ttft-ms none lifts it)' .stderr || fail "the default limit is not stated"
    cp .stdout front.csv
    expect_ok "$bin" plan serve.json --gpus 64 --tpot-ms 30 --ttft-ms none --format csv
    cp .stdout lifted.csv
    python3 - front.csv lifted.csv <<'PY' || fail "the default TTFT limit does not hold"
import csv, sys
front = list(csv.DictReader(open(sys.argv[1])))
lifted = list(csv.DictReader(open(sys.argv[2])))
assert len(front) >= 3, len(front)
assert all(float(r["ttft_ms"]) <= 10000 for r in front), [r["ttft_ms"] for r in front]
# without the limit the front holds rows a user would not run: a minute and more to the first token
assert max(float(r["ttft_ms"]) for r in lifted) > 60000, max(float(r["ttft_ms"]) for r in lifted)
# every front row says when its TTFT is mostly waiting, and only then
for r in front + lifted:
    note = r["reason"]
    assert note == "" or note.startswith("TTFT mostly queueing: "), note
assert any(r["reason"] for r in lifted if float(r["ttft_ms"]) > 60000)
PY
    expect_ok "$bin" plan serve.json --gpus 64 --tpot-ms 30
    grep -q 'the TTFT limit is the serving default' .stdout || fail "the table's preamble does not state the default"
    # an explicit limit replaces it; a step-level plan has none by default
    expect_ok "$bin" plan serve.json --gpus 64 --tpot-ms 30 --ttft-ms 2500 --format csv
    grep -q 'by default' .stderr && fail "an explicit --ttft-ms is still called the default"
    write_plan_scenario
    expect_ok "$bin" plan plan.json --gpus 8 --format csv
    grep -q 'by default' .stderr && fail "a step-level plan got the serving default"
    expect_bad_input "--ttft-ms: must be a positive number or none" "$bin" plan serve.json --gpus 64 --ttft-ms soon
    true
}

case_plan_scale_out() {  # plan: threaded and sharded runs are byte-identical to one thread
    write_plan_scenario
    echo '{"tp":[1,2,8],"batch":[16,64,256],"mtp_draft_tokens":[0,1]}' >space.json
    for format in csv table; do
        expect_ok "$bin" plan plan.json --gpus 32 --tpot-ms 40 --space space.json --all --format $format --threads 1
        cp .stdout one.txt
        expect_ok "$bin" plan plan.json --gpus 32 --tpot-ms 40 --space space.json --all --format $format --threads 3
        cmp -s .stdout one.txt || fail "$format: --threads 3 differs from --threads 1"
        rm -f parts.txt
        for k in 1 2 3 4; do
            expect_ok "$bin" plan plan.json --gpus 32 --tpot-ms 40 --space space.json --all --format $format --shard $k/4
            cat .stdout >>parts.txt
        done
        cmp -s parts.txt one.txt || fail "$format: 4 shards concatenated differ from the whole"
    done
    expect_bad_input "--shard: needs --format table or csv" "$bin" plan plan.json --gpus 8 --format json --shard 1/2
}

case_plan_serving_disaggregated() {  # with the serving layer: aggregated and disaggregated rows, each through its link meets the SLA and fits
    echo '{"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}}' >served.json
    echo '{"batch":[16,64,256],"mtp_draft_tokens":[0,1],"kv_cache":["fp8"]}' >space.json
    # (64 GPUs: on 32 the aggregated layouts dominate every disaggregated one; --ttft-ms none: these disaggregated
    # rows take over the default 10 s to the first token)
    expect_ok "$bin" plan served.json --gpus 64 --tpot-ms 40 --ttft-ms none --space space.json --format csv
    cp .stdout front.csv
    python3 - "$bin" front.csv <<'PY' || fail "the served front does not hold"
import csv, json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path)))
assert len(rows) >= 2, f"a front of {len(rows)} rows"
modes = {r["mode"] for r in rows}
assert "disaggregated" in modes, modes
for r in rows:
    scenario = subprocess.run([binary, "url", "--decode", r["link"]], check=True, capture_output=True, text=True).stdout
    e = json.loads(subprocess.run([binary, "eval", "-"], input=scenario, check=True, capture_output=True, text=True).stdout)
    s = e["serving"]
    assert e["status"] == "ok" and s["fits"] is True, (r["rank"], e["errors"])
    assert s["tpot_ms"] <= 40 and s["tpot_ms"] == float(r["tpot_ms"]), (r["rank"], s["tpot_ms"], r["tpot_ms"])
    assert s["output_tokens_per_s_per_gpu"] == float(r["output_tokens_per_s_per_gpu"]), r["rank"]
    assert s["ttft_ms"] == float(r["ttft_ms"]), r["rank"]
    assert int(s["gpus"]) == int(r["gpus"]), (r["rank"], s["gpus"], r["gpus"])
    if r["mode"] == "disaggregated":
        assert "--disaggregation-mode prefill" in r["prefill_command"] and "--disaggregation-mode decode" in r["command"], r
        assert int(r["gpus"]) == int(r["prefill_workers"]) * int(r["prefill_tp"]) * int(r["prefill_dp"]) + int(r["decode_workers"]) * int(r["tp"]) * int(r["dp"]) * int(r["pp"]), r
    else:
        assert e["memory"]["fits"] is True, r["rank"]
g = [float(r["output_tokens_per_s_per_gpu"]) for r in rows]
u = [float(r["tokens_per_s_per_user"]) for r in rows]
for i in range(len(rows)):
    for j in range(len(rows)):
        assert not (i != j and g[j] >= g[i] and u[j] >= u[i] and (g[j] > g[i] or u[j] > u[i])), f"row {i+1} dominated by {j+1}"
PY
    # threads and shards give the same bytes with disaggregated rows too
    expect_ok "$bin" plan served.json --gpus 16 --tpot-ms 60 --space space.json --all --format csv --threads 1
    cp .stdout one.txt
    expect_ok "$bin" plan served.json --gpus 16 --tpot-ms 60 --space space.json --all --format csv --threads 3
    cmp -s .stdout one.txt || fail "--threads 3 differs from --threads 1"
    rm -f parts.txt
    for k in 1 2 3; do
        expect_ok "$bin" plan served.json --gpus 16 --tpot-ms 60 --space space.json --all --format csv --shard $k/3
        cat .stdout >>parts.txt
    done
    cmp -s parts.txt one.txt || fail "3 shards concatenated differ from the whole"
    grep -q ',disaggregated,' one.txt || fail "no disaggregated rows"
    # one engine for numbers and commands: --engine vllm prices the rows with vLLM's constants (its links carry
    # runtime.engine vllm and their numbers), and a scenario naming trtllm gets trtllm-serve without --engine
    echo '{"mode":["aggregated"],"batch":[16,64],"kv_cache":["fp8"],"mtp_draft_tokens":[0],"tp":[8],"dp":[1]}' >agg.json
    expect_ok "$bin" plan served.json --gpus 8 --space agg.json --engine vllm --format csv
    cp .stdout vllm.csv
    python3 - "$bin" vllm.csv <<'PY' || fail "--engine vllm: the rows are not vLLM's numbers"
import csv, json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
for r in csv.DictReader(open(path)):
    assert r["command"].startswith("vllm serve"), r["command"]
    scenario = json.loads(subprocess.run([binary, "url", "--decode", r["link"]], check=True, capture_output=True, text=True).stdout)
    assert scenario["runtime"]["engine"] == "vllm", scenario
    e = json.loads(subprocess.run([binary, "eval", "-"], input=json.dumps(scenario), check=True, capture_output=True, text=True).stdout)
    assert e["serving"]["ttft_ms"] == float(r["ttft_ms"]), r["rank"]
PY
    expect_ok "$bin" plan served.json --gpus 8 --space agg.json --set runtime.engine=trtllm --format csv
    python3 -c 'import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]))); assert rows and all("trtllm-serve " in r["command"] for r in rows)' .stdout \
        || fail "a trtllm scenario without --engine did not get trtllm-serve commands"
    # disaggregated without the serving layer is a usage error naming the space key
    echo '{"mode":["disaggregated"]}' >dis.json
    write_plan_scenario
    expect_bad_input "space.mode: disaggregated plans need the serving layer" "$bin" plan plan.json --gpus 8 --space dis.json
}

case_plan_large_space() {  # issue 27: a space over the limit is refused with its size; repeats dropped; memory flat in the points
    echo '{"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}}' >serve.json
    python3 -c "import json; json.dump({'batch': list(range(1, 101))}, open('b100.json', 'w'))"
    expect_bad_input "space: 154,244,800 points (1,432 layouts x 100 batches x options: 2,179,200 aggregated, 152,065,600 disaggregated) exceed the limit of 100,000,000; narrow --space" \
        "$bin" plan serve.json --gpus 65536 --space b100.json
    expect_lines 1
    # 100,000 equal batches are one batch (was 100,000 times the work and 5 GiB)
    python3 -c "import json; json.dump({'batch': [64] * 100000}, open('same.json', 'w'))"
    echo '{"batch": [64]}' >one.json
    expect_ok "$bin" plan serve.json --gpus 8 --space same.json --format csv --all --threads 1
    cp .stdout same.csv
    expect_ok "$bin" plan serve.json --gpus 8 --space one.json --format csv --all --threads 1
    cmp -s .stdout same.csv || fail "repeated batches changed the plan"
    [[ $(grep -o 'of [0-9]* searched' .stderr) == "of 720 searched" ]] || fail "summary: $(cat .stderr)"
    # peak RSS at 10^4 and 10^5 points: the front and the counts are kept, not the points
    [[ -x /usr/bin/time ]] || return 0
    python3 -c "import json; json.dump({'batch': list(range(1, 15))}, open('b14.json', 'w'))"
    python3 -c "import json; json.dump({'batch': list(range(1, 140))}, open('b139.json', 'w'))"
    local small big
    # (under ASan a small quarantine: freed memory it holds back grows with the work done, not with what is kept)
    local asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
    ASAN_OPTIONS=$asan /usr/bin/time -f '%M' -o rss14 "$bin" plan serve.json --gpus 8 --space b14.json --format csv --threads 1 >/dev/null 2>&1 || fail "plan 10^4"
    ASAN_OPTIONS=$asan /usr/bin/time -f '%M' -o rss139 "$bin" plan serve.json --gpus 8 --space b139.json --format csv --all --threads 1 >/dev/null 2>&1 || fail "plan 10^5"
    small=$(tail -1 rss14)
    big=$(tail -1 rss139)
    rm -f rss14 rss139
    ((big < small * 13 / 10 + 2048)) || fail "peak RSS grew from $small KB (10^4 points) to $big KB (10^5 points, --all)"
}

case_sweep_scale_out() {  # sweep: threaded and sharded runs are byte-identical to one thread
    write_scenarios
    local axes=(--axis parallel.ep=1,8,3 --axis workload.batch=1:300:+1 --axis workload.context_len=1024,8192 -q)
    expect_ok "$bin" sweep dsv3.json "${axes[@]}" --threads 1 -o one.csv
    expect_ok "$bin" sweep dsv3.json "${axes[@]}" --threads 4 -o four.csv
    cmp -s one.csv four.csv || fail "--threads 4 differs from --threads 1"
    grep -q ',error,' one.csv || fail "expected invalid points (ep 3) in the grid"
    rm -f parts.csv
    for k in 1 2 3 4 5 6 7; do
        expect_ok "$bin" sweep dsv3.json "${axes[@]}" --shard $k/7 --threads 2 -o -
        cat .stdout >>parts.csv
    done
    cmp -s parts.csv one.csv || fail "7 shards concatenated differ from the whole"
    [[ $(grep -c '^workload\|^parallel' parts.csv) -eq 1 ]] || fail "the header is not printed once"
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1,2 --shard 3/3 -q  # more shards than rows: empty parts
    [[ $(wc -l <.stdout) -eq 1 ]] || fail "shard 3/3 of 2 rows: $(cat .stdout)"
}

case_plan_hardware_objective() {  # issue 28: one front over GPUs and engines, ranked by $ per million output tokens
    printf '%s' '{"model":"qwen3-30b-a3b","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":512}}' >mix.json
    echo '{"mode":["aggregated"],"batch":[8,32,128],"tp":[1,2,4],"pp":[1]}' >space.json
    expect_ok "$bin" plan mix.json --gpus 8 --tpot-ms 40 --space space.json --hardware h200,b200,h100-sxm \
        --engine sglang,vllm --objective cost --format csv
    cp .stdout mix.csv
    python3 - "$bin" mix.csv <<'PY' || fail "the mixed front does not hold"
import csv, json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path)))
assert len(rows) >= 3, f"a front of {len(rows)} rows"
price = {"h200": 3.59, "b200": 5.98, "h100-sxm": 2.69}   # presets/hardware/README.md
assert {r["hardware"] for r in rows} <= set(price) and len({r["hardware"] for r in rows}) >= 2, [r["hardware"] for r in rows]
usd = [float(r["usd_per_mtok_output"]) for r in rows]
user = [float(r["tokens_per_s_per_user"]) for r in rows]
assert usd == sorted(usd), "not cheapest first"
for i in range(len(rows)):
    for j in range(len(rows)):
        assert not (i != j and usd[j] <= usd[i] and user[j] >= user[i] and (usd[j] < usd[i] or user[j] > user[i])), f"row {i+1} dominated by {j+1}"
for r in rows:
    tps = float(r["output_tokens_per_s_per_gpu"])
    assert abs(float(r["usd_per_mtok_output"]) - price[r["hardware"]] / 3600 / tps * 1e6) < 1e-9 * float(r["usd_per_mtok_output"]), r
    scenario = subprocess.run([binary, "url", "--decode", r["link"]], check=True, capture_output=True, text=True).stdout
    e = json.loads(subprocess.run([binary, "eval", "-"], input=scenario, check=True, capture_output=True, text=True).stdout)
    assert e["status"] == "ok", e["errors"]
    assert json.loads(scenario).get("hardware", "h200") == r["hardware"], (scenario, r["hardware"])
    assert e["serving"]["usd_per_mtok_output"] == float(r["usd_per_mtok_output"]), r["rank"]
    assert e["serving"]["joules_per_token"] == float(r["joules_per_token"]), r["rank"]
    assert r["command"].startswith("python -m sglang" if r["engine"] == "sglang" else "vllm serve"), r["command"]
PY
    # one GPU: the cost front is the throughput front (one price scales every row alike)
    expect_ok "$bin" plan mix.json --gpus 8 --tpot-ms 40 --space space.json --objective cost --format csv
    cut -d, -f1-8 .stdout >cost.csv
    expect_ok "$bin" plan mix.json --gpus 8 --tpot-ms 40 --space space.json --format csv
    cut -d, -f1-8 .stdout >throughput.csv
    cmp -s cost.csv throughput.csv || fail "one GPU's cost front differs from its throughput front"
    expect_ok "$bin" plan mix.json --gpus 8 --tpot-ms 40 --space space.json --hardware h200,b200 --objective cost
    grep -q 'cheapest first' .stdout || fail "the table does not say what it ranks by"
    grep -q '{h200, b200}' .stdout || fail "the table does not name the GPUs"
    expect_bad_input "--hardware: 'h999'" "$bin" plan mix.json --gpus 8 --hardware h200,h999
    expect_bad_input "--objective cost: h20 has no example GPU-hour price" "$bin" plan mix.json --gpus 8 --hardware h20 --objective cost
    expect_bad_input "--all: needs one --hardware" "$bin" plan mix.json --gpus 8 --hardware h200,b200 --all
    expect_bad_input "--engine: 'tgi'" "$bin" plan mix.json --gpus 8 --engine sglang,tgi
    expect_bad_input "--objective" "$bin" plan mix.json --gpus 8 --objective cheap
}

case_plan_bad_flags() {  # bad flags: exit 2, one line naming the flag
    write_plan_scenario
    expect_bad_input "--gpus" "$bin" plan plan.json
    expect_bad_input "--gpus" "$bin" plan plan.json --gpus 0
    expect_bad_input "--gpus" "$bin" plan plan.json --gpus 1.5
    expect_bad_input "--tpot-ms" "$bin" plan plan.json --gpus 8 --tpot-ms -3
    expect_bad_input "--ttft-ms" "$bin" plan plan.json --gpus 8 --ttft-ms abc
    expect_bad_input "--min-tokens-per-s-per-user" "$bin" plan plan.json --gpus 8 --min-tokens-per-s-per-user 0
    expect_bad_input "--format" "$bin" plan plan.json --gpus 8 --format xml
    expect_bad_input "--engine" "$bin" plan plan.json --gpus 8 --engine tgi
    expect_bad_input "--threads" "$bin" plan plan.json --gpus 8 --threads 0
    expect_bad_input "--shard" "$bin" plan plan.json --gpus 8 --shard 5/4
    expect_bad_input "--shard" "$bin" sweep plan.json --axis workload.batch=1,2 --shard 1of2
    expect_bad_input "--threads" "$bin" sweep plan.json --axis workload.batch=1,2 --threads -1
    expect_bad_input "nope.json" "$bin" plan plan.json --gpus 8 --space nope.json
    echo '{"tpp":[1]}' >space.json
    expect_bad_input "space.tpp: unknown key" "$bin" plan plan.json --gpus 8 --space space.json
    echo '{"mode":["disaggregated"]}' >space.json
    expect_bad_input "space.mode" "$bin" plan plan.json --gpus 8 --space space.json
}

case_serving() {  # issue 12: serving fields evaluate, sweep as axes, and bad ones are named
    echo '{"model":"llama-3.1-70b","hardware":"h200","parallel":{"tp":4},"runtime":{"engine":"vllm"},
 "serving":{"mode":"aggregated","isl":1024,"osl":1024,"concurrency":64}}' >serve.json
    expect_ok "$bin" eval serve.json --format json
    cp .stdout serve_out.json
    for k in ttft_ms tpot_ms e2e_latency_ms output_tokens_per_s_per_gpu tokens_per_s_per_user requests_per_s gpus fits; do
        [[ $(json_get serve_out.json "j['serving']['$k'] is not None") == True ]] || fail "eval: serving.$k is missing"
    done
    [[ $(json_get serve_out.json "abs(j['serving']['tokens_per_s_per_user'] * j['serving']['tpot_ms'] - 1000) < 1e-6") == True ]] ||
        fail "tokens_per_s_per_user is not 1000 / TPOT"
    # every serving field is a sweep axis; a mode-off row leaves the serving columns empty
    expect_ok "$bin" sweep serve.json --axis serving.concurrency=1,64 --axis runtime.engine=sglang,trtllm \
        --axis serving.mode=off,aggregated --columns serving.ttft_ms,serving.tpot_ms -q
    [[ $(wc -l <.stdout) -eq 9 ]] || fail "sweep over serving axes: $(cat .stdout)"
    grep -q '^1,sglang,off,,,ok,$' .stdout || fail "mode off should leave serving columns empty: $(cat .stdout)"
    expect_bad_input "serving.decode.parallel.ep" "$bin" eval serve.json --set serving.mode=disaggregated \
        --set serving.decode.parallel.ep=3
    expect_bad_input "runtime.engine" "$bin" eval serve.json --set runtime.engine=tgi
    # the table leads with the deployment under load: the JSON's TTFT, and the engine's typical error
    expect_ok "$bin" eval serve.json --format table
    grep -q '^Serving, aggregated on vllm: 64 requests in flight, 1024 in / 1024 out' .stdout || fail "table: no serving block: $(head -8 .stdout)"
    ttft=$(json_get serve_out.json "'%.3g' % j['serving']['ttft_ms']")
    python3 -c "import re,sys; t=open(sys.argv[1]).read(); m=re.search(r'^  TTFT +([0-9.]+) +ms', t, re.M); assert m and abs(float(m.group(1))/float(sys.argv[2])-1) < 0.01, (m and m.group(1), sys.argv[2])" .stdout "$ttft" ||
        fail "table: serving TTFT differs from the JSON's $ttft"
    # one set of constants per engine (issue 25): the engine's typical error on every GPU
    grep -q "typical error of vllm's serving numbers against measured runs: TTFT [0-9]*%, TPOT [0-9]*%" .stdout ||
        fail "table: no typical error of vLLM on H200"
    expect_ok "$bin" eval serve.json --set hardware=h800 --format table
    grep -q "typical error of vllm's serving numbers against measured runs: TTFT [0-9]*%, TPOT [0-9]*%" .stdout ||
        fail "table: no engine-wide typical error on H800"
    # the ideal engine has no measured runs: no typical-error line
    expect_ok "$bin" eval serve.json --set runtime.engine=ideal --format table
    ! grep -q 'typical error' .stdout || fail "table: a typical error for the ideal engine"
}

case_serving_trace() {  # issue 29: workload.trace as a JSONL or CSV file beside the scenario = the inline list
    mkdir -p sub
    printf 'isl,osl,prefix_id,prefix_len\n1000,50,sys,600\n1200,50,sys,600\n800,50,,\n# a comment\n\n1500,50,sys,600\n' >sub/t.csv
    printf '{"isl":1000,"osl":50,"prefix_id":"sys","prefix_len":600}\n{"isl":1200,"osl":50,"prefix_id":"sys","prefix_len":600}\n{"isl":800,"osl":50}\n{"isl":1500,"osl":50,"prefix_id":"sys","prefix_len":600}\n' >sub/t.jsonl
    local base='"model":"qwen3-30b-a3b","hardware":"h100-sxm","serving":{"mode":"aggregated","concurrency":1}'
    echo "{$base,\"workload\":{\"trace\":\"t.csv\"}}" >sub/csv.json
    echo "{$base,\"workload\":{\"trace\":\"t.jsonl\"}}" >sub/jsonl.json
    echo "{$base,\"workload\":{\"trace\":[{\"isl\":1000,\"osl\":50,\"prefix_id\":\"sys\",\"prefix_len\":600},{\"isl\":1200,\"osl\":50,\"prefix_id\":\"sys\",\"prefix_len\":600},{\"isl\":800,\"osl\":50},{\"isl\":1500,\"osl\":50,\"prefix_id\":\"sys\",\"prefix_len\":600}]}}" >inline.json
    expect_ok "$bin" eval inline.json --format json
    cp .stdout inline_out.json
    # the 2nd and 4th requests find the 600 shared tokens: 1,200 of 4,500
    [[ $(json_get inline_out.json "abs(j['serving']['prefix_hit_rate_gpu'] - 1200/4500) < 1e-12") == True ]] ||
        fail "inline trace: prefix_hit_rate_gpu $(json_get inline_out.json "j['serving']['prefix_hit_rate_gpu']")"
    for f in csv jsonl; do
        expect_ok "$bin" eval "sub/$f.json" --format json
        cp .stdout "${f}_out.json"
        python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["serving"]; b=json.load(open(sys.argv[2]))["serving"]; assert a == b, [(k, a[k], b.get(k)) for k in a if a[k] != b.get(k)]' \
            inline_out.json "${f}_out.json" || fail "the $f trace file gives other serving numbers than the inline list"
    done
    rm -f ./*_out.json inline.json
    # a bad line is named by the file and its line; a missing file; a trace with sessions
    printf 'isl,osl\n100,10\n0,5\n' >sub/bad.csv
    echo "{$base,\"workload\":{\"trace\":\"bad.csv\"}}" >sub/bad.json
    expect_bad_input "workload.trace: sub/bad.csv line 3: isl: must be a positive integer" "$bin" eval sub/bad.json
    printf '{"isl":100,"osl":10}\n{"isl":100,\n' >sub/bad.jsonl
    echo "{$base,\"workload\":{\"trace\":\"bad.jsonl\"}}" >sub/badj.json
    expect_bad_input "workload.trace: sub/bad.jsonl line 2: not valid JSON" "$bin" eval sub/badj.json
    echo "{$base,\"workload\":{\"trace\":\"none.csv\"}}" >sub/missing.json
    expect_bad_input "workload.trace: sub/none.csv: cannot read" "$bin" eval sub/missing.json
    expect_bad_input "workload.trace: cannot be combined with workload.sessions" "$bin" eval sub/csv.json --set workload.sessions.turns=2
}

case_list() { declare -F | sed -n 's/^declare -f case_//p' | grep -v '^list$'; }

declare -F "case_$case_name" >/dev/null || fail "no such case"
"case_$case_name"
