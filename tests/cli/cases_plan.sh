# cases_plan.sh — cli_test.sh's plan cases (issue 13 on: the front, SLAs, --threads and --shard of plan and
# sweep, the serving layer, large spaces, hardware and engine lists, bad flags). Sourced by cli_test.sh (see
# cases_sweep.sh for what it provides).

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

