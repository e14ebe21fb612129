// plan_launch.cpp — launch commands: the SGLang, vLLM and TensorRT-LLM command lines of a planned deployment.
#include "core/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

#include "core/base/json_util.h"
#include "core/serving/serving.h"
#include "core/step/estimate.h"

namespace moe {
using nlohmann::json;
using namespace detail;

// ---- [SECTION] launch commands ------------------------------------------------------------------------------
// Flag spellings, checked against each engine's documentation:
// - SGLang, python -m sglang.launch_server: --model-path, --tp (= --tp-size, all GPUs of a pipeline stage), --dp
//   with --enable-dp-attention, --ep-size, --pp-size, --mem-fraction-static, --kv-cache-dtype fp8_e4m3,
//   --quantization, --chunked-prefill-size, --max-running-requests, --nnodes/--node-rank/--dist-init-addr
//   (https://docs.sglang.io/advanced_features/server_arguments.html,
//   https://docs.sglang.io/cookbook/base/reference/server_arguments); --moe-a2a-backend deepep (default none:
//   all-reduce / all-gather dispatch) (https://docs.sglang.io/advanced_features/expert_parallelism.html);
//   --deepep-mode auto|normal|low_latency and --enable-two-batch-overlap (the same page and `launch_server --help`);
//   MTP as --speculative-algorithm EAGLE --speculative-num-steps N --speculative-eagle-topk 1
//   --speculative-num-draft-tokens N+1 (https://docs.sglang.io/advanced_features/speculative_decoding.html,
//   "Multi Token Prediction"); --stream-interval N (serving.stream_interval; InferenceMAX's SGLang recipes set it);
//   --scheduler-recv-interval N (serving.scheduler_recv_interval, SGLang only).
//   TensorRT-LLM takes the same as stream_interval in the LLM API options; vLLM's command leaves it out (its flag
//   is recent and not in every version).
// - vLLM, vllm serve: --tensor-parallel-size, --data-parallel-size, --pipeline-parallel-size, --kv-cache-dtype fp8,
//   --gpu-memory-utilization, --max-num-seqs, --max-num-batched-tokens, --quantization
//   (https://docs.vllm.ai/en/latest/configuration/engine_args.html); --enable-expert-parallel (EP = tp*dp) and
//   --all2all-backend allgather_reducescatter|pplx|deepep_high_throughput|deepep_low_latency, multi-node
//   --data-parallel-size-local / --data-parallel-address / --data-parallel-start-rank
//   (https://docs.vllm.ai/en/latest/serving/expert_parallel_deployment/); dual-batch overlap --enable-dbo
//   (https://blog.vllm.ai/2025/12/17/large-scale-serving.html); MTP --speculative-config
//   '{"method":"mtp","num_speculative_tokens":N}' (https://docs.vllm.ai/en/latest/features/spec_decode.html).
// - TensorRT-LLM, trtllm-serve MODEL: --tp_size (all GPUs of a stage), --ep_size, --pp_size, --max_batch_size,
//   --max_num_tokens, --kv_cache_free_gpu_memory_fraction, --trust_remote_code, --extra_llm_api_options FILE (YAML:
//   enable_attention_dp, kv_cache_config.dtype, speculative_config {decoding_type: MTP, num_nextn_predict_layers})
//   (https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html,
//   https://nvidia.github.io/TensorRT-LLM/examples/deepseek_r1_reasoning_parser.html,
//   https://nvidia.github.io/TensorRT-LLM/features/speculative-decoding.html); multi-node through
//   mpirun ... trtllm-llmapi-launch.
std::string model_repo(const Scenario& s) {
    static const char* const kRepos[][2] = {
        {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},        {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"},
        {"kimi-k2", "moonshotai/Kimi-K2-Instruct"},         {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
        {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},        {"qwen3-8b", "Qwen/Qwen3-8B"},
        {"qwen3-next-80b-a3b", "Qwen/Qwen3-Next-80B-A3B-Instruct"},
        {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},    {"gpt-oss-120b", "openai/gpt-oss-120b"},
        {"llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"},
        {"llama-4-scout", "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"},
    };
    for (const auto& r : kRepos)
        if (s.model_ref == r[0]) return r[1];
    if (s.model_inline.is_object()) {
        const std::string name = read_str(s.model_inline, "_name_or_path");
        // Only a plain repository id or path goes into a shell command.
        if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == std::string::npos)
            return name;
        return "MODEL_PATH";
    }
    return s.model_ref;
}

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// The weight format the point asks for, when it differs from the checkpoint's: an online quantisation flag.
Dtype requested_weights(const Scenario& s, const PlanPoint& p, bool& changed) {
    changed = !p.weights.is_auto && p.weights.value != s.model.weight_dtype;
    return p.weights.is_auto ? s.model.weight_dtype : p.weights.value;
}

std::string sglang_command(const Scenario& s, const PlanPoint& p) {
    const int stage = p.tp * p.dp;
    std::string c = "python -m sglang.launch_server --model-path " + model_repo(s) + " --trust-remote-code";
    c += " --tp " + std::to_string(stage);
    if (p.dp > 1) c += " --dp " + std::to_string(p.dp) + " --enable-dp-attention";
    if (p.ep > 1) c += " --ep-size " + std::to_string(p.ep);
    if (p.pp > 1) c += " --pp-size " + std::to_string(p.pp);
    if (p.ep > 1) {
        switch (p.a2a) {
            case A2ABackend::auto_:  // what the model priced: DeepEP, or SGLang's own default (none: no flag)
                if (auto_a2a_is_deepep(s))
                    c += s.gpu.xgmi_mesh() ? " --moe-a2a-backend mori" : " --moe-a2a-backend deepep --deepep-mode auto";
                break;
            case A2ABackend::deepep_normal: c += " --moe-a2a-backend deepep --deepep-mode normal"; break;
            case A2ABackend::deepep_low_latency: c += " --moe-a2a-backend deepep --deepep-mode low_latency"; break;
            case A2ABackend::mori: c += " --moe-a2a-backend mori"; break;
            default: break;  // allgather: SGLang's default (none)
        }
        if (p.two_batch_overlap) c += " --enable-two-batch-overlap";
    }
    // SGLang runs MTP through its EAGLE path; an EAGLE-3 head needs its checkpoint; n-gram is its NGRAM algorithm.
    const SpecMethod method = s.runtime.speculative.method;
    if (p.mtp > 0)
        c += std::string(" --speculative-algorithm ") +
             (method == SpecMethod::ngram ? "NGRAM" : method == SpecMethod::eagle ? "EAGLE3 --speculative-draft-model-path DRAFT_HEAD" : "EAGLE") +
             " --speculative-num-steps " + std::to_string(p.mtp) +
             " --speculative-eagle-topk 1 --speculative-num-draft-tokens " + std::to_string(p.mtp + 1);
    bool changed = false;
    const Dtype w = requested_weights(s, p, changed);
    if (changed) c += std::string(" --quantization ") + (w == Dtype::fp8 ? "fp8" : is_fp4_like(w) ? "modelopt_fp4" : dtype_name(w));
    if (!p.kv_cache.is_auto && p.kv_cache.value == Dtype::fp8) c += " --kv-cache-dtype fp8_e4m3";
    c += " --mem-fraction-static " + num(s.runtime.memory_fraction(EngineKind::sglang));
    // SGLang divides both by the DP size under --enable-dp-attention: give the totals of all DP ranks.
    c += " --chunked-prefill-size " + std::to_string(s.workload.prefill_tokens * p.dp);
    c += " --max-running-requests " + std::to_string(p.batch * p.dp);
    if (s.serving.stream_interval > 1) c += " --stream-interval " + std::to_string(s.serving.stream_interval);
    if (s.serving.scheduler_recv_interval > 1) c += " --scheduler-recv-interval " + std::to_string(s.serving.scheduler_recv_interval);
    if (p.mode == PlanMode::disaggregated) c += p.prefill_workers < 0 ? " --disaggregation-mode prefill" : " --disaggregation-mode decode";
    const int world = p.decode_world(), per_node = s.gpus_per_node();
    if (world > per_node)
        c += " --nnodes " + std::to_string((world + per_node - 1) / per_node) + " --node-rank $NODE_RANK --dist-init-addr $HEAD_IP:5000";
    return c;
}

std::string vllm_command(const Scenario& s, const PlanPoint& p) {
    std::string c = "vllm serve " + model_repo(s) + " --trust-remote-code";
    c += " --tensor-parallel-size " + std::to_string(p.tp);
    if (p.dp > 1) c += " --data-parallel-size " + std::to_string(p.dp);
    if (p.pp > 1) c += " --pipeline-parallel-size " + std::to_string(p.pp);
    if (p.ep > 1) {
        c += " --enable-expert-parallel --all2all-backend ";
        switch (p.a2a) {
            case A2ABackend::pplx: c += "pplx"; break;
            case A2ABackend::mori: c += "mori"; break;
            case A2ABackend::deepep_normal: c += "deepep_high_throughput"; break;
            case A2ABackend::deepep_low_latency: c += "deepep_low_latency"; break;
            default: c += "allgather_reducescatter"; break;
        }
        if (p.two_batch_overlap) c += " --enable-dbo";
    }
    if (p.mtp > 0) {
        const SpecMethod method = s.runtime.speculative.method;
        c += std::string(" --speculative-config '{\"method\":\"") +
             (method == SpecMethod::ngram ? "ngram" : method == SpecMethod::eagle ? "eagle3\",\"model\":\"DRAFT_HEAD" : "mtp") +
             "\",\"num_speculative_tokens\":" + std::to_string(p.mtp) + "}'";
    }
    bool changed = false;
    const Dtype w = requested_weights(s, p, changed);
    if (changed) c += std::string(" --quantization ") + (w == Dtype::fp8 ? "fp8" : is_fp4_like(w) ? "modelopt_fp4" : dtype_name(w));
    if (!p.kv_cache.is_auto && p.kv_cache.value == Dtype::fp8) c += " --kv-cache-dtype fp8";
    c += " --gpu-memory-utilization " + num(s.runtime.memory_fraction(EngineKind::vllm));
    c += " --max-num-seqs " + std::to_string(p.batch);
    c += " --max-num-batched-tokens " + std::to_string(s.workload.prefill_tokens);
    if (p.mode == PlanMode::disaggregated) c += " --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'";
    const int per_node = s.gpus_per_node();
    if (p.decode_world() > per_node && p.dp > 1 && per_node % (p.tp * p.pp) == 0)
        c += " --data-parallel-size-local " + std::to_string(per_node / (p.tp * p.pp)) +
             " --data-parallel-address $HEAD_IP --data-parallel-start-rank $START_RANK";
    return c;
}

std::string trtllm_command(const Scenario& s, const PlanPoint& p) {
    std::string yaml = "{";
    auto item = [&](const std::string& kv) { yaml += (yaml.size() > 1 ? ", " : "") + kv; };
    if (p.dp > 1) item("enable_attention_dp: true");
    std::string kv = "kv_cache_config: {free_gpu_memory_fraction: " + num(s.runtime.memory_fraction(EngineKind::trtllm));
    if (!p.kv_cache.is_auto && p.kv_cache.value == Dtype::fp8) kv += ", dtype: fp8";
    item(kv + "}");
    if (p.mtp > 0) {
        const SpecMethod method = s.runtime.speculative.method;
        item(method == SpecMethod::mtp ? "speculative_config: {decoding_type: MTP, num_nextn_predict_layers: " + std::to_string(p.mtp) + "}"
             : method == SpecMethod::eagle ? "speculative_config: {decoding_type: Eagle3, max_draft_len: " + std::to_string(p.mtp) + ", speculative_model_dir: DRAFT_HEAD}"
                                           : "speculative_config: {decoding_type: NGram, max_draft_len: " + std::to_string(p.mtp) + "}");
    }
    if (p.mode == PlanMode::disaggregated) item("cache_transceiver_config: {backend: DEFAULT}");
    if (s.serving.stream_interval > 1) item("stream_interval: " + std::to_string(s.serving.stream_interval));
    yaml += "}";
    const int stage = p.tp * p.dp, world = p.decode_world(), per_node = s.gpus_per_node();
    std::string c = "echo '" + yaml + "' > extra-llm-api.yml && ";
    if (world > per_node) c += "mpirun -np " + std::to_string(world) + " --hostfile $HOSTFILE trtllm-llmapi-launch ";
    c += "trtllm-serve " + model_repo(s) + " --trust_remote_code";
    c += " --tp_size " + std::to_string(stage);
    if (p.ep > 1) c += " --ep_size " + std::to_string(p.ep);
    if (p.pp > 1) c += " --pp_size " + std::to_string(p.pp);
    c += " --max_batch_size " + std::to_string(p.batch);
    c += " --max_num_tokens " + std::to_string(s.workload.prefill_tokens);
    c += " --kv_cache_free_gpu_memory_fraction " + num(s.runtime.memory_fraction(EngineKind::trtllm));
    c += " --extra_llm_api_options extra-llm-api.yml";
    bool changed = false;
    requested_weights(s, p, changed);
    if (changed) c += "  # needs a checkpoint quantised to " + std::string(dtype_name(p.weights.value)) + " (TensorRT Model Optimizer)";
    return c;
}

}  // namespace

std::string prefill_launch_command(const Scenario& s, const PlanPoint& p, ServingEngine engine) {
    if (p.mode != PlanMode::disaggregated) return "";
    // A prefill worker: its own layout, one prompt per forward per DP rank (prefill_workers < 0 marks the role).
    PlanPoint q = p;
    q.tp = p.prefill_tp, q.dp = p.prefill_dp, q.ep = p.prefill_ep, q.pp = 1;
    q.batch = 1;
    q.prefill_workers = -1;
    if (q.ep == 1) q.two_batch_overlap = false;
    return launch_command(s, q, engine);
}

std::string launch_command(const Scenario& s, const PlanPoint& p, ServingEngine engine) {
    switch (engine) {
        case ServingEngine::sglang: return sglang_command(s, p);
        case ServingEngine::vllm: return vllm_command(s, p);
        case ServingEngine::trtllm: return trtllm_command(s, p);
    }
    return "";
}


}  // namespace moe
