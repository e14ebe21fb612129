# cases_serving.sh — cli_test.sh's serving cases: serving fields in eval and sweep, the table's serving block
# (issue 12), and workload.trace files (issue 29). Sourced by cli_test.sh (see cases_sweep.sh for what it provides).

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
    # --set workload.trace=FILE (relative to the working directory) and =[...] inline give the same numbers
    echo "{$base}" >plain.json
    expect_ok "$bin" eval plain.json --set workload.trace=sub/t.csv --format json
    cp .stdout set_csv_out.json
    expect_ok "$bin" eval plain.json --set 'workload.trace=[{"isl":1000,"osl":50,"prefix_id":"sys","prefix_len":600},{"isl":1200,"osl":50,"prefix_id":"sys","prefix_len":600},{"isl":800,"osl":50},{"isl":1500,"osl":50,"prefix_id":"sys","prefix_len":600}]' --format json
    cp .stdout set_inline_out.json
    expect_bad_input "workload.trace: sub/none.csv: cannot read" "$bin" eval plain.json --set workload.trace=sub/none.csv
    expect_ok "$bin" eval plain.json --set workload.trace=sub/t.csv --format table
    grep -q "a trace of 4 requests, mean 1125 in / 50 out" .stdout || fail "eval --format table does not name the trace's requests: $(grep Serving .stdout)"
    for f in csv jsonl set_csv set_inline; do
        [[ -f "${f}_out.json" ]] || { expect_ok "$bin" eval "sub/$f.json" --format json; cp .stdout "${f}_out.json"; }
        python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["serving"]; b=json.load(open(sys.argv[2]))["serving"]; assert a == b, [(k, a[k], b.get(k)) for k in a if a[k] != b.get(k)]' \
            inline_out.json "${f}_out.json" || fail "the $f trace file gives other serving numbers than the inline list"
    done
    rm -f ./*_out.json inline.json plain.json
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

