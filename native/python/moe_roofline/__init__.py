"""MoE Roofline from Python: the CLI's numbers in a notebook.

    import moe_roofline as mr
    e = mr.evaluate("deepseek-v3-decode-h800-ep128")                 # a preset scenario, a path, or a dict
    e["decode"]["tpot_ms"], e["memory"]["max_batch"]
    e = mr.evaluate({"model": "qwen3-30b-a3b", "hardware": "h200"}, set={"workload.batch": 64})
    df = mr.sweep("kimi-k2-decode-h200-ep16", axes={"workload.batch": "1:256:x2", "parallel.ep": [8, 16]})
    df[["workload.batch", "parallel.ep", "decode.tpot_ms"]]
    front = mr.plan({"model": "deepseek-v3", "hardware": "h200", "serving": {"mode": "aggregated", "isl": 2048,
                     "osl": 1024}}, gpus=64, tpot_ms=30)
    front.attrs["summary"], front[["rank", "output_tokens_per_s_per_gpu", "ttft_ms", "command"]]

evaluate() returns what `moe-roofline eval --format json` prints (the output columns nested by their dots);
sweep() returns what `moe-roofline sweep` writes (one row per grid point, the same column names) and plan() what
`moe-roofline plan --format csv` writes (the front, best first; with all=True every point with its verdict) as a
pandas DataFrame when pandas is installed, else as a list of dicts. Bad input raises ValueError with the CLI's message.
"""
import csv
import json
import os
import tempfile

from . import _moe_roofline as _native

__all__ = ["evaluate", "sweep", "plan", "presets"]


def _scenario_text(scenario):
    if isinstance(scenario, dict):
        return json.dumps(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario)
    raise ValueError("scenario: a dict, a preset scenario id or a path to a scenario file")


def _value_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _sets(set_):
    if set_ is None:
        return []
    if isinstance(set_, dict):
        return [f"{k}={_value_text(v)}" for k, v in set_.items()]
    return [str(s) for s in set_]


def _engines_text(engines):
    """engines=: None (the shipped constants), a calibration's path (moe-roofline calibrate -o FILE) or its dict."""
    if engines is None:
        return ""
    if isinstance(engines, dict):
        return json.dumps(engines)
    if isinstance(engines, (str, os.PathLike)):
        return os.fspath(engines)
    raise ValueError("engines: a dict or a path to an engines file (moe-roofline calibrate -o FILE)")


def evaluate(scenario, set=None, engines=None):
    """One scenario's outputs, as `moe-roofline eval SCENARIO --format json` (a nested dict).

    engines: a calibration (its path or dict) instead of the shipped engine constants, as --engines."""
    return json.loads(_native.evaluate(_scenario_text(scenario), _sets(set), _engines_text(engines)))


def _axes(axes):
    if isinstance(axes, dict):
        out = []
        for k, v in axes.items():
            if isinstance(v, (list, tuple)):
                v = ",".join(_value_text(x) for x in v)
            out.append(f"{k}={_value_text(v)}")
        return out
    return [str(a) for a in axes]


def _number(text):
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        return text


def sweep(scenario, axes, columns=None, set=None, threads=1, engines=None):
    """A grid of scenarios, as `moe-roofline sweep SCENARIO --axis ...`: a DataFrame (or a list of dicts)."""
    cols = ",".join(columns) if isinstance(columns, (list, tuple)) else (columns or "")
    fd, path = tempfile.mkstemp(suffix=".csv", prefix="moe-roofline-sweep-")
    os.close(fd)
    try:
        _native.sweep(_scenario_text(scenario), _sets(set), _axes(axes), cols, int(threads), path, _engines_text(engines))
        return _read_csv(path)
    finally:
        os.unlink(path)


def _read_csv(path):
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        return pd.read_csv(path, float_precision="round_trip", keep_default_na=False, na_values=[""])
    with open(path, newline="") as f:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def plan(scenario, gpus, ttft_ms=None, tpot_ms=None, min_tokens_per_s_per_user=None, engine=None, space=None,
         all=False, set=None, threads=0, base=None, hardware=None, objective=None, engines=None, sla_at=None):
    """The best deployments on a GPU budget under an SLA, as `moe-roofline plan SCENARIO --gpus N --format csv`.

    engine, hardware: one name or a list (--engine / --hardware: one search per pair, one front, each row naming its
    GPU and engine); objective: "throughput" (default) or "cost" (USD per million output tokens, cheapest first).
    engines: a calibration (path or dict), as --engines; sla_at: "mean" (default) or "p90" (the TTFT / TPOT limits
    hold at the band's p90, as --sla-at p90).

    ttft_ms: None (the CLI's default: 10 s with the serving layer on), a number, or "none" (no limit).
    space: a --space file's path or its content as a dict; base: the page the row links point at (--base). The CLI's summary line (points searched, why the others
    are not candidates) is in the DataFrame's attrs["summary"] (a list of dicts: the summary is dropped)."""
    space_path, tmp_space = "", None
    if isinstance(space, dict):
        fd, tmp_space = tempfile.mkstemp(suffix=".json", prefix="moe-roofline-space-")
        with os.fdopen(fd, "w") as f:
            json.dump(space, f)
        space_path = tmp_space
    elif space is not None:
        space_path = os.fspath(space)
    fd, path = tempfile.mkstemp(suffix=".csv", prefix="moe-roofline-plan-")
    os.close(fd)
    try:
        ttft_default = ttft_ms is None
        ttft = 0.0 if ttft_default or ttft_ms == "none" else float(ttft_ms)
        engine_list = engine if isinstance(engine, (list, tuple)) else ([engine] if engine else [])
        gpus_list = hardware if isinstance(hardware, (list, tuple)) else ([hardware] if hardware else [])
        summary = _native.plan(_scenario_text(scenario), _sets(set), int(gpus), ttft, ttft_default, float(tpot_ms or 0),
                               float(min_tokens_per_s_per_user or 0), ",".join(engine_list), space_path, bool(all),
                               int(threads), base or "", path, [str(h) for h in gpus_list], objective or "",
                               _engines_text(engines), sla_at or "")
        out = _read_csv(path)
        if hasattr(out, "attrs"):
            out.attrs["summary"] = summary.strip()
        return out
    finally:
        os.unlink(path)
        if tmp_space:
            os.unlink(tmp_space)


def presets(kind="scenarios"):
    """The built-in presets of one kind ("models", "hardware" or "scenarios"): {id: description}."""
    return dict(_native.presets(kind))
