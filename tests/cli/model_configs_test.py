#!/usr/bin/env python3
"""Every model config that ships (issue 29): each config.json of AIConfigurator's model_configs, alone and with the
ModelOpt hf_quant_config.json beside it (given as its quantization_config), goes through `moe-roofline eval` and
either evaluates or is refused with a message naming the mechanism the model lacks ("... not modelled").

    model_configs_test.py CLI SHARED_DIR COPY_DIR EXPECTED_JSON

SHARED_DIR is ../shared/anchors/aic/model_configs (every config); where it is absent (CI), COPY_DIR, the copy in
tests/data/model_configs (the same files, less the three over 100 KB). EXPECTED_JSON names the outcome of each case:
"ok", or "refused: TEXT" with TEXT a part of the message. A config not listed fails the test: a new one must be
classified. An evaluated quantised case must also read the quantisation (its experts' format is not the config's
16-bit dtype), which is what the hf_quant file is for.
"""
import json
import os
import subprocess
import sys
import tempfile


def run_eval(cli, model_path):
    scenario = json.dumps({"model": model_path, "hardware": "b200"})
    p = subprocess.run([cli, "eval", "-", "--format", "json"], input=scenario, capture_output=True, text=True, timeout=60)
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else {}
    except json.JSONDecodeError:
        out = {}
    return p.returncode, out, p.stderr.strip()


def main():
    cli, shared, copy, expected_path = sys.argv[1:5]
    folder = shared if os.path.isdir(shared) else copy
    with open(expected_path) as f:
        expected = json.load(f)
    names = sorted(n for n in os.listdir(folder) if n.endswith("_config.json") and not n.endswith("_hf_quant_config.json"))
    failures, counts, seen = [], {"ok": 0, "refused": 0}, set()
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            base = name[: -len("_config.json")]
            cases = [(base, os.path.join(folder, name), None)]
            quant = os.path.join(folder, base + "_hf_quant_config.json")
            if os.path.exists(quant):
                cases.append((base + "+hf_quant", os.path.join(folder, name), quant))
            for case, cfg_path, quant_path in cases:
                seen.add(case)
                model_path = cfg_path
                if quant_path:
                    # The ModelOpt file as the config's quantization_config (nested under text_config when the
                    # config nests its language model there). Python reads the Infinity some configs carry.
                    with open(cfg_path) as f:
                        cfg = json.load(f)
                    with open(quant_path) as f:
                        q = json.load(f)
                    target = cfg["text_config"] if "hidden_size" not in cfg and isinstance(cfg.get("text_config"), dict) else cfg
                    target.pop("quantization_config", None)
                    cfg.pop("quantization_config", None)
                    target["quantization_config"] = q
                    model_path = os.path.join(tmp, case + ".json")
                    with open(model_path, "w") as f:
                        json.dump(cfg, f)
                rc, out, err = run_eval(cli, model_path)
                want = expected.get(case)
                if rc == 0 and out.get("status") == "ok":
                    got = "ok"
                    if quant_path and out.get("dtypes", {}).get("experts") in ("bf16", "fp16"):
                        failures.append(f"{case}: evaluated but the hf_quant_config was not read (experts {out['dtypes']})")
                elif rc == 2:
                    msg = "; ".join(e.get("message", "") for e in out.get("errors", [])) or err
                    got = "refused: " + msg
                    if "not modelled" not in msg:
                        failures.append(f"{case}: refused without naming a missing mechanism: {msg}")
                else:
                    failures.append(f"{case}: exit {rc}: {err[:300]}")
                    continue
                counts["ok" if got == "ok" else "refused"] += 1
                if want is None:
                    failures.append(f"{case}: not in {os.path.basename(expected_path)} (got {got[:200]})")
                elif want == "ok" and got != "ok":
                    failures.append(f"{case}: expected to evaluate, {got[:300]}")
                elif want.startswith("refused: ") and (got == "ok" or want[len("refused: "):] not in got):
                    failures.append(f"{case}: expected '{want}', got '{got[:300]}'")
    missing = sorted(set(expected) - seen)
    print(f"{folder}: {len(seen)} cases, {counts['ok']} evaluate, {counts['refused']} refused naming the mechanism"
          + (f"; {len(missing)} listed cases not in this folder (the copy leaves out files over 100 KB): {', '.join(missing)}"
             if missing else ""))
    if folder == shared and missing:
        failures.append(f"listed but absent from {shared}: {', '.join(missing)}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
