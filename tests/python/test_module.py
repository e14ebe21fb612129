"""The moe_roofline Python module gives the CLI's numbers to the last digit (issue 28).

Run by ctest (python_module) with PYTHONPATH at the build's python/ folder and MOE_ROOFLINE_CLI at the CLI binary.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys

import pytest

import moe_roofline as mr

CLI = os.environ.get("MOE_ROOFLINE_CLI", "moe-roofline")


def cli(*args, stdin=None):
    r = subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def test_evaluate_preset_equals_cli_json():
    for sid in ["deepseek-v3-decode-h800-ep128", "qwen3-235b-a22b-b200-ep8", "gpt-oss-120b-h100"]:
        rc, out, _ = cli("eval", sid, "--format", "json")
        assert rc == 0
        assert mr.evaluate(sid) == json.loads(out)  # every number parsed from the same digits


def test_evaluate_dict_with_sets_equals_cli():
    scenario = {"model": "qwen3-30b-a3b", "hardware": "h200", "serving": {"mode": "aggregated", "isl": 1024, "osl": 512}}
    rc, out, _ = cli("eval", "-", "--set", "workload.batch=48", "--set", "runtime.engine=vllm", "--format", "json",
                     stdin=json.dumps(scenario))
    assert rc == 0
    got = mr.evaluate(scenario, set={"workload.batch": 48, "runtime.engine": "vllm"})
    assert got == json.loads(out)
    assert got["serving"]["ttft_ms"] > 0 and math.isfinite(got["serving"]["tpot_ms"])


def test_evaluate_with_a_trace_equals_cli(tmp_path):
    # issue 29: a request trace inline in the dict, as a file named by set=, and as an inline list through set=,
    # each the CLI's numbers; a bad trace line is a ValueError naming the file and line
    reqs = [{"isl": 1000, "osl": 50, "prefix_id": "sys", "prefix_len": 600}, {"isl": 1200, "osl": 50},
            {"isl": 800, "osl": 60, "prefix_id": "sys", "prefix_len": 600}]
    base = {"model": "qwen3-30b-a3b", "hardware": "h200", "serving": {"mode": "aggregated", "concurrency": 2}}
    trace_csv = tmp_path / "t.csv"
    trace_csv.write_text("isl,osl,prefix_id,prefix_len\n1000,50,sys,600\n1200,50,,\n800,60,sys,600\n")
    scenario_file = tmp_path / "s.json"
    scenario_file.write_text(json.dumps(base))
    rc, out, err = cli("eval", str(scenario_file), "--set", f"workload.trace={trace_csv}", "--format", "json")
    assert rc == 0, err
    want = json.loads(out)
    assert want["serving"]["requests_per_s"] > 0
    assert mr.evaluate({**base, "workload": {"trace": reqs}}) == want
    assert mr.evaluate(base, set={"workload.trace": str(trace_csv)}) == want
    assert mr.evaluate(base, set={"workload.trace": reqs}) == want
    bad = tmp_path / "bad.csv"
    bad.write_text("isl,osl\n1000,50\n-5,50\n")
    with pytest.raises(ValueError, match=r"workload\.trace: .*bad\.csv line 3: isl"):
        mr.evaluate(base, set={"workload.trace": str(bad)})


def test_bad_input_raises_value_error_naming_the_field():
    with pytest.raises(ValueError, match=r"parallel\.ep"):
        mr.evaluate({"model": "deepseek-v3", "hardware": "h800", "parallel": {"dp": 48, "ep": 48}})
    with pytest.raises(ValueError, match=r"workload\.batch"):
        mr.evaluate("deepseek-v3-decode-h800-ep128", set={"workload.batch": -3})
    with pytest.raises(ValueError, match="no such file or preset scenario"):
        mr.evaluate("not-a-scenario")
    with pytest.raises(ValueError):
        mr.evaluate(42)


def test_sweep_equals_cli_csv():
    axes = {"workload.batch": "1:200:x3", "parallel.ep": [32, 64, 128], "precision.kv_cache": ["bf16", "fp8"]}
    df = mr.sweep("deepseek-v3-decode-h800-ep128", axes)
    rc, out, err = cli("sweep", "deepseek-v3-decode-h800-ep128", "--axis", "workload.batch=1:200:x3",
                       "--axis", "parallel.ep=32,64,128", "--axis", "precision.kv_cache=bf16,fp8", "-q", "-o", "-")
    assert rc == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(df.columns) == list(rows[0].keys())
    assert len(df) == len(rows) == 5 * 3 * 2
    for i, row in enumerate(rows):
        for k, v in row.items():
            got = df.iloc[i][k]
            if v == "":
                assert got is None or (isinstance(got, float) and math.isnan(got)), (i, k)
            else:
                if v in ("true", "false"):
                    assert bool(got) == (v == "true"), (i, k)
                    continue
                try:
                    want = float(v)
                except ValueError:
                    assert str(got) == v, (i, k)
                    continue
                assert float(got) == want, (i, k, got, v)  # bit for bit


def test_sweep_without_pandas_gives_dicts(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    rows = mr.sweep("qwen3-8b-decode-h20", {"workload.batch": [1, 64]}, columns=["decode.tpot_ms"])
    assert isinstance(rows, list) and len(rows) == 2
    assert rows[1]["workload.batch"] == 64.0
    assert rows[0]["decode.tpot_ms"] < rows[1]["decode.tpot_ms"]


def test_sweep_bad_axis_raises():
    with pytest.raises(ValueError, match="no.such"):
        mr.sweep("qwen3-8b-decode-h20", {"no.such": [1, 2]})


def test_presets():
    assert "deepseek-v3" in mr.presets("models")
    assert "h200" in mr.presets("hardware")
    assert "deepseek-v3-decode-h800-ep128" in mr.presets()
    with pytest.raises(ValueError):
        mr.presets("gpus")


def test_plan_equals_cli_csv():
    scenario = {"model": "qwen3-30b-a3b", "hardware": "h200", "serving": {"mode": "aggregated", "isl": 1024, "osl": 512}}
    df = mr.plan(scenario, gpus=8, tpot_ms=20, threads=1)
    rc, out, err = cli("plan", "-", "--gpus", "8", "--tpot-ms", "20", "--format", "csv", "--threads", "1",
                       stdin=json.dumps(scenario))
    assert rc == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(df) == len(rows) > 0
    assert list(df.columns) == list(rows[0].keys())
    for i, row in enumerate(rows):
        for k, v in row.items():
            got = df.iloc[i][k]
            if v == "":
                continue
            try:
                want = float(v)
            except ValueError:
                if v in ("true", "false"):
                    assert bool(got) == (v == "true")
                else:
                    assert str(got) == v, (i, k)
                continue
            assert float(got) == want, (i, k, got, v)
    assert df.attrs["summary"] in err  # the CLI prints it on stderr


def test_plan_mixed_hardware_by_cost_equals_cli_csv(tmp_path):
    # issue 28: one front over two GPUs and two engines, cheapest per million output tokens first
    scenario = {"model": "qwen3-30b-a3b", "hardware": "h200", "serving": {"mode": "aggregated", "isl": 1024, "osl": 512}}
    space = {"mode": ["aggregated"], "batch": [8, 64], "tp": [1, 2], "pp": [1]}
    df = mr.plan(scenario, gpus=8, tpot_ms=30, threads=1, space=space, hardware=["h200", "b200"],
                 engine=["sglang", "vllm"], objective="cost")
    space_file = tmp_path / "space.json"
    space_file.write_text(json.dumps(space))
    rc, out, err = cli("plan", "-", "--gpus", "8", "--tpot-ms", "30", "--format", "csv", "--threads", "1", "--space",
                       str(space_file), "--hardware", "h200,b200", "--engine", "sglang,vllm", "--objective", "cost",
                       stdin=json.dumps(scenario))
    assert rc == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(df) == len(rows) > 0
    for i, row in enumerate(rows):
        assert df.iloc[i]["hardware"] == row["hardware"] and df.iloc[i]["engine"] == row["engine"]
        assert float(df.iloc[i]["usd_per_mtok_output"]) == float(row["usd_per_mtok_output"])
        assert float(df.iloc[i]["joules_per_token"]) == float(row["joules_per_token"])
    usd = [float(r["usd_per_mtok_output"]) for r in rows]
    assert usd == sorted(usd)
    with pytest.raises(ValueError, match="--objective"):
        mr.plan(scenario, gpus=8, objective="cheap")
    with pytest.raises(ValueError, match="--hardware"):
        mr.plan(scenario, gpus=8, hardware="h999")


def test_plan_space_dict_and_errors():
    scenario = {"model": "qwen3-30b-a3b", "hardware": "h200"}
    df = mr.plan(scenario, gpus=4, space={"batch": [8, 64]}, all=True, threads=1)
    assert set(df["batch"].unique()) <= {8, 64}
    with pytest.raises(ValueError, match="gpus"):
        mr.plan(scenario, gpus=0)
    with pytest.raises(ValueError, match="engine"):
        mr.plan(scenario, gpus=8, engine="tgi")
    served = {"model": "deepseek-v3", "hardware": "h200", "serving": {"mode": "aggregated", "isl": 2048, "osl": 1024}}
    space = {"batch": [64, 512], "mtp_draft_tokens": [0]}
    default = mr.plan(served, gpus=64, tpot_ms=30, space=space, threads=1)
    lifted = mr.plan(served, gpus=64, tpot_ms=30, ttft_ms="none", space=space, threads=1)
    assert "by default" in default.attrs["summary"] and "by default" not in lifted.attrs["summary"]
    assert default["ttft_ms"].max() <= 10000 < lifted["ttft_ms"].max()


def _calibration(tmp_path):
    """A small calibration through the CLI: SGLang's first 24 runs of the serving set, 3 bootstrap resamples."""
    root = os.environ.get("MOE_ROOFLINE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    lines = open(os.path.join(root, "tests", "validation", "serving_public.csv")).read().splitlines()
    runs = [lines[0]] + [l for l in lines[1:] if l.split(",")[2] == "sglang"][:24]
    (tmp_path / "runs.csv").write_text("\n".join(runs) + "\n")
    out = tmp_path / "engines.json"
    rc, _, err = cli("calibrate", str(tmp_path / "runs.csv"), "-o", str(out), "--bootstrap", "3", "-q")
    assert rc == 0, err
    return out


def test_engines_and_bands_equal_cli(tmp_path):
    # issue 28: engines= a calibration's path or dict, as --engines; the band's columns as the CLI's
    path = _calibration(tmp_path)
    scenario = {"model": "qwen3-30b-a3b", "hardware": "h200", "runtime": {"engine": "sglang"},
                "serving": {"mode": "aggregated", "isl": 1024, "osl": 512}}
    rc, out, err = cli("eval", "-", "--engines", str(path), "--format", "json", stdin=json.dumps(scenario))
    assert rc == 0, err
    by_path = mr.evaluate(scenario, engines=path)
    assert by_path == json.loads(out)
    assert mr.evaluate(scenario, engines=json.load(open(path))) == by_path
    s = by_path["serving"]
    for q in ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu"):
        assert s[q + "_p10"] <= s[q] <= s[q + "_p90"]
    assert mr.evaluate(scenario) != by_path  # the call's engines do not outlive it
    with pytest.raises(ValueError, match=r"engines\.sglang\.request_overhead_ms"):
        mr.evaluate(scenario, engines={"sglang": {"request_overhead_ms": 1000}})
    # plan at p90 with the calibration, as the CLI
    df = mr.plan(scenario, gpus=8, tpot_ms=20, threads=1, engines=str(path), sla_at="p90")
    rc, out, err = cli("plan", "-", "--gpus", "8", "--tpot-ms", "20", "--format", "csv", "--threads", "1", "--engines",
                       str(path), "--sla-at", "p90", stdin=json.dumps(scenario))
    assert rc == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(df) == len(rows) > 0
    for i, row in enumerate(rows):
        assert float(df.iloc[i]["output_tokens_per_s_per_gpu"]) == float(row["output_tokens_per_s_per_gpu"])
        assert float(df.iloc[i]["tpot_ms"]) == float(row["tpot_ms"])
    with pytest.raises(ValueError, match="--sla-at"):
        mr.plan(scenario, gpus=8, sla_at="p50")


def test_engines_per_call_under_threads(tmp_path):
    # engines= holds for its call only, also while another Python thread evaluates with another calibration (the
    # core's calibration is per thread; a plan's or sweep's worker threads take their caller's)
    import threading
    scenario = {"model": "qwen3-30b-a3b", "hardware": "h200", "runtime": {"engine": "sglang"},
                "serving": {"mode": "aggregated", "isl": 1024, "osl": 512}}
    space = {"batch": [8, 32, 128], "mtp_draft_tokens": [0]}
    files = []
    for k, us in enumerate((5, 50)):
        p = tmp_path / f"engines{k}.json"
        p.write_text(json.dumps({"sglang": {"decode_overhead_per_layer_us": {"value": us}}}))
        files.append(str(p))

    def records(df):  # comparable text (empty cells are NaN in a DataFrame, and NaN != NaN)
        return df.to_csv(index=False) if hasattr(df, "to_csv") else json.dumps(df, sort_keys=True)

    def run(f, threads):
        ev = [mr.evaluate(scenario, engines=f) for _ in range(4)]
        pl = records(mr.plan(scenario, gpus=8, tpot_ms=40, space=space, threads=threads, engines=f))
        sw = records(mr.sweep(scenario, axes={"serving.concurrency": [4, 8, 16, 32, 64, 128]},
                              columns=["serving.tpot_ms"], threads=threads, engines=f))
        return ev, pl, sw

    want = [run(f, 1) for f in files]  # one after the other, one thread each
    assert want[0][0][0]["serving"]["tpot_ms"] != want[1][0][0]["serving"]["tpot_ms"]
    assert want[0][1] != want[1][1] and want[0][2] != want[1][2]
    got = [None, None]

    def worker(i):
        got[i] = run(files[i], 3)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        assert got[i] == want[i], f"calibration {i}"
