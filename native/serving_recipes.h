// serving_recipes.h — what InferenceMAX's launch scripts and recipes set for the runs of the serving set, where a
// run's CSV columns leave it out or misstate it (SemiAnalysisAI/InferenceX benchmarks/single_node/*.sh, its master
// yaml, NVIDIA/srt-slurm recipes; launch flags only, never measured results). serving_runs.cpp applies them while it
// turns a run into a scenario; docs/serving.md ("Serving") gives each rule's evidence.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace runs {

// A disaggregated database-dump run of Kimi-K2.5 NVFP4 on GB200 at the deployment its srt-slurm recipe launched
// (prefill dep4 with its forward budget, each decode worker's slots, vLLM's dep16 decode, an FP8 KV cache), in
// the scenario JSON `j`. Returns whether the recorded layout or batches changed.
bool inferencemax_disagg_recipe(const std::string& backend, int isl, nlohmann::json& j);
// The EP a recipe turned on where the run's columns say EP 1 (0: as recorded).
int inferencemax_recipe_ep(const std::string& backend, const std::string& model, const std::string& system,
                           const std::string& precision, int gpus, int ep);
// Whether the run came from a speculative-decoding recipe (SGLang Qwen3.5 FP8 from lmsysorg/sglang:v0.5.9-cu130).
bool inferencemax_mtp_recipe(const std::string& backend, const std::string& model, const std::string& precision,
                             const std::string& source);
// SGLang's --scheduler-recv-interval in the run's recipe at `conc` clients (1: SGLang's default).
int sglang_recv_interval(const std::string& model, const std::string& system, const std::string& precision, int conc);
// Whether the aggregated run's recipe launched an FP8 KV cache where the model's dtype is another.
bool inferencemax_fp8_kv(const std::string& backend, const std::string& model, const std::string& system, const std::string& precision);

}  // namespace runs
