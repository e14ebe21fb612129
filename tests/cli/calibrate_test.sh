#!/usr/bin/env bash
# calibrate_test.sh — issue 28's calibration, --engines, the band outputs and plan --sla-at, end to end through the
# moe-roofline binary (one case per ctest entry: tests/cli/tests.cmake).
#
#   bash tests/cli/calibrate_test.sh ./build/moe-roofline tests/validation/serving_public.csv errors
#
# Every case runs in a fresh temporary directory ("no file left behind" is checked by listing it).
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
case_name=$3
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# fail, run, listing, expect_bad_input (exit 2, "moe-roofline: " lines of at most 300 bytes, one with the pattern, no
# new file), expect_ok
source "$here/lib.sh"

# rows ENGINE SYSTEM PARITY: the header and every other run (0: the 1st, 3rd, ...; 1: the 2nd, 4th, ...) of one engine on
# one system of the serving set, in file order (a deterministic split)
rows() {
    awk -F, -v e="$1" -v s="$2" -v p="$3" 'NR == 1 || ($3 == e && (s == "" || $6 == s) && (n++ % 2) == p)' "$runs"
}
# a small calibration: SGLang's first 30 runs
small_calibration() {
    awk -F, 'NR == 1 || ($3 == "sglang" && n++ < 30)' "$runs" >sg30.csv
    expect_ok "$bin" calibrate sg30.csv -o sg30.json --bootstrap 4 -q
}
serve() { printf '%s' '{"model":"deepseek-v3","hardware":"h200","runtime":{"engine":"sglang"},"serving":{"mode":"aggregated","isl":2048,"osl":1024}}' >serve.json; }

case_errors() {  # bad runs files: one line naming the file, line and column; -o never written
    head -1 "$runs" >header.csv
    echo "old" >keep.json
    expect_bad_input "cannot read" "$bin" calibrate missing.csv -o keep.json
    sed 's/silicon_ttft_ms/ttft/' header.csv >nocol.csv
    expect_bad_input "nocol.csv: no column silicon_ttft_ms" "$bin" calibrate nocol.csv -o keep.json
    { cat header.csv; sed -n 2p "$runs" | awk -F, 'BEGIN { OFS = "," } { $9 = "abc"; print }'; } >badnum.csv
    expect_bad_input "badnum.csv line 2, column isl: 'abc' is not a non-negative number" "$bin" calibrate badnum.csv -o keep.json
    { cat header.csv; sed -n 2p "$runs" | awk -F, 'BEGIN { OFS = "," } { $3 = "tgi"; print }'; } >badengine.csv
    expect_bad_input "badengine.csv line 2, column backend: 'tgi' is not sglang, vllm or trtllm" "$bin" calibrate badengine.csv -o keep.json
    { cat header.csv; sed -n 2p "$runs" | awk -F, 'BEGIN { OFS = "," } { $34 = ""; print }'; } >nottft.csv
    expect_bad_input "nottft.csv line 2, column silicon_tpot_ms: must be a positive number" "$bin" calibrate nottft.csv -o keep.json
    { cat header.csv; sed -n 2p "$runs" | cut -d, -f1-20; } >short.csv
    expect_bad_input "short.csv line 2: 20 cells, the header has 34" "$bin" calibrate short.csv -o keep.json
    { cat header.csv; sed -n 2p "$runs" | awk -F, 'BEGIN { OFS = "," } { $5 = "acme/NoSuchModel"; print }'; } >model.csv
    expect_bad_input "model.csv line 2, column model_path: 'acme/NoSuchModel' is neither" "$bin" calibrate model.csv -o keep.json
    expect_bad_input "no runs" "$bin" calibrate header.csv -o keep.json
    { cat header.csv; sed -n 2p "$runs"; } >one.csv
    expect_bad_input "calibrate needs at least 2" "$bin" calibrate one.csv -o keep.json
    [[ $(cat keep.json) == old ]] || fail "a failed calibrate changed its -o file"
    expect_bad_input "-o needs a file" "$bin" calibrate one.csv -o -
    # an unwritable directory: refused, nothing left behind
    mkdir ro && chmod 555 ro
    if [[ $(id -u) -ne 0 ]]; then
        awk -F, 'NR == 1 || ($3 == "sglang" && n++ < 4)' "$runs" >four.csv
        run "$bin" calibrate four.csv -o ro/out.json --bootstrap 0 -q
        [[ $status -eq 2 && -z $(ls ro) ]] || fail "an unwritable -o: status $status, left $(ls ro)"
    fi
    # --engines: a file that does not parse names the key
    echo '{"sglang":{"request_overhead_ms":{"value":1000}}}' >bad-engines.json
    serve
    expect_bad_input "engines.sglang.request_overhead_ms: must be a number in [0, 60]" "$bin" eval serve.json --engines bad-engines.json
    expect_bad_input "--engines: nope.json: cannot read" "$bin" eval serve.json --engines nope.json
    echo '{"sglang":' >broken.json
    expect_bad_input "not valid JSON" "$bin" plan serve.json --gpus 8 --engines broken.json
    # --sla-at p90 needs the serving layer (the band is the serving layer's)
    echo '{"model":"deepseek-v3","hardware":"h200"}' >step.json
    expect_bad_input "--sla-at p90: the band exists with the serving layer only" "$bin" plan step.json --gpus 8 --sla-at p90
    expect_bad_input "--sla-at" "$bin" plan serve.json --gpus 8 --sla-at p50
}

case_roundtrip() {  # issue 28: calibrate on half of one engine's runs on one GPU, predict the other half better than shipped
    # TensorRT-LLM on H100 SXM (362 runs; the shipped constants, shared by every GPU, miss its TTFT by ~29%)
    rows trtllm h100_sxm 0 >train.csv
    rows trtllm h100_sxm 1 >test.csv
    expect_ok "$bin" calibrate train.csv -o cal.json --bootstrap 4 -q --test test.csv
    cp .stdout report.txt
    python3 - report.txt cal.json "$runs" <<'PY' || fail "round trip: $(cat report.txt)"
import json, re, sys
report = open(sys.argv[1]).read()
m = re.search(r"trtllm: (\d+) test runs .*shipped TTFT ([0-9.]+)% TPOT ([0-9.]+)%; calibrated TTFT ([0-9.]+)% TPOT ([0-9.]+)%", report)
assert m, "no test line"
n, st, sp, ct, cp = int(m.group(1)), *map(float, m.groups()[1:])
assert n >= 150, n
# better than shipped: the fit's objective (TTFT and TPOT errors together) lower on the held-out half, and neither
# worse by more than a point (after the per-engine kernel tables, TRT-LLM's H100 TTFT error is structural: the seven
# constants move TPOT 10.1% -> 6.0% and leave TTFT at 28.8-28.9%)
assert ct + cp < st + sp and ct <= st + 1.0 and cp <= sp + 1.0, (st, sp, ct, cp)
# the report: before / in sample / held out, and each constant with its range and interval
for key in ("shipped constants", "calibrated, in sample", "calibrated, held out", "5-fold cross-validation", "90% interval",
            "band (p10 .. p90"):
    assert key in report, key
cal = json.load(open(sys.argv[2]))
shipped = json.load(open(sys.argv[3].replace("tests/validation/serving_public.csv", "presets/engines.json")))
assert set(cal) == set(shipped), (set(cal) ^ set(shipped))
for e in ("sglang", "vllm", "ideal"):
    assert cal[e] == shipped[e], e  # engines without runs: as shipped
t = cal["trtllm"]
ranges = {"request_overhead_ms": (0, 60), "request_overhead_per_ktoken_ms": (0, 10), "request_overhead_per_client_ms": (0, 1),
          "decode_overhead_per_layer_us": (0, 60), "prefill_overhead_per_layer_us": (0, 300),
          "decode_host_per_request_us": (0, 80)}
for name, (lo, hi) in ranges.items():
    v = t[name]
    assert lo <= v["value"] <= hi, (name, v)
    a, b = v["interval_90"]
    assert lo <= a <= b <= hi, (name, v)
    assert "calibrate" in v["source"], v
for q in ("ttft", "tpot", "throughput"):
    lo, hi = t[q + "_log_error_p10"]["value"], t[q + "_log_error_p90"]["value"]
    assert lo < hi, (q, lo, hi)
assert 0 < t["ttft_typical_error"]["value"] < 1
PY
    # the file is a calibration --engines takes: TensorRT-LLM's numbers move, with a band
    serve
    expect_ok "$bin" eval serve.json --set runtime.engine=trtllm
    cp .stdout shipped_eval.json
    expect_ok "$bin" eval serve.json --set runtime.engine=trtllm --engines cal.json
    cp .stdout cal_eval.json
    python3 - shipped_eval.json cal_eval.json <<'PY' || fail "--engines cal.json changed nothing"
import json, sys
a, b = (json.load(open(p))["serving"] for p in sys.argv[1:])
assert a["ttft_ms"] != b["ttft_ms"], (a["ttft_ms"], b["ttft_ms"])
assert b["ttft_ms_p10"] <= b["ttft_ms"] <= b["ttft_ms_p90"] and b["ttft_ms_p10"] < b["ttft_ms_p90"]
PY
}

case_engines() {  # --engines on eval, sweep and plan; the bands' order; plan --sla-at p90 is stricter
    small_calibration
    serve
    expect_ok "$bin" eval serve.json --engines sg30.json
    cp .stdout e.json
    python3 - e.json <<'PY' || fail "eval bands"
import json, sys
s = json.load(open(sys.argv[1]))["serving"]
for q in ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu"):
    assert s[q + "_p10"] <= s[q] <= s[q + "_p90"], (q, s[q + "_p10"], s[q], s[q + "_p90"])
    assert s[q + "_p10"] < s[q + "_p90"], q
PY
    expect_ok "$bin" eval serve.json --engines sg30.json --format table
    grep -q '^  band (p10 .. p90): TTFT [0-9.e+]* .. [0-9.e+]* ms, TPOT' .stdout || fail "table: no band line: $(cat .stdout)"
    # the ideal engine has no measured runs: no band (empty cells), whatever the file
    expect_ok "$bin" sweep serve.json --engines sg30.json --axis runtime.engine=sglang,ideal --axis serving.concurrency=8,64 \
        --columns serving.ttft_ms,serving.ttft_ms_p10,serving.ttft_ms_p90,serving.tpot_ms,serving.tpot_ms_p10,serving.tpot_ms_p90,serving.output_tokens_per_s_per_gpu,serving.output_tokens_per_s_per_gpu_p10,serving.output_tokens_per_s_per_gpu_p90 -q
    cp .stdout sweep.csv
    python3 - sweep.csv e.json <<'PY' || fail "sweep bands: $(cat sweep.csv)"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4, rows
for r in rows:
    for q in ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu"):
        if r["runtime.engine"] == "ideal":
            assert r["serving." + q + "_p10"] == "" and r["serving." + q + "_p90"] == "", r
        else:
            assert float(r["serving." + q + "_p10"]) <= float(r["serving." + q]) <= float(r["serving." + q + "_p90"]), (q, r)
# the sweep's row at the scenario's own concurrency equals eval's (the same engines file)
e = json.load(open(sys.argv[2]))["serving"]
row = [r for r in rows if r["runtime.engine"] == "sglang" and r["serving.concurrency"] == "64"][0]
assert float(row["serving.ttft_ms_p90"]) == e["ttft_ms_p90"], (row["serving.ttft_ms_p90"], e["ttft_ms_p90"])
PY
    # plan: the same front with the file as the constants' source, and at p90 a stricter SLA
    expect_ok "$bin" plan serve.json --gpus 16 --tpot-ms 30 --ttft-ms 4000 --engines sg30.json --format csv
    cp .stdout mean.csv
    cp .stderr mean.err
    expect_ok "$bin" plan serve.json --gpus 16 --tpot-ms 30 --ttft-ms 4000 --engines sg30.json --format csv --sla-at p90
    cp .stdout p90.csv
    cp .stderr p90.err
    expect_ok "$bin" plan serve.json --gpus 16 --tpot-ms 30 --ttft-ms 4000 --format csv
    cp .stdout shipped.csv
    cmp -s mean.csv shipped.csv && fail "plan --engines gave the shipped constants' front"
    python3 - mean.csv p90.csv mean.err p90.err "$bin" <<'PY' || fail "--sla-at p90: $(cat p90.err)"
import csv, json, re, subprocess, sys
mean = list(csv.DictReader(open(sys.argv[1])))
p90 = list(csv.DictReader(open(sys.argv[2])))
def candidates(path):
    m = re.search(r"of (\d+) points that fit and meet the SLA", open(path).read())
    return int(m.group(1))
cm, cp = candidates(sys.argv[3]), candidates(sys.argv[4])
assert 0 < cp < cm, (cp, cm)  # the p90 SLA keeps fewer points
# every point that meets the SLA at p90 meets it at the mean: the p90 front's points are candidates of the mean plan,
# so none of them beats the mean front
best_mean = max(float(r["output_tokens_per_s_per_gpu"]) for r in mean)
assert all(float(r["output_tokens_per_s_per_gpu"]) <= best_mean for r in p90)
for r in p90:
    assert float(r["tpot_ms"]) <= 30 and float(r["ttft_ms"]) <= 4000, r
    # the band columns: what the SLA was checked against, and eval's numbers for the row's scenario
    assert float(r["serving.tpot_ms_p90"]) <= 30 and float(r["serving.ttft_ms_p90"]) <= 4000, r
    assert float(r["serving.tpot_ms_p90"]) >= float(r["tpot_ms"]) and float(r["serving.ttft_ms_p90"]) >= float(r["ttft_ms"]), r
for r in mean[:1] + p90[:1]:
    scenario = subprocess.run([sys.argv[5], "url", "--decode", r["link"]], check=True, capture_output=True, text=True).stdout
    e = json.loads(subprocess.run([sys.argv[5], "eval", "-", "--engines", "sg30.json"], input=scenario, check=True,
                                  capture_output=True, text=True).stdout)["serving"]
    assert (e["ttft_ms_p90"], e["tpot_ms_p90"]) == (float(r["serving.ttft_ms_p90"]), float(r["serving.tpot_ms_p90"])), (e, r)
# the p90 plan's candidates are the mean plan's that also meet the SLA at p90: when every row of the mean front does,
# its best row is a p90 candidate, so the p90 front's best is the mean front's best
if all(float(r["serving.tpot_ms_p90"]) <= 30 and float(r["serving.ttft_ms_p90"]) <= 4000 for r in mean):
    best_p90 = max(float(r["output_tokens_per_s_per_gpu"]) for r in p90)
    assert abs(best_p90 - best_mean) <= 1e-9 * best_mean, (best_p90, best_mean)
PY
    # JSON: the same numbers at eval's paths; a step-level plan has no band (empty cells, no serving object)
    expect_ok "$bin" plan serve.json --gpus 16 --tpot-ms 30 --ttft-ms 4000 --engines sg30.json --format json --sla-at p90
    python3 - .stdout p90.csv <<'PY' || fail "plan JSON band"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(j["front"]) == len(rows)
for a, b in zip(j["front"], rows):
    assert a["serving"]["ttft_ms_p90"] == float(b["serving.ttft_ms_p90"]) and a["serving"]["tpot_ms_p90"] == float(b["serving.tpot_ms_p90"]), (a["serving"], b)
PY
    printf '%s' '{"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"sglang"}}' >step.json
    expect_ok "$bin" plan step.json --gpus 2 --engines sg30.json --format csv
    python3 - .stdout <<'PY' || fail "step-level plan with band cells: $(cat .stdout)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["serving.ttft_ms_p90"] == "" and r["serving.tpot_ms_p90"] == "" for r in rows), rows
PY
    expect_ok "$bin" plan step.json --gpus 2 --format json
    json_get .stdout 'all("serving" not in r for r in j["front"])' | grep -qx True || fail "step-level plan JSON has a serving object"
    expect_ok "$bin" plan serve.json --gpus 16 --tpot-ms 30 --engines sg30.json --sla-at p90
    grep -q "SLA: .*(each at the band's p90: --sla-at p90)" .stdout || fail "the table's preamble does not say the SLA is at p90"
}

case_list() { declare -F | sed -n 's/^declare -f case_//p' | grep -v '^list$'; }

declare -F "case_$case_name" >/dev/null || fail "no such case"
"case_$case_name"
