# cases_eval.sh — cli_test.sh's eval, url, presets and help cases, and the input limits and error messages of
# every command (issues 8 and 27). Sourced by cli_test.sh (see cases_sweep.sh for what it provides).

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


case_eval_mixed_lengths() {  # seed 000 §8.1: workload.prompt_lens / context_lens / prefill_bucket_lens end to end
    local m2='"model":"qwen3-30b-a3b","hardware":"m2-max"'
    echo "{$m2,\"workload\":{\"phase\":\"prefill\",\"prompt_lens\":[1024,7168]}}" >mixed.json
    echo "{$m2,\"workload\":{\"phase\":\"prefill\"}}" >plain.json
    expect_ok "$bin" eval mixed.json
    cp .stdout mixed_out.json
    # by hand (tests/unit/test_mixed_lengths.cpp): the step of two 4,096-token prompts with its attention,
    # 1,915.0 ms, replaced by the prompts' own 2,992.2 ms: 8,814.1 ms
    [[ $(json_get mixed_out.json 'abs(j["prefill"]["step_ms"] - 8814.1) / 8814.1 < 1e-4') == True ]] ||
        fail "prefill.step_ms $(json_get mixed_out.json 'j["prefill"]["step_ms"]'), expected 8814.1"
    # --set with comma-separated tokens (spaces allowed) gives the same output as the file
    expect_ok "$bin" eval plain.json --set 'workload.prompt_lens=1024, 7168'
    cmp -s .stdout mixed_out.json || fail "--set workload.prompt_lens=1024,7168 differs from the file"
    expect_ok "$bin" eval plain.json --set 'workload.prompt_lens=[1024,7168]'
    cmp -s .stdout mixed_out.json || fail "--set workload.prompt_lens=[1024,7168] differs from the file"
    # the table names the requests
    expect_ok "$bin" eval mixed.json --format table --set workload.prefill_bucket_lens=2048,8192
    grep -qF "prompts 1024, 7168 in buckets 2048, 8192" .stdout || fail "table: $(sed -n 2p .stdout)"
    # bad input: one line naming the entry
    expect_bad_input "workload.prompt_lens[2]: 0 is not a positive token count" "$bin" eval plain.json --set workload.prompt_lens=1024,7168,0
    expect_lines 1
    expect_bad_input "workload.prompt_lens[1]: 5000 tokens is longer than the largest bucket, 4096" \
        "$bin" eval plain.json --set workload.prompt_lens=1000,5000 --set workload.prefill_bucket_lens=1024,4096
    expect_bad_input "is not a list of token counts" "$bin" eval plain.json --set workload.context_lens=1024,x
    # the link round-trips the lists and evaluates to the same numbers
    expect_ok "$bin" url mixed.json --set workload.context_lens=1024,7168 --set workload.phase=both
    expect_ok "$bin" url --decode "$(cat .stdout)"
    cp .stdout decoded.json
    [[ $(json_get decoded.json 'j["workload"]["prompt_lens"] == [1024, 7168] and j["workload"]["context_lens"] == [1024, 7168]') == True ]] ||
        fail "decoded link: $(cat decoded.json)"
    # sweep: the lists hold over the grid; a field they replace cannot be an axis
    expect_ok "$bin" sweep mixed.json --axis workload.prefix_cache_hit=0,0.5 --columns prefill.step_ms
    [[ $(sed -n 2p .stdout | cut -d, -f2 | python3 -c 'import sys; print(abs(float(sys.stdin.read()) - 8814.1) / 8814.1 < 1e-4)') == True ]] ||
        fail "sweep row 1: $(sed -n 2p .stdout)"
    expect_bad_input "workload.prompt_lens set the prefill forward's prompts" "$bin" sweep mixed.json --axis workload.prompt_len=1024,2048
    rm -f mixed.json plain.json mixed_out.json decoded.json
}
