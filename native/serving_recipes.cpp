// serving_recipes.cpp — InferenceMAX's launch settings for the serving set's runs (see serving_recipes.h).
#include "serving_recipes.h"

#include <algorithm>

namespace runs {

// InferenceMAX's disaggregated runs as their recipes launched them (the database dump's rows: Kimi-K2.5 NVFP4 on
// GB200; the srt-slurm recipes its run configs name: NVIDIA/srt-slurm recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/
// and recipes/vllm/kimi-k2.5/{1k1k,8k1k}/disagg-gb200-*.yaml):
// - every prefill worker is "dep4": attention data-parallel over its 4 GPUs with the experts spread over them (vLLM
//   data-parallel-size 4, tensor-parallel-size 1; TensorRT-LLM enable_attention_dp), where the dump records vLLM's as
//   TP 4;
// - a prefill forward takes 16,384 tokens per rank (vLLM max-num-batched-tokens 16384 with chunked prefill off;
//   TensorRT-LLM max_num_tokens 16384 with max_batch_size 16 at 1k prompts, 2 at 8k): 16384 / ISL whole prompts,
//   where the dump records one;
// - vLLM's one-worker decode pools are "dep16" (data-parallel-size 16: the recipe 1p1d-dep4-dep16), recorded as
//   TP 16; its four-worker pools are "tep4" (TP 4) as recorded;
// - a decode worker holds at most the recipe's batch (kDecodeLimits: TensorRT-LLM's max_batch_size, vLLM's
//   max-num-seqs), where the dump records the run's concurrency over the workers: clients past the pool's slots wait
//   for one, their first token with them (c55 on five TP4 workers of 8 slots: 3.0 s TTFT measured, 0.23 s at c30);
// - both engines keep an FP8 KV cache (vLLM kv-cache-dtype "fp8"; TensorRT-LLM's kv_cache_config dtype fp8, which
//   the rule above gives every TensorRT-LLM FP8 / NVFP4 row).
// Returns whether the recorded layout or batches changed.
struct DecodeLimit {
    const char* backend;
    int isl, workers, tp;  // the pool as the dump records it
    int batch;             // the recipe's per-worker (per-rank) limit
};
constexpr DecodeLimit kDecodeLimits[] = {
    {"trtllm", 1024, 5, 4, 8},     // ISL1K_OSL1K/STP/ctx1dep4_gen5tep4_batch8_allconc (concurrency 5, 15, 30, 55)
    {"trtllm", 1024, 4, 8, 128},   // ISL1K_OSL1K/STP/ctx1dep4_gen4tep8_batch128_allconc (4, 192, 360, 668)
    {"trtllm", 8192, 5, 4, 16},    // ISL8K_OSL1K/STP/ctx1dep4_gen5tep4_batch16_allconc (5, 15, 30, 60, 105)
    {"trtllm", 8192, 4, 4, 32},    // ISL8K_OSL1K/STP/ctx1dep4_gen4tep4_batch32_allconc (156)
    {"trtllm", 8192, 4, 8, 1},     // ISL8K_OSL1K/STP/ctx1dep4_gen4tep8_batch1_allconc (4)
    {"vllm", 1024, 4, 4, 1024},    // 1k1k/disagg-gb200-1p4d-dep4-tep4, max-num-seqs 1024 (4 .. 128)
    {"vllm", 8192, 4, 4, 16},      // 8k1k/disagg-gb200-1p4d-dep4-tep4, max-num-seqs 16 (4 .. 128)
};
bool inferencemax_disagg_recipe(const std::string& backend, int isl, nlohmann::json& j) {
    nlohmann::json& sv = j["serving"];
    j["precision"]["kv_cache"] = "fp8";
    bool changed = false;
    const int workers = sv["decode"]["workers"].get<int>(), tp = sv["decode"]["parallel"]["tp"].get<int>();
    for (const DecodeLimit& l : kDecodeLimits)
        if (backend == l.backend && isl == l.isl && workers == l.workers && tp == l.tp && sv["decode"]["batch"].get<int>() != l.batch) {
            sv["decode"]["batch"] = l.batch;
            changed = true;
        }
    auto to_dp = [&](nlohmann::json& par) {
        const int n = par["tp"].get<int>();
        if (n <= 1) return 1;
        par["dp"] = par["dp"].get<int>() * n;
        par["tp"] = 1;
        changed = true;
        return n;
    };
    if (backend == "vllm") {
        to_dp(sv["prefill"]["parallel"]);
        if (workers == 1) {
            // dep16 (max-num-seqs 4096 per rank: no limit at the runs' 256 .. 1024 clients): a rank holds its share
            const int dp = to_dp(sv["decode"]["parallel"]);
            sv["decode"]["batch"] = std::max(1, (sv["decode"]["batch"].get<int>() + dp - 1) / dp);
        }
    }
    const int per_forward = std::max(1, 16384 / std::max(1, isl));
    if (sv["prefill"]["batch"].get<int>() != per_forward) {
        sv["prefill"]["batch"] = per_forward;
        changed = true;
    }
    return changed;
}

// Expert parallelism a recipe turns on where the run's columns and id say EP 1: InferenceMAX's vLLM MiniMax-M2.5 FP8
// script for H200 (benchmarks/single_node/minimaxm2.5_fp8_h200.sh from PR #869, 2026-03-05, which moved it from TP 4 to
// TP 8; the stored version whn09/InferenceX@53605e0) passes --enable-expert-parallel when `[ "$EP_SIZE" -ge 1 ]`, and its
// master-yaml entry gives no ep (EP_SIZE 1), so every TP 8 run had the experts spread over the 8 GPUs (EP 8, all 256
// experts at their full 1,536 width, 32 a GPU). Pure TP 8 cannot run that checkpoint: vLLM's block-FP8 MoE refuses an
// expert shard of 1536 / 8 = 192 columns, not a multiple of its 128-wide scale blocks (Fp8MoEMethod.create_weights).
// The TP 4 runs (vLLM 0.16, 2026-03-01) came from the script before that PR, with no EP flag (384 = 3 x 128 columns).
// The B200 / B300 / H100 scripts test `-gt 1` and their rows' EP is as recorded. Returns the EP the run used (0: as
// recorded).
int inferencemax_recipe_ep(const std::string& backend, const std::string& model, const std::string& system,
                           const std::string& precision, int gpus, int ep) {
    if (backend == "vllm" && model == "MiniMaxAI/MiniMax-M2.5" && system == "h200_sxm" && precision == "fp8" && gpus == 8 && ep == 1)
        return 8;
    return 0;
}

// InferenceMAX's speculative-decoding recipes among the aggregated runs. SGLang serving Qwen3.5-397B-A17B FP8 from
// the image lmsysorg/sglang:v0.5.9-cu130 (the -amd64 builds of the same version are the plain recipe): on B200 the
// master-yaml entry qwen3.5-fp8-b200-sglang-mtp (TP 4, EP 1, 4 to 256 clients) ran
// benchmarks/single_node/qwen3.5_fp8_b200_mtp.sh (PR #898; samharshe/InferenceXCodingAgent@27d5c41, whn09/InferenceX@60a062a):
// --speculative-algorithm EAGLE with the model's MTP layer, --speculative-num-steps 3, --speculative-eagle-topk 1,
// --speculative-num-draft-tokens 4 (3 drafts a step). Its B300 runs of the same image, TP, EP and client grid
// (2026-04-03) match that entry; no B300 script of that date is stored, so they are taken as its copy. How many
// drafts the verify keeps is not published for these runs: the validator takes vLLM's published per-position
// acceptance of a multi-layer MTP drafter (the curve vllm-mtp8-gsm8k, its first three positions: 2.89 tokens a
// step), a stand-in, not a fit.
bool inferencemax_mtp_recipe(const std::string& backend, const std::string& model, const std::string& precision,
                             const std::string& source) {
    if (backend != "sglang" || model != "Qwen/Qwen3.5-397B-A17B" || precision != "fp8") return false;
    const std::string key = "image=lmsysorg/sglang:v0.5.9-cu130";
    const size_t at = source.find(key);
    return at != std::string::npos && (at + key.size() == source.size() || source[at + key.size()] == ';');
}

// SGLang's --scheduler-recv-interval in InferenceMAX's recipes (SemiAnalysisAI/InferenceX,
// benchmarks/single_node/<model>_<precision>_<gpu>.sh, the stored version of each; launch flags, not measurements):
// the scheduler takes in new requests every N decode forwards (serving.scheduler_recv_interval). "10/30": 10 below 16
// clients, 30 from 16 (the recipes' `if [[ $CONC -ge 16 ]]`). A recipe that does not set it runs SGLang's default, 1.
// Rows of another model, GPU or precision, and every AIConfigurator row, run the default.
struct RecvRecipe {
    const char* model;      // the CSV's model_path
    const char* system;     // the CSV's system
    const char* precision;  // the CSV's precision
    int below16, from16;
};
constexpr RecvRecipe kSglangRecvRecipes[] = {
    {"Qwen/Qwen3.5-397B-A17B", "b200_sxm", "bf16", 10, 30},  // qwen3.5_bf16_b200.sh
    {"Qwen/Qwen3.5-397B-A17B", "b200_sxm", "fp8", 10, 30},   // qwen3.5_fp8_b200.sh
    {"Qwen/Qwen3.5-397B-A17B", "b200_sxm", "fp4", 30, 30},   // qwen3.5_fp4_b200.sh
    {"Qwen/Qwen3.5-397B-A17B", "b300_sxm", "bf16", 10, 30},  // qwen3.5_bf16_b300.sh
    {"Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp8", 10, 10},   // qwen3.5_fp8_b300.sh
    {"Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp4", 10, 30},   // qwen3.5_fp4_b300.sh
    {"zhipuai/GLM-5", "b200_sxm", "fp4", 10, 10},            // glm5_fp4_b200.sh
    // (qwen3.5_fp8_h200.sh, glm5_fp8_b200.sh, glm5_fp8_b300.sh, glm5_fp8_h200.sh: not set, 1)
};
int sglang_recv_interval(const std::string& model, const std::string& system, const std::string& precision, int conc) {
    for (const RecvRecipe& r : kSglangRecvRecipes)
        if (model == r.model && system == r.system && precision == r.precision) return conc >= 16 ? r.from16 : r.below16;
    return 1;
}

// The KV cache dtype of InferenceMAX's aggregated recipes where it is not the model's (SemiAnalysisAI/InferenceX
// benchmarks/single_node/<script>.sh, the stored version matching the run's image or the nearest, each below; launch
// flags, not measurements): SGLang `--kv-cache-dtype fp8_e4m3`, vLLM `--kv-cache-dtype fp8`, TensorRT-LLM
// kv_cache_config dtype fp8 (TensorRT-LLM's FP8 / NVFP4 rows take it from the rule in parse_runs: gpt-oss on B200,
// whose script sets fp8 (gptoss_fp4_b200_trt.sh@aad5336), is one of them; on H200 its script keeps `auto`). Every version found
// of these scripts sets it. Not listed (no such flag in the versions found): the BF16 runs, GLM-5 on H200
// (glm5-hopper), MiniMax-M2.5 FP8 on B200 / H100 / H200, Kimi-K2.5, gpt-oss on Hopper.
// The same scripts set a forward's token budget (SGLang --chunked-prefill-size 16384 / 32768, vLLM
// --max-num-batched-tokens 2 x ISL for MiniMax-M2.5, TensorRT-LLM --max_num_tokens 20000 for gpt-oss): not applied,
// docs/serving.md ("Aggregated runs with their recipe's KV cache") says why.
struct KvRecipe {
    const char* backend;
    const char* model;      // the CSV's model_path
    const char* system;     // the CSV's system
    const char* precision;  // the CSV's precision
};
constexpr KvRecipe kFp8KvRecipes[] = {
    {"sglang", "Qwen/Qwen3.5-397B-A17B", "b200_sxm", "fp8"},  // qwen3.5_fp8_b200.sh@3e2ebc0 (and @01fa35c)
    {"sglang", "Qwen/Qwen3.5-397B-A17B", "b200_sxm", "fp4"},  // qwen3.5_fp4_b200.sh@606b9e8 / @088fe66
    {"sglang", "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp8"},  // qwen3.5_fp8_b300.sh@563248
    {"sglang", "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp4"},  // qwen3.5_fp4_b300.sh@fa90f4a
    {"sglang", "Qwen/Qwen3.5-397B-A17B", "h200_sxm", "fp8"},  // qwen3.5_fp8_h200.sh@5739244 / @2116fc4
    {"sglang", "zhipuai/GLM-5", "b200_sxm", "fp8"},           // glm5_fp8_b200.sh@4eca3fe / @b9551f6
    {"sglang", "zhipuai/GLM-5", "b200_sxm", "fp4"},           // glm5_fp4_b200.sh@405c601
    {"sglang", "zhipuai/GLM-5", "b300_sxm", "fp8"},           // glm5_fp8_b300.sh@563248 / @5d2e1d4
    {"vllm", "MiniMaxAI/MiniMax-M2.5", "b200_sxm", "fp4"},    // minimaxm2.5_fp4_b200.sh@a52c31a
    {"vllm", "MiniMaxAI/MiniMax-M2.5", "b300_sxm", "fp4"},    // minimaxm2.5_fp4_b300.sh@5d2e1d4
    {"vllm", "MiniMaxAI/MiniMax-M2.5", "b300_sxm", "fp8"},    // minimaxm2.5_fp8_b300.sh@563248
    {"vllm", "openai/gpt-oss-120b", "b200_sxm", "fp4"},       // gptoss_fp4_b200.sh@34bc7c4 (its config file)
};
bool inferencemax_fp8_kv(const std::string& backend, const std::string& model, const std::string& system, const std::string& precision) {
    for (const KvRecipe& r : kFp8KvRecipes)
        if (backend == r.backend && model == r.model && system == r.system && precision == r.precision) return true;
    return false;
}

}  // namespace runs
