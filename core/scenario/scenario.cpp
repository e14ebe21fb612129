#include "core/scenario/scenario.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstring>

#include "core/base/json_text.h"
#include "core/base/json_util.h"

namespace moe {
using namespace detail;

namespace {

const char* const kPhaseChoices[] = {"both", "prefill", "decode", nullptr};
const char* const kBackendChoices[] = {"auto", "none", "allgather", "deepep_normal", "deepep_low_latency", "pplx", "mori", nullptr};
const char* const kLayoutChoices[] = {"auto", "contiguous", "masked", "per_token", nullptr};
const char* const kOffloadTierChoices[] = {"none", "host", "ssd", nullptr};
const char* const kEngineChoices[] = {"sglang", "vllm", "trtllm", "ideal", nullptr};
const char* const kServingModeChoices[] = {"off", "aggregated", "disaggregated", nullptr};
const char* const kFp4Choices[] = {"dequant", "expand", nullptr};
const char* const kFp8ScalingChoices[] = {"auto", "block", "tensor", nullptr};
const char* const kOverlapChoices[] = {"auto", "none", "tbo", "full", nullptr};
const char* const kExpertRowsChoices[] = {"random", "even", nullptr};
const char* const kSpecMethodChoices[] = {"mtp", "eagle", "ngram", nullptr};
const char* const kMoeKernelChoices[] = {"auto", "deepgemm", "triton", "cutlass", "flashinfer_cutlass", nullptr};
const char* const kFp4ComputeChoices[] = {"native", "fp8", nullptr};
const char* const kMlaKvChoices[] = {"all", "bf16_rope", "flashmla", nullptr};

// One field: its public description and where it lives in a Scenario.
struct FieldImpl {
    FieldDesc desc;
    void* (*ptr)(Scenario&);
};

#define MOE_PTR(member) [](Scenario& s) -> void* { return &s.member; }

constexpr double kBig = 1e8;

const std::vector<FieldImpl>& field_impls() {
    static const std::vector<FieldImpl> fields = {
        {{"model", FieldType::ref, "", 0, 0, nullptr, "A preset model id, or an inline HuggingFace config.json object."}, nullptr},
        {{"hardware", FieldType::ref, "", 0, 0, nullptr, "A preset GPU id, or an object of GPU fields (with \"base\": a preset id to start from)."}, nullptr},
        {{"parallel.tp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Attention tensor parallelism: GPUs that split each attention layer's heads."}, MOE_PTR(parallel.tp)},
        {{"parallel.dp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Attention data parallelism (DP attention): independent attention replicas that share the experts."}, MOE_PTR(parallel.dp)},
        {{"parallel.ep", FieldType::integer, "GPUs", 1, 65536, nullptr, "Expert parallelism: GPUs the routed experts are spread over; must divide tp*dp."}, MOE_PTR(parallel.ep)},
        {{"parallel.pp", FieldType::integer, "stages", 1, 4096, nullptr, "Pipeline stages: layers are split into pp consecutive groups on different GPUs."}, MOE_PTR(parallel.pp)},
        {{"parallel.cp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Context parallelism inside the attention TP group (divides tp): a prefill chunk's tokens and every sequence's KV cache are split over cp ranks, heads over tp/cp; the chunk's KV is all-gathered per layer."}, MOE_PTR(parallel.cp)},
        {{"parallel.gpus_per_node", FieldType::integer, "GPUs", 0, 1024, nullptr, "GPUs per NVLink domain (0: from the hardware); traffic beyond it goes over RDMA."}, MOE_PTR(parallel.gpus_per_node)},
        {{"workload.phase", FieldType::choice, "", 0, 0, kPhaseChoices, "Which phase to estimate: prefill, decode or both."}, MOE_PTR(workload.phase)},
        {{"workload.batch", FieldType::integer, "sequences", 1, 1e6, nullptr, "Concurrent decode sequences per attention-DP rank."}, MOE_PTR(workload.batch)},
        {{"workload.prefill_tokens", FieldType::integer, "tokens", 1, kMaxForwardTokens, nullptr, "Prompt tokens one prefill forward takes in per attention-DP rank (the chunk size); with a prefix-cache hit the forward computes only their missed part."}, MOE_PTR(workload.prefill_tokens)},
        {{"workload.prompt_len", FieldType::integer, "tokens", 1, kBig, nullptr, "Prompt length of each request."}, MOE_PTR(workload.prompt_len)},
        {{"workload.output_len", FieldType::integer, "tokens", 1, kBig, nullptr, "Generated tokens per request."}, MOE_PTR(workload.output_len)},
        {{"workload.context_len", FieldType::integer, "tokens", 0, kBig, nullptr, "KV length seen by a decode step (0: prompt_len + output_len/2)."}, MOE_PTR(workload.context_len)},
        {{"workload.prefix_cache_hit", FieldType::number, "", 0, 1, nullptr, "Share of each prompt found in the prefix cache: prefill computes only the missed tokens (at least the last) but they attend to the whole prompt."}, MOE_PTR(workload.prefix_cache_hit)},
        {{"workload.prompt_lens", FieldType::lengths, "tokens", 1, kBig, nullptr, "Step-level, a prefill forward of prompts of mixed lengths (seed 000 §8.1): the prompt tokens of each request, each request's attention priced at its own length; the forward's tokens are their sum (prompt_len and prefill_tokens are then not used by the prefill step). At most 4096 prompts; [] is off."}, MOE_PTR(workload.prompt_lens)},
        {{"workload.context_lens", FieldType::lengths, "tokens", 1, kBig, nullptr, "Step-level, a decode step over sequences of mixed lengths (seed 000 §8.1): the KV length of each sequence of the batch, each one's attention at its own length; the batch is their count (batch and context_len are then not used by the decode step). At most 4096; [] is off."}, MOE_PTR(workload.context_lens)},
        {{"workload.prefill_bucket_lens", FieldType::lengths, "tokens", 1, kBig, nullptr, "Prefill bucketing (seed 000 §8.1): ascending bucket lengths; each prompt of workload.prompt_lens is padded to the smallest bucket that holds it and the padding is computed. At most 64; [] is off (no padding)."}, MOE_PTR(workload.prefill_bucket_lens)},
        {{"workload.sessions.turns", FieldType::integer, "requests", 0, 1e5, nullptr, "Serving: requests per multi-turn session (0: off); each client runs sessions one after the other, a turn's prompt carrying the system prompt and the session's history, found in the KV cache's tiers when still held (serving.isl is then not used)."}, MOE_PTR(serving.sessions.turns)},
        {{"workload.sessions.system_prompt_len", FieldType::integer, "tokens", 0, kBig, nullptr, "Serving with sessions: tokens of the system prompt every session shares (cached once)."}, MOE_PTR(serving.sessions.system_prompt_len)},
        {{"workload.sessions.user_len", FieldType::integer, "tokens", 1, kBig, nullptr, "Serving with sessions: new user tokens per turn (serving.length_spread draws them like the prompts); the answer is serving.osl tokens and joins the history."}, MOE_PTR(serving.sessions.user_len)},
        {{"workload.sessions.think_time_s", FieldType::number, "s", 0, 1e5, nullptr, "Serving with sessions: time between an answer and the session's next turn (a user reading, an agent's tool call); longer = other sessions' KV pushes this one's down the tiers."}, MOE_PTR(serving.sessions.think_time_s)},
        {{"precision.weights", FieldType::dtype, "", 0, 0, nullptr, "Weight format of the linear layers (auto: the checkpoint's quantization_config, else torch_dtype)."}, MOE_PTR(precision.weights)},
        {{"precision.attention", FieldType::dtype, "", 0, 0, nullptr, "Weight format of the attention projections (auto: as weights)."}, MOE_PTR(precision.attention)},
        {{"precision.experts", FieldType::dtype, "", 0, 0, nullptr, "Weight format of the routed experts (auto: the checkpoint's, e.g. mxfp4 for gpt-oss)."}, MOE_PTR(precision.experts)},
        {{"precision.shared_experts", FieldType::dtype, "", 0, 0, nullptr, "Weight format of shared experts and dense FFN layers (auto: as weights)."}, MOE_PTR(precision.shared_experts)},
        {{"precision.embedding", FieldType::dtype, "", 0, 0, nullptr, "Format of the embedding and LM head (auto: the model's torch_dtype)."}, MOE_PTR(precision.embedding)},
        {{"precision.kv_cache", FieldType::dtype, "", 0, 0, nullptr, "KV-cache format: bf16, fp16 or fp8 (auto: bf16)."}, MOE_PTR(precision.kv_cache)},
        {{"precision.dispatch", FieldType::dtype, "", 0, 0, nullptr, "Format of tokens sent to the experts (auto: fp8 when the experts run in fp8 or lower)."}, MOE_PTR(precision.dispatch)},
        {{"precision.combine", FieldType::dtype, "", 0, 0, nullptr, "Format of expert outputs sent back (auto: bf16)."}, MOE_PTR(precision.combine)},
        {{"precision.fp4_on_hopper", FieldType::choice, "", 0, 0, kFp4Choices, "MXFP4/NVFP4 weights on a GPU without FP4 tensor cores: dequant keeps them packed and dequantises in the GEMM (W4A16); expand stores them as FP8 (memory doubles)."}, MOE_PTR(precision.fp4_on_hopper)},
        {{"precision.fp8_scaling", FieldType::choice, "", 0, 0, kFp8ScalingChoices, "How FP8 linear weights are scaled, which picks their GEMM kernel: block (128x128 blocks, DeepGEMM) or tensor (one scale per tensor or channel, CUTLASS/cuBLASLt scaled_mm); auto: the checkpoint's (weight_block_size), else tensor."}, MOE_PTR(precision.fp8_scaling)},
        {{"precision.fp4_compute", FieldType::choice, "", 0, 0, kFp4ComputeChoices, "MXFP4/NVFP4 weights on a GPU with FP4 tensor cores: native multiplies at the FP4 rate; fp8 keeps them stored in FP4 but casts them to FP8 and multiplies at the FP8 rate (seed 002 §6, B200 as DeepSeek V4 runs today)."}, MOE_PTR(precision.fp4_compute)},
        {{"precision.mla_kv", FieldType::choice, "", 0, 0, kMlaKvChoices, "An FP8 MLA latent cache: all (every element FP8), bf16_rope (the rope part in BF16, seed 002 §3) or flashmla (that plus an FP32 scale per 128 latent elements: FlashMLA's 656-byte token of DeepSeek-V3.2). No effect unless the model has MLA and the KV cache is FP8."}, MOE_PTR(precision.mla_kv)},
        {{"runtime.a2a_backend", FieldType::choice, "", 0, 0, kBackendChoices, "How tokens reach the experts: auto picks DeepEP normal for prefill and low-latency for decode when ep > 1 (MoRI-EP on AMD GPUs); mori = AMD's MoRI-EP kernels over Infinity Fabric."}, MOE_PTR(runtime.a2a_backend)},
        {{"runtime.two_batch_overlap", FieldType::boolean, "", 0, 0, nullptr, "Split each step into two micro-batches so one's communication hides under the other's compute."}, MOE_PTR(runtime.two_batch_overlap)},
        {{"runtime.overlap", FieldType::choice, "", 0, 0, kOverlapChoices, "Expert-parallel communication vs compute: auto follows two_batch_overlap; none serial; tbo micro-batches hide one's communication under another's compute; full hides dispatch and combine entirely (DeepEP's free decode communication)."}, MOE_PTR(runtime.overlap)},
        {{"runtime.micro_batches", FieldType::integer, "", 0, 64, nullptr, "Micro-batches each step is split into (0: 2 with two-batch overlap, else 1)."}, MOE_PTR(runtime.micro_batches)},
        {{"runtime.shared_expert_overlap", FieldType::boolean, "", 0, 0, nullptr, "Run the shared experts while the dispatch is in flight (vLLM's prepare_no_receive), instead of before it."}, MOE_PTR(runtime.shared_expert_overlap)},
        {{"runtime.comm_sms", FieldType::integer, "SMs", 0, 1024, nullptr, "SMs that DeepEP normal-mode kernels take from compute while they run."}, MOE_PTR(runtime.comm_sms)},
        {{"runtime.expert_layout", FieldType::choice, "", 0, 0, kLayoutChoices, "Expert activation layout: contiguous (permute/unpermute), masked (per-expert padded batches) or per_token (no grouping: each token-expert pair loads its expert's weights, seed 003's baseline)."}, MOE_PTR(runtime.expert_layout)},
        {{"runtime.speculative.method", FieldType::choice, "", 0, 0, kSpecMethodChoices, "Who drafts the speculative tokens: mtp (the model's own MTP modules, num_nextn_predict_layers), eagle (an EAGLE-3 head: one decoder layer of the target's width with 2h-wide q/k/v, a 3h x h fusion and its own 32,000-token LM head, in BF16, sharing the target's embedding) or ngram (prompt lookup on the host: no draft model, no GPU time)."}, MOE_PTR(runtime.speculative.method)},
        {{"runtime.speculative.draft_tokens", FieldType::integer, "tokens", 0, kMaxDraftTokens, nullptr, "Tokens drafted per decode step (0: off); the verify pass runs the target on batch x (1 + drafts) tokens."}, MOE_PTR(runtime.speculative.draft_tokens)},
        {{"runtime.speculative.acceptance", FieldType::rates, "", 0, 1, nullptr, "Conditional acceptance of each draft position (a list, the last repeating) or a published curve by name (deepseek-v3-mtp, vllm-mtp8-gsm8k, eagle3-llama3.1-8b-mtbench); tokens per step = 1 + sum_k prod_{j<=k} a_j."}, MOE_PTR(runtime.speculative.acceptance)},
        {{"runtime.mtp_draft_tokens", FieldType::integer, "tokens", 0, kMaxDraftTokens, nullptr, "Older spelling of runtime.speculative.draft_tokens (drafts by the model's MTP layers)."}, MOE_PTR(runtime.speculative.draft_tokens)},
        {{"runtime.mtp_acceptance_rate", FieldType::number, "", 0, 1, nullptr, "Older spelling of runtime.speculative.acceptance as one rate for every draft position: tokens per step = 1 + a + a^2 + ..."}, MOE_PTR(runtime.speculative.acceptance.rates[0])},
        {{"runtime.prefill_overhead_ms", FieldType::number, "ms", -1, 1e4, nullptr, "Host overhead per prefill forward (scheduling, launches); -1: calibrated default."}, MOE_PTR(runtime.prefill_overhead_ms)},
        {{"runtime.decode_overhead_ms", FieldType::number, "ms", -1, 1e4, nullptr, "Host overhead per decode step; -1: calibrated default."}, MOE_PTR(runtime.decode_overhead_ms)},
        {{"runtime.mem_fraction", FieldType::number, "", -1, 1, nullptr, "Share of HBM the engine may use (SGLang mem_fraction_static, vLLM gpu_memory_utilization, TensorRT-LLM free_gpu_memory_fraction), 0.05 to 1; -1: the engine's default (SGLang 0.88, vLLM and TensorRT-LLM 0.9)."}, MOE_PTR(runtime.mem_fraction)},
        {{"runtime.reserve_GB", FieldType::number, "GB", -1, 1e4, nullptr, "Memory held by the CUDA context, graphs and allocator; -1: calibrated default."}, MOE_PTR(runtime.reserve_GB)},
        {{"runtime.kv_block_tokens", FieldType::integer, "tokens", 0, 4096, nullptr, "Paged-KV block size; each request's KV is rounded up to whole blocks. 0: the engine's page (SGLang 1, vLLM 16 (64 for MLA on B200-class GPUs and for DSA models), TensorRT-LLM 32)."}, MOE_PTR(runtime.kv_block_tokens)},
        {{"runtime.expert_offload.tier", FieldType::choice, "", 0, 0, kOffloadTierChoices, "Where experts beyond the HBM cache live: none (all in HBM), host (CPU memory, streamed at hardware.host_bandwidth_GBps) or ssd (at hardware.ssd_bandwidth_GBps)."}, MOE_PTR(runtime.expert_offload.tier)},
        {{"runtime.expert_offload.cached_experts_per_layer", FieldType::integer, "experts", 0, 1e6, nullptr, "Experts per MoE layer per GPU kept in HBM (the hottest); the others are streamed in when selected."}, MOE_PTR(runtime.expert_offload.cached_experts_per_layer)},
        {{"runtime.expert_offload.prefetch", FieldType::boolean, "", 0, 0, nullptr, "Stream a layer's missing experts while the previous layer computes (only the excess is exposed)."}, MOE_PTR(runtime.expert_offload.prefetch)},
        {{"runtime.expert_offload.skew", FieldType::number, "", 0, 4, nullptr, "Zipf exponent of expert popularity (0: uniform routing); hotter experts make the cache hit more often."}, MOE_PTR(runtime.expert_offload.skew)},
        {{"runtime.expert_offload.window_batches", FieldType::integer, "batches", 0, 1e9, nullptr, "Batches over which the cache counts each expert's selections and keeps the most selected (seed 003: 128); 0: it holds the truly hottest (an oracle)."}, MOE_PTR(runtime.expert_offload.window_batches)},
        {{"runtime.kv_offload.host_GB", FieldType::number, "GB", 0, 1e6, nullptr, "Host memory per GPU for KV cache evicted from HBM (SGLang HiCache, vLLM KV offloading, LMCache); 0: none. Idle sessions' KV moves there by LRU and is read back at runtime.kv_offload.host_bandwidth_GBps."}, MOE_PTR(runtime.kv_offload.host_GB)},
        {{"runtime.kv_offload.ssd_GB", FieldType::number, "GB", 0, 1e7, nullptr, "SSD space per GPU for KV cache evicted from host memory (or from HBM without a host tier); 0: none."}, MOE_PTR(runtime.kv_offload.ssd_GB)},
        {{"runtime.kv_offload.host_bandwidth_GBps", FieldType::number, "GB/s", 0, 1e5, nullptr, "Host-to-GPU bandwidth a KV reload gets per GPU; 0: hardware.host_bandwidth_GBps."}, MOE_PTR(runtime.kv_offload.host_bandwidth_GBps)},
        {{"runtime.kv_offload.ssd_bandwidth_GBps", FieldType::number, "GB/s", 0, 1e5, nullptr, "SSD read bandwidth a KV reload gets per GPU; 0: hardware.ssd_bandwidth_GBps."}, MOE_PTR(runtime.kv_offload.ssd_bandwidth_GBps)},
        {{"runtime.engine", FieldType::choice, "", 0, 0, kEngineChoices, "Serving engine whose system constants apply (per-step overheads, scheduling, memory fraction, KV block): sglang, vllm, trtllm, or ideal (none)."}, MOE_PTR(runtime.engine)},
        {{"runtime.moe_kernel", FieldType::choice, "", 0, 0, kMoeKernelChoices, "The routed experts' kernel: auto (the measured tables), deepgemm (DeepGEMM grouped GEMMs), triton (Triton fused MoE: 64-row blocks, 16 when the tokens do not exceed the experts; batched after DeepEP low-latency / pplx, where the activation runs over every padded slot) cutlass (CUTLASS grouped GEMM, 64-row tiles; no public tables) or flashinfer_cutlass (FlashInfer's CUTLASS fused MoE, vLLM's FlashInferExperts: measured for block-scaled FP8 on H100 / H200 without a DeepEP / pplx all-to-all, else CUTLASS's 64-row tiles)."}, MOE_PTR(runtime.moe_kernel)},
        {{"runtime.moe_chunk_tokens", FieldType::integer, "tokens", -1, 1e8, nullptr, "Tokens per chunk of the contiguous-layout fused MoE (vLLM's VLLM_FUSED_MOE_CHUNK_SIZE): each chunk runs the experts again and sizes the workspace; -1: the engine's (vLLM 32768, others none), 0: no chunking."}, MOE_PTR(runtime.moe_chunk_tokens)},
        {{"cost.gpu_hour_usd", FieldType::number, "USD/h", 0, 1e6, nullptr, "Price of one GPU-hour for the $ per million tokens outputs; 0: the GPU preset's example price (H100, H200, B200, GB200: public on-demand prices with their date, presets/hardware/README.md), none for the others."}, MOE_PTR(cost.gpu_hour_usd)},
        {{"routing.imbalance", FieldType::number, "", 1, 64, nullptr, "Tokens reaching the busiest EP rank over the mean (1 = perfectly balanced)."}, MOE_PTR(routing.imbalance)},
        {{"routing.expert_rows", FieldType::choice, "", 0, 0, kExpertRowsChoices, "How a rank's token-expert pairs spread over its experts, for the kernel's M-tile fill: random (each token picks its experts independently: binomial rows per expert, each rounded up to whole tiles) or even (every expert the mean, split as evenly as whole rows allow: seed 004's worked examples). A measured fused-MoE table is timed under even routing (a round robin over the experts); under random routing the experts no token picks are not loaded, and their share of the table's time comes off."}, MOE_PTR(routing.expert_rows)},
        {{"routing.redundant_experts", FieldType::integer, "experts", 0, 65536, nullptr, "Extra copies of hot experts placed across EP ranks (EPLB)."}, MOE_PTR(routing.redundant_experts)},
        {{"serving.mode", FieldType::choice, "", 0, 0, kServingModeChoices, "off (step-level only), aggregated (one replica, continuous batching with chunked prefill) or disaggregated (prefill and decode pools)."}, MOE_PTR(serving.mode)},
        {{"serving.isl", FieldType::integer, "tokens", 1, kBig, nullptr, "Input tokens per request."}, MOE_PTR(serving.isl)},
        {{"serving.osl", FieldType::integer, "tokens", 1, kBig, nullptr, "Output tokens per request."}, MOE_PTR(serving.osl)},
        {{"serving.concurrency", FieldType::integer, "requests", 1, 1e7, nullptr, "Closed-loop clients (requests in flight). Aggregated: per replica, spread over its DP ranks. Disaggregated: for the whole deployment, each decode DP rank running at most serving.decode.batch of them (the rest wait for a slot); a scenario file without it fills the decode slots (workers x dp x batch)."}, MOE_PTR(serving.concurrency)},
        {{"serving.requests_per_client", FieldType::integer, "requests", 1, 1e6, nullptr, "Requests each client sends in the benchmark; the first ones arrive together and wait for prefill (10 = a run of 10 x concurrency prompts)."}, MOE_PTR(serving.requests_per_client)},
        {{"serving.length_spread", FieldType::number, "", 0, 0.99, nullptr, "Spread of the request lengths: each request's input and output lengths are drawn uniformly from (1 - spread) x to 1 x isl / osl (0: fixed lengths; a client's --random-range-ratio 0.8 in SGLang's and InferenceMAX's bench_serving is 0.2). Sets the mean lengths and how fast synchronised rounds of requests drift apart."}, MOE_PTR(serving.length_spread)},
        {{"serving.stream_interval", FieldType::integer, "tokens", 1, 4096, nullptr, "Tokens the engine sends to a client at a time after the first (--stream-interval in SGLang, stream_interval in TensorRT-LLM): the engines send the first token as soon as it is made and the rest in chunks, so TTFT, the mean TPOT (the time after the first token over the tokens after it) and the end-to-end latency are unchanged; it goes into the launch commands."}, MOE_PTR(serving.stream_interval)},
        {{"serving.scheduler_recv_interval", FieldType::integer, "forwards", 1, 1000, nullptr, "SGLang's --scheduler-recv-interval: the scheduler takes in new requests every N forwards (1, the default: every forward), so a new request waits (N - 1) / 2 decode steps more on average; serving recipes raise it to 10-30 to save host time under load. vLLM and TensorRT-LLM take new requests at every step (not applied, with a warning). It goes into SGLang's launch command."}, MOE_PTR(serving.scheduler_recv_interval)},
        {{"serving.prefill.parallel.tp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Disaggregated: attention TP of one prefill worker."}, MOE_PTR(serving.prefill.parallel.tp)},
        {{"serving.prefill.parallel.dp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Disaggregated: attention DP of one prefill worker."}, MOE_PTR(serving.prefill.parallel.dp)},
        {{"serving.prefill.parallel.ep", FieldType::integer, "GPUs", 1, 65536, nullptr, "Disaggregated: expert parallelism of one prefill worker."}, MOE_PTR(serving.prefill.parallel.ep)},
        {{"serving.prefill.parallel.pp", FieldType::integer, "stages", 1, 4096, nullptr, "Disaggregated: pipeline stages of one prefill worker."}, MOE_PTR(serving.prefill.parallel.pp)},
        {{"serving.prefill.workers", FieldType::integer, "workers", 1, 65536, nullptr, "Disaggregated: number of prefill workers."}, MOE_PTR(serving.prefill.workers)},
        {{"serving.prefill.batch", FieldType::integer, "prompts", 1, 1e6, nullptr, "Disaggregated: prompts per prefill forward per DP rank."}, MOE_PTR(serving.prefill.batch)},
        {{"serving.decode.parallel.tp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Disaggregated: attention TP of one decode worker."}, MOE_PTR(serving.decode.parallel.tp)},
        {{"serving.decode.parallel.dp", FieldType::integer, "GPUs", 1, 65536, nullptr, "Disaggregated: attention DP of one decode worker."}, MOE_PTR(serving.decode.parallel.dp)},
        {{"serving.decode.parallel.ep", FieldType::integer, "GPUs", 1, 65536, nullptr, "Disaggregated: expert parallelism of one decode worker."}, MOE_PTR(serving.decode.parallel.ep)},
        {{"serving.decode.parallel.pp", FieldType::integer, "stages", 1, 4096, nullptr, "Disaggregated: pipeline stages of one decode worker."}, MOE_PTR(serving.decode.parallel.pp)},
        {{"serving.decode.workers", FieldType::integer, "workers", 1, 65536, nullptr, "Disaggregated: number of decode workers."}, MOE_PTR(serving.decode.workers)},
        {{"serving.decode.batch", FieldType::integer, "requests", 1, 1e6, nullptr, "Disaggregated: the most requests a decode DP rank runs at once (its max batch); serving.concurrency clients share the workers x dp x batch slots."}, MOE_PTR(serving.decode.batch)},
    };
    return fields;
}
#undef MOE_PTR

const FieldImpl* find_impl(std::string_view path) {
    for (const FieldImpl& f : field_impls())
        if (path == f.desc.path) return &f;
    return nullptr;
}

int choice_index(const char* const* choices, std::string_view v) {
    for (int i = 0; choices[i]; ++i)
        if (v == choices[i]) return i;
    return -1;
}

std::string choice_list(const char* const* choices) {
    std::string s;
    for (int i = 0; choices[i]; ++i) s += (i ? ", " : "") + std::string(choices[i]);
    return s;
}

std::string id_list(const std::vector<CatalogEntry>& list) {
    std::string s;
    for (size_t i = 0; i < list.size(); ++i) s += (i ? ", " : "") + list[i].id;
    return s;
}

bool set_model(Scenario& s, const json& v, const Catalog& cat, Issues& errors) {
    if (v.is_string()) {
        const ModelSpec* m = cat.model(v.get<std::string>());
        if (!m) {
            errors.push_back({"model", "unknown preset '" + shown_text(v.get<std::string>()) + "' (known: " + id_list(cat.models()) + ")"});
            return false;
        }
        s.model_ref = v.get<std::string>();
        s.model_inline = nullptr;
        s.model = *m;
        return true;
    }
    if (v.is_object()) {
        Issues e;
        ModelSpec m = parse_hf_config(v, "model", e);
        if (!e.empty()) {
            errors.insert(errors.end(), e.begin(), e.end());
            return false;
        }
        std::string name = read_str(v, "_name_or_path", m.model_type);
        m.name = name.empty() ? "custom" : name;
        s.model_ref = "inline";
        s.model_inline = v;
        s.model = std::move(m);
        return true;
    }
    errors.push_back({"model", "must be a preset id or an HF config.json object"});
    return false;
}

bool set_hardware(Scenario& s, const json& v, const Catalog& cat, Issues& errors) {
    auto known = [&] { return " (known: " + id_list(cat.hardware()) + ")"; };
    if (v.is_string()) {
        const GpuSpec* g = cat.gpu(v.get<std::string>());
        if (!g) {
            errors.push_back({"hardware", "unknown preset '" + shown_text(v.get<std::string>()) + "'" + known()});
            return false;
        }
        s.hardware_ref = v.get<std::string>();
        s.hardware_inline = nullptr;
        s.gpu = *g;
        return true;
    }
    if (v.is_object()) {
        json merged = json::object();
        if (v.contains("base")) {
            const json& b = v["base"];
            const GpuSpec* g = b.is_string() ? cat.gpu(b.get<std::string>()) : nullptr;
            if (!g) {
                errors.push_back({"hardware.base", "unknown preset " + shown(b) + known()});
                return false;
            }
            merged = gpu_spec_to_json(*g);
        }
        for (auto it = v.begin(); it != v.end(); ++it) merged[it.key()] = it.value();
        Issues e;
        GpuSpec g = parse_gpu_spec(merged, "hardware", e);
        if (!e.empty()) {
            errors.insert(errors.end(), e.begin(), e.end());
            return false;
        }
        if (g.id.empty() || v.contains("base")) g.id = "custom";
        s.hardware_ref = "inline";
        s.hardware_inline = v;
        s.gpu = std::move(g);
        return true;
    }
    errors.push_back({"hardware", "must be a preset id or an object of GPU fields"});
    return false;
}

// runtime.speculative.acceptance: a curve's name, or 1..16 conditional rates in [0, 1].
bool set_acceptance(AcceptanceSel& a, const std::string& path, const json& v, Issues& errors) {
    if (v.is_string()) {
        const int i = find_acceptance_curve(v.get<std::string>());
        if (i < 0) {
            int n = 0;
            const AcceptanceCurve* c = acceptance_curves(&n);
            std::string known;
            for (int k = 0; k < n; ++k) known += (k ? ", " : "") + std::string(c[k].name);
            errors.push_back({path, "unknown acceptance curve " + shown(v) + " (known: " + known + ")"});
            return false;
        }
        a.curve = i;
        return true;
    }
    if (is_number(v)) return set_acceptance(a, path, json::array({v}), errors);
    if (!v.is_array() || v.empty() || v.size() > std::size_t(kMaxDraftTokens)) {
        errors.push_back({path, "must be a curve name or a list of 1 to " + std::to_string(kMaxDraftTokens) +
                                    " acceptance rates in [0, 1], got " + shown(v)});
        return false;
    }
    AcceptanceSel out;
    out.n = int(v.size());
    for (int k = 0; k < out.n; ++k) {
        const json& x = v[std::size_t(k)];
        if (!is_number(x) || !std::isfinite(x.get<double>()) || x.get<double>() < 0 || x.get<double>() > 1) {
            errors.push_back({path + "[" + std::to_string(k) + "]", "must be a rate in [0, 1], got " + shown(x)});
            return false;
        }
        out.rates[k] = x.get<double>();
    }
    a = out;
    return true;
}

bool set_value(Scenario& s, const FieldImpl& f, const json& v, const Catalog& cat, Issues& errors) {
    const FieldDesc& d = f.desc;
    const std::string path = d.path;
    switch (d.type) {
        case FieldType::ref:
            return path == "model" ? set_model(s, v, cat, errors) : set_hardware(s, v, cat, errors);
        case FieldType::integer:
        case FieldType::number: {
            if (!is_number(v)) {
                errors.push_back({path, "must be a number, got " + shown(v)});
                return false;
            }
            return set_path_number(s, d, v.get<double>(), errors);
        }
        case FieldType::boolean:
            if (!v.is_boolean()) {
                errors.push_back({path, "must be true or false"});
                return false;
            }
            *static_cast<bool*>(f.ptr(s)) = v.get<bool>();
            return true;
        case FieldType::choice: {
            int i = v.is_string() ? choice_index(d.choices, v.get<std::string>()) : -1;
            if (i < 0) {
                errors.push_back({path, "must be one of " + choice_list(d.choices) + ", got " + shown(v)});
                return false;
            }
            *static_cast<std::uint8_t*>(f.ptr(s)) = std::uint8_t(i);
            return true;
        }
        case FieldType::rates: return set_acceptance(*static_cast<AcceptanceSel*>(f.ptr(s)), path, v, errors);
        case FieldType::lengths: return set_token_lengths(*static_cast<std::vector<int>*>(f.ptr(s)), d, v, errors);
        case FieldType::dtype: {
            DtypeSel sel;
            if (v.is_string() && v.get<std::string>() == "auto") {
                sel.is_auto = true;
            } else if (v.is_string() && parse_dtype(v.get<std::string>(), sel.value)) {
                sel.is_auto = false;
            } else {
                errors.push_back({path, "unknown dtype " + shown(v) + " (auto, bf16, fp16, fp8, mxfp4, nvfp4, int4)"});
                return false;
            }
            *static_cast<DtypeSel*>(f.ptr(s)) = sel;
            return true;
        }
    }
    return false;
}

json value_of(const Scenario& s, const FieldImpl& f) {
    Scenario& m = const_cast<Scenario&>(s);  // ptr() only computes an address
    switch (f.desc.type) {
        case FieldType::ref:
            if (std::strcmp(f.desc.path, "model") == 0) return s.model_inline.is_null() ? json(s.model_ref) : s.model_inline;
            return s.hardware_inline.is_null() ? json(s.hardware_ref) : s.hardware_inline;
        case FieldType::integer: return *static_cast<int*>(f.ptr(m));
        case FieldType::number:
            // the older one-rate spelling reads the first position's rate, whichever way it was given
            if (std::strcmp(f.desc.path, "runtime.mtp_acceptance_rate") == 0) return s.runtime.speculative.rate(0);
            return *static_cast<double*>(f.ptr(m));
        case FieldType::rates: {
            const AcceptanceSel& a = *static_cast<AcceptanceSel*>(f.ptr(m));
            if (a.curve >= 0) return acceptance_curves(nullptr)[a.curve].name;
            json list = json::array();
            for (int k = 0; k < a.n; ++k) list.push_back(a.rates[k]);
            return list;
        }
        case FieldType::lengths: return *static_cast<std::vector<int>*>(f.ptr(m));
        case FieldType::boolean: return *static_cast<bool*>(f.ptr(m));
        case FieldType::choice: return f.desc.choices[*static_cast<std::uint8_t*>(f.ptr(m))];
        case FieldType::dtype: {
            const DtypeSel& d = *static_cast<DtypeSel*>(f.ptr(m));
            return d.is_auto ? "auto" : dtype_name(d.value);
        }
    }
    return nullptr;
}

// True when some field's path starts with `prefix` + "." (a group such as "serving.prefill").
bool is_group(const std::string& prefix) {
    // string_view, not strncmp: a key may hold a NUL byte, and strncmp would stop there and read past the path
    for (const FieldImpl& f : field_impls()) {
        const std::string_view path = f.desc.path;
        if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 && path[prefix.size()] == '.')
            return true;
    }
    return false;
}

// Sets every field of one area object, following nested groups ("serving": {"decode": {"parallel": {"ep": 8}}}).
void set_area(Scenario& s, const std::string& prefix, const json& obj, const Catalog& cat, Issues& errors) {
    for (auto f = obj.begin(); f != obj.end(); ++f) {
        const std::string path = prefix + "." + f.key();
        if (path == "workload.trace") {
            parse_trace(f.value(), s.serving.trace, errors);
        } else if (const FieldImpl* impl = find_impl(path)) {
            set_value(s, *impl, f.value(), cat, errors);
        } else if (is_group(path)) {
            if (!f.value().is_object()) errors.push_back({shown_text(path), "must be an object"});
            else set_area(s, path, f.value(), cat, errors);
        } else {
            errors.push_back({shown_text(path), "unknown key"});
        }
    }
}

constexpr std::size_t kMaxScenarioBytes = 4u << 20;
constexpr int kMaxDepth = 64;

}  // namespace

const std::vector<FieldDesc>& scenario_fields() {
    static const std::vector<FieldDesc> descs = [] {
        std::vector<FieldDesc> d;
        for (const FieldImpl& f : field_impls()) d.push_back(f.desc);
        return d;
    }();
    return descs;
}

const FieldDesc* find_field(std::string_view path) {
    for (const FieldDesc& d : scenario_fields())
        if (path == d.path) return &d;
    return nullptr;
}

json get_path(const Scenario& s, std::string_view path) {
    const FieldImpl* f = find_impl(path);
    return f ? value_of(s, *f) : json();
}

bool set_path_number(Scenario& s, const FieldDesc& d, double v, Issues& errors) {
    const FieldImpl* f = find_impl(d.path);
    if (!f || (d.type != FieldType::integer && d.type != FieldType::number)) {
        errors.push_back({d.path, "is not a numeric field"});
        return false;
    }
    if (!std::isfinite(v) || v < d.min || v > d.max) {
        errors.push_back({d.path, fmt_num(v) + " is out of range [" + fmt_num(d.min) + ", " + fmt_num(d.max) + "]"});
        return false;
    }
    if (d.type == FieldType::integer) {
        if (v != std::floor(v)) {
            errors.push_back({d.path, "must be a whole number, got " + fmt_num(v)});
            return false;
        }
        *static_cast<int*>(f->ptr(s)) = int(v);
    } else {
        *static_cast<double*>(f->ptr(s)) = v;
        // the older one-rate spelling: that rate at every draft position
        if (std::strcmp(d.path, "runtime.mtp_acceptance_rate") == 0) {
            s.runtime.speculative.acceptance.curve = -1;
            s.runtime.speculative.acceptance.n = 1;
        }
    }
    return true;
}

bool is_legacy_field(std::string_view path) {
    return path == "runtime.mtp_draft_tokens" || path == "runtime.mtp_acceptance_rate";
}

bool set_path(Scenario& s, std::string_view path, const json& value, const Catalog& cat, Issues& errors) {
    if (path == "workload.trace") {  // the list of requests (an empty list: off), not a field of the table
        TraceConfig t;
        if (!parse_trace(value, t, errors)) return false;
        s.serving.trace = std::move(t);
        return true;
    }
    const FieldImpl* f = find_impl(path);
    if (!f) {
        errors.push_back({shown_text(std::string(path)), "unknown field"});
        return false;
    }
    return set_value(s, *f, value, cat, errors);
}

ParseResult scenario_from_json(const json& j, const Catalog& cat) {
    ParseResult r;
    Scenario& s = r.scenario;
    // Defaults resolve against the catalog first.
    set_model(s, s.model_ref, cat, r.errors);
    set_hardware(s, s.hardware_ref, cat, r.errors);
    if (!j.is_object()) {
        r.errors.push_back({"", "a scenario must be a JSON object"});
        return r;
    }
    if (json_depth(j, kMaxDepth) > kMaxDepth) {
        r.errors.push_back({"", "nested deeper than 64 levels"});
        return r;
    }
    static const char* const areas[] = {"parallel", "workload", "precision", "runtime", "routing", "serving", "cost"};
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        if (key == "model" || key == "hardware") {
            set_path(s, key, it.value(), cat, r.errors);
            continue;
        }
        if (key == "description" || key == "name") continue;  // preset scenario metadata
        bool area = false;
        for (const char* a : areas) area = area || key == a;
        if (!area) {
            r.errors.push_back({shown_text(key), "unknown key"});
            continue;
        }
        if (!it.value().is_object()) {
            r.errors.push_back({key, "must be an object"});
            continue;
        }
        set_area(s, key, it.value(), cat, r.errors);
    }
    // Disaggregated serving's clients are serving.concurrency, its decode batch the limit per DP rank (DESIGN 11.3).
    // A scenario that names no concurrency fills the decode slots: workers x dp x batch clients (what it meant
    // before the two were separate, issue 26).
    if (s.serving.mode == ServingMode::disaggregated) {
        const auto sv = j.find("serving");
        if (sv == j.end() || !sv->is_object() || !sv->contains("concurrency")) {
            s.serving.concurrency = int(std::clamp(s.serving.decode_slots(), 1.0, 1e7));
        }
    }
    if (r.errors.empty()) r.errors = validate_scenario(s);
    return r;
}

ParseResult parse_scenario(std::string_view text, const Catalog& cat) {
    if (text.size() > kMaxScenarioBytes) {
        ParseResult r = scenario_from_json(json::object(), cat);
        r.errors.push_back({"", "scenario is larger than 4 MiB"});
        return r;
    }
    json j;
    JsonTextError bad;
    if (!parse_json_text(text, j, bad)) {
        ParseResult r = scenario_from_json(json::object(), cat);
        if (bad.number_out_of_range) r.errors.push_back({"", bad.message});
        else r.errors.push_back({"", "not valid JSON: " + bad.message});
        return r;
    }
    return scenario_from_json(j, cat);
}

json scenario_to_json(const Scenario& s, bool compact) {
    static const Scenario defaults;
    json out = json::object();
    for (const FieldImpl& f : field_impls()) {
        if (is_legacy_field(f.desc.path)) continue;
        json v = value_of(s, f);
        if (compact) {
            json dv = value_of(defaults, f);
            // (a disaggregated scenario without it would read its decode slots as the clients: always written)
            const bool keep = s.serving.mode == ServingMode::disaggregated && std::string_view(f.desc.path) == "serving.concurrency";
            if (v == dv && !keep) continue;
        }
        // nested by every dot: "serving.decode.parallel.ep" -> {"serving": {"decode": {"parallel": {"ep": ..}}}}
        std::string_view path = f.desc.path;
        json* node = &out;
        for (auto dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
            node = &(*node)[std::string(path.substr(0, dot))];
            path.remove_prefix(dot + 1);
        }
        (*node)[std::string(path)] = v;
    }
    if (s.serving.trace.on()) out["workload"]["trace"] = trace_to_json(s.serving.trace);
    return out;
}

namespace {
// The layout checks of one parallel configuration; `prefix_text` names it in messages ("parallel",
// "serving.decode.parallel").
void validate_layout(const Scenario& s, const ParallelConfig& p, const char* prefix_text, Issues& e) {
    const ModelSpec& m = s.model;
    // the fields' paths (and the prefix itself as a string), built only for an error (the checks pass on almost every
    // call)
    auto prefix_str = [&] { return std::string(prefix_text); };
    auto tp = [&] { return prefix_str() + ".tp"; };
    auto ep = [&] { return prefix_str() + ".ep"; };
    const long long world = 1LL * p.tp * p.dp * p.pp;
    if (world > 65536) e.push_back({prefix_str(), "tp*dp*pp = " + std::to_string(world) + " GPUs exceeds 65536"});
    if (m.num_heads % p.tp != 0)
        e.push_back({tp(), std::to_string(p.tp) + " does not divide " + std::to_string(m.num_heads) + " attention heads"});
    if (p.cp < 1 || p.tp % p.cp != 0)
        e.push_back({prefix_str() + ".cp", std::to_string(p.cp) + " does not divide tp = " + std::to_string(p.tp) +
                                         " (context parallelism splits the attention TP group)"});
    else if (m.attn != AttnKind::mla && m.num_kv_heads % p.tp != 0 && p.tp % m.num_kv_heads != 0)
        e.push_back({tp(), std::to_string(p.tp) + " neither divides nor is a multiple of " +
                             std::to_string(m.num_kv_heads) + " KV heads"});
    // Mamba-2 mixers split their heads over TP, and their B / C groups too unless there is one group to replicate
    // (vLLM's MambaMixer2 asserts both).
    if (m.n_mamba_layers > 0 && m.ssm_num_heads % p.tp != 0)
        e.push_back({tp(), std::to_string(p.tp) + " does not divide " + std::to_string(m.ssm_num_heads) + " Mamba-2 heads"});
    else if (m.n_mamba_layers > 0 && m.ssm_groups % p.tp != 0 && m.ssm_groups != 1)
        e.push_back({tp(), std::to_string(p.tp) + " does not divide the " + std::to_string(m.ssm_groups) +
                             " Mamba-2 groups (n_groups)"});
    const long long attn_gpus = 1LL * p.tp * p.dp;
    if (attn_gpus % p.ep != 0)
        e.push_back({ep(), std::to_string(p.ep) + " does not divide tp*dp = " + std::to_string(attn_gpus)});
    if (!m.is_moe()) {
        if (p.ep > 1) e.push_back({ep(), "the model has no routed experts (use tp/dp)"});
    } else {
        const int slots = m.num_experts + s.routing.redundant_experts;
        if (slots % p.ep != 0)
            e.push_back({ep(), std::to_string(p.ep) + " does not divide " + std::to_string(m.num_experts) +
                                 " routed experts + " + std::to_string(s.routing.redundant_experts) + " redundant"});
        const int moe_tp = int(attn_gpus / std::max(1, p.ep));
        // Without expert parallelism (ep 1) it is the attention DP that spreads the experts too thin: name dp.
        if (attn_gpus % p.ep == 0 && m.moe_intermediate % moe_tp != 0 && p.ep == 1 && p.dp > 1)
            e.push_back({prefix_str() + ".dp", std::to_string(p.dp) + " with ep 1 leaves experts tensor-parallel over tp*dp = " +
                                                   std::to_string(moe_tp) + " GPUs, which does not divide moe_intermediate_size " +
                                                   std::to_string(m.moe_intermediate) + " (raise ep)"});
        else if (attn_gpus % p.ep == 0 && m.moe_intermediate % moe_tp != 0)
            e.push_back({ep(), "leaves experts tensor-parallel over " + std::to_string(moe_tp) +
                                 " GPUs, which does not divide moe_intermediate_size " + std::to_string(m.moe_intermediate)});
    }
    if (p.pp > m.num_layers)
        e.push_back({prefix_str() + ".pp", std::to_string(p.pp) + " stages exceed " + std::to_string(m.num_layers) + " layers"});
}
}  // namespace

namespace {
// The topology and memory tiers against the layout and the offload settings (DESIGN §10).
void validate_hardware_use(const Scenario& s, Issues& e) {
    const GpuSpec& g = s.gpu;
    const long long world = 1LL * s.parallel.tp * s.parallel.dp * s.parallel.pp;
    if (g.topology == Topology::mesh && world > g.mesh_chips())
        e.push_back({"parallel", "tp*dp*pp = " + std::to_string(world) + " chips exceeds the " + std::to_string(g.mesh_rows) +
                                     " x " + std::to_string(g.mesh_cols) + " mesh (hardware.mesh_rows x hardware.mesh_cols)"});
    if (g.topology == Topology::unified && world > 1)
        e.push_back({"parallel", "a unified-memory chip is one device: tp*dp*pp must be 1, got " + std::to_string(world)});
    const ExpertOffloadConfig& o = s.runtime.expert_offload;
    if (o.tier == OffloadTier::none) return;
    if (!s.model.is_moe()) {
        e.push_back({"runtime.expert_offload.tier", "the model has no routed experts to offload"});
        return;
    }
    if (o.tier == OffloadTier::host && !(g.host_bandwidth_GBps > 0))
        e.push_back({"runtime.expert_offload.tier", "host needs hardware.host_bandwidth_GBps > 0"});
    if (o.tier == OffloadTier::ssd && !(g.ssd_bandwidth_GBps > 0))
        e.push_back({"runtime.expert_offload.tier", "ssd needs hardware.ssd_bandwidth_GBps > 0"});
    const int local = (s.model.num_experts + s.routing.redundant_experts) / std::max(1, s.parallel.ep);
    if (o.cached_experts_per_layer > local)
        e.push_back({"runtime.expert_offload.cached_experts_per_layer",
                     std::to_string(o.cached_experts_per_layer) + " exceeds the " + std::to_string(local) + " experts per layer on one GPU"});
}
}  // namespace


// vLLM's MLA attention backends page the cache their own way (vllm/platforms/cuda.py, check_and_update_config):
// FlashInfer MLA, first in the priority list of compute capability 10 (the datacenter Blackwell parts: B200, B300,
// GB200, GB300), forces 64-token blocks, as FlashMLA-Sparse (DSA models) does everywhere; on Hopper the first,
// FlashAttention MLA, takes the default 16, as Triton MLA, first on capability 12 (the RTX PRO 6000), does.
int Scenario::kv_block_tokens() const {
    if (runtime.kv_block_tokens > 0) return runtime.kv_block_tokens;
    const bool sm100 = gpu.arch == "blackwell" && gpu.id.rfind("rtx", 0) != 0;
    if (runtime.engine == EngineKind::vllm && model.attn == AttnKind::mla && (model.dsa() || sm100)) return 64;
    return engine_kv_block_tokens(runtime.engine);
}

Issues validate_scenario(const Scenario& s) {
    Issues e;
    const ModelSpec& m = s.model;
    if (m.num_layers <= 0 || m.hidden <= 0) {
        e.push_back({"model", "has no layers"});
        return e;
    }
    if (s.gpu.dense_tflops_bf16 <= 0 || s.gpu.hbm_bandwidth_GBps <= 0) {
        e.push_back({"hardware", "has no compute or memory bandwidth"});
        return e;
    }
    validate_layout(s, s.parallel, "parallel", e);
    if (s.runtime.mem_fraction >= 0 && s.runtime.mem_fraction < 0.05) {
        char b[160];
        std::snprintf(b, sizeof b, "%g is below 0.05 (give 0.05 to 1, or -1 for the engine's default)", s.runtime.mem_fraction);
        e.push_back({"runtime.mem_fraction", b});
    }
    if (!m.is_moe() && s.routing.redundant_experts > 0)
        e.push_back({"routing.redundant_experts", "the model has no routed experts"});
    if (s.serving.mode == ServingMode::disaggregated) {
        validate_layout(s, s.serving.prefill.parallel, "serving.prefill.parallel", e);
        validate_layout(s, s.serving.decode.parallel, "serving.decode.parallel", e);
        const double gpus = double(s.serving.prefill.workers) * s.serving.prefill.parallel.tp * s.serving.prefill.parallel.dp *
                                s.serving.prefill.parallel.pp +
                            double(s.serving.decode.workers) * s.serving.decode.parallel.tp * s.serving.decode.parallel.dp *
                                s.serving.decode.parallel.pp;
        if (gpus > 1e6) e.push_back({"serving", "the two pools need " + fmt_num(gpus) + " GPUs, more than 1,000,000"});
    }
    if (s.runtime.a2a_backend == A2ABackend::mori && !s.gpu.xgmi_mesh())
        e.push_back({"runtime.a2a_backend", "mori (AMD's MoRI-EP) runs on AMD Instinct GPUs joined by Infinity Fabric "
                                            "(hardware.arch cdna*, topology switch); " + s.gpu.name + " is not one"});
    auto kv_ok = [](const DtypeSel& d) { return d.is_auto || d.value == Dtype::bf16 || d.value == Dtype::fp16 || d.value == Dtype::fp8; };
    if (!kv_ok(s.precision.kv_cache))
        e.push_back({"precision.kv_cache", std::string(dtype_name(s.precision.kv_cache.value)) + " is not a KV-cache format (bf16, fp16, fp8)"});
    if (!kv_ok(s.precision.dispatch))
        e.push_back({"precision.dispatch", std::string(dtype_name(s.precision.dispatch.value)) + " is not a dispatch format (bf16, fp16, fp8)"});
    if (!kv_ok(s.precision.combine))
        e.push_back({"precision.combine", std::string(dtype_name(s.precision.combine.value)) + " is not a combine format (bf16, fp16, fp8)"});
    const SpeculativeConfig& sp = s.runtime.speculative;
    if (sp.draft_tokens > 0 && sp.method == SpecMethod::mtp && m.mtp_layers == 0)
        e.push_back({"runtime.speculative.draft_tokens", "method mtp needs the model's MTP layers (num_nextn_predict_layers = 0): "
                                                         "use runtime.speculative.method eagle or ngram"});
    if (sp.draft_tokens > 0 && sp.method == SpecMethod::eagle && m.intermediate <= 0)
        e.push_back({"runtime.speculative.method", "eagle prices a draft head with a dense FFN of the model's intermediate_size, "
                                                   "which this config does not give"});
    if (s.serving.trace.on() && s.serving.sessions.on())
        e.push_back({"workload.trace", "cannot be combined with workload.sessions (turns > 0): a trace's prefix ids already say "
                                       "which requests share KV; use one or the other"});
    const KvOffloadConfig& kv = s.runtime.kv_offload;
    if (kv.host_GB > 0 && !(kv.host_bandwidth_GBps > 0) && !(s.gpu.host_bandwidth_GBps > 0))
        e.push_back({"runtime.kv_offload.host_GB", "a host KV tier needs runtime.kv_offload.host_bandwidth_GBps or hardware.host_bandwidth_GBps > 0"});
    if (kv.ssd_GB > 0 && !(kv.ssd_bandwidth_GBps > 0) && !(s.gpu.ssd_bandwidth_GBps > 0))
        e.push_back({"runtime.kv_offload.ssd_GB", "an SSD KV tier needs runtime.kv_offload.ssd_bandwidth_GBps or hardware.ssd_bandwidth_GBps > 0"});
    validate_hardware_use(s, e);
    validate_workload_lengths(s, e);
    if (s.runtime.comm_sms >= s.gpu.sm_count)
        e.push_back({"runtime.comm_sms", std::to_string(s.runtime.comm_sms) + " leaves no SMs for compute (the GPU has " +
                                             std::to_string(s.gpu.sm_count) + ")"});
    return e;
}

const char* a2a_backend_name(A2ABackend b) { return kBackendChoices[int(b)]; }
const char* phase_sel_name(PhaseSel p) { return kPhaseChoices[int(p)]; }
const char* engine_kind_name(EngineKind k) { return kEngineChoices[int(k)]; }
const char* serving_mode_name(ServingMode m) { return kServingModeChoices[int(m)]; }
const char* overlap_kind_name(OverlapKind k) { return kOverlapChoices[int(k)]; }
const char* offload_tier_name(OffloadTier t) { return kOffloadTierChoices[int(t)]; }

}  // namespace moe
