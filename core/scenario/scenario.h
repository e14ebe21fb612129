// scenario.h — the whole input of the calculator (DESIGN §4.1), one plain struct per area.
//
// Room: core/scenario/ — the inputs: a model (HF config.json -> ModelSpec), a GPU (GpuSpec), the layout and the
// whole scenario JSON, its validation, the URL codec and the presets catalog. May include core/base/ only.
//
//   const moe::Catalog& cat = moe::builtin_catalog();
//   moe::ParseResult r = moe::parse_scenario(R"({"model":"qwen3-30b-a3b","hardware":"h20"})", cat);
//   if (!r.ok()) for (auto& e : r.errors) puts(e.text().c_str());        // "parallel.ep: 48 does not divide ..."
//   moe::set_path(r.scenario, "workload.batch", 128, cat, errs);          // fast: no JSON re-parse
//   nlohmann::json compact = moe::scenario_to_json(r.scenario, true);    // only fields that differ from defaults
//
// Every field is described once in `scenario_fields()` (path, type, unit, range, default, one-line help); that
// table drives JSON in and out, `--set`, validation messages and the page's controls and "(?)" help.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario/catalog.h"
#include "core/scenario/gpu_spec.h"
#include "core/scenario/model_spec.h"
#include "core/scenario/speculative.h"
#include "core/base/types.h"

namespace moe {

// mori: AMD's MoRI-EP dispatch / combine kernels over the Infinity Fabric mesh (SGLang --moe-a2a-backend mori, vLLM
// --all2all-backend mori; ROCm/mori), the step-level auto on AMD GPUs.
enum class A2ABackend : std::uint8_t { auto_, none, allgather, deepep_normal, deepep_low_latency, pplx, mori };
// per_token: no grouping, every token-expert pair loads its expert's weights itself (seed 003's baseline).
enum class ExpertLayout : std::uint8_t { auto_, contiguous, masked, per_token };
// Where the experts beyond the HBM cache live (DESIGN §10): none = every expert in HBM.
enum class OffloadTier : std::uint8_t { none, host, ssd };
enum class PhaseSel : std::uint8_t { both, prefill, decode };
// The serving engine whose system constants apply (core/engine.h): per-step overheads, scheduling, memory fraction.
enum class EngineKind : std::uint8_t { sglang, vllm, trtllm, ideal };
// DESIGN §8: off = step-level only; aggregated = one replica serving closed-loop clients with continuous batching;
// disaggregated = separate prefill and decode pools.
enum class ServingMode : std::uint8_t { off, aggregated, disaggregated };
// 4-bit weights (MXFP4 / NVFP4) on a GPU without FP4 tensor cores (Hopper, Ampere): dequant keeps them packed and
// dequantises inside the GEMM (W4A16, Marlin-style; what vLLM / SGLang / TRT-LLM do for gpt-oss on Hopper); expand
// pre-expands them to FP8 (BF16 without FP8 cores) when loading (seed 002 §6's capability matrix): memory doubles.
enum class Fp4OnHopper : std::uint8_t { dequant, expand };
// How FP8 linear weights are scaled, which picks the GEMM kernel: 128 x 128 weight blocks (DeepGEMM; DeepSeek-V3's
// and Qwen3's FP8 checkpoints) or one scale per tensor / channel (CUTLASS and cuBLASLt scaled_mm; ModelOpt FP8 and
// an engine's on-the-fly `--quantization fp8`). auto: the checkpoint's (weight_block_size), else per tensor.
enum class Fp8Scaling : std::uint8_t { auto_, block, tensor };
// How a layer's expert-parallel communication meets its compute. auto follows runtime.two_batch_overlap (the older
// field, kept working); none = serial; tbo = micro-batches, one's communication under another's compute (seed 000
// §5.3 mode 1); full = dispatch and combine fully hidden (seed 000 §5.3 mode 2, DeepEP's free decode communication).
enum class OverlapKind : std::uint8_t { auto_, none, tbo, full };
// How a rank's token-expert pairs spread over its experts, for the tile fill of the expert kernel: random = each
// token picks its experts independently (rows per expert binomial, the law the active-expert count uses); even =
// every expert the mean, split as evenly as whole rows allow (seed 004's worked examples: "E0 has 17, E1 has 17").
enum class ExpertRows : std::uint8_t { random, even };
// The routed experts' kernel (seed 001's FusedMoEPermuteExpertsUnpermute implementations): auto = the measured
// tables as they come (DeepGEMM grouped GEMMs, SGLang's Triton fused MoE, DeepEP's DeepGEMM kernels); deepgemm =
// DeepGEMM only (DeepGemmExperts / BatchedDeepGemmExperts); triton = Triton only (TritonExperts /
// BatchedTritonExperts); cutlass = CUTLASS grouped GEMM (CutlassExpertsFP8 / FP4; no public tables: analytical);
// flashinfer_cutlass = FlashInfer's CUTLASS fused MoE (FlashInferExperts; AIC's vLLM 0.24 tables, block-scaled FP8 on
// H100 / H200, standard format only: without a DeepEP / pplx all-to-all).
enum class MoeKernelSel : std::uint8_t { auto_, deepgemm, triton, cutlass, flashinfer_cutlass };
// Blackwell with FP4 tensor cores: native = FP4 weights multiplied at the FP4 rate; fp8 = stored in FP4, cast to FP8
// and multiplied at the FP8 rate (seed 002 §6: ('fp4', 'B200_current') -> 'fp4_cast_fp8', memory x1.0, speed x1.0
// of FP8, "V4 实际").
enum class Fp4Compute : std::uint8_t { native, fp8 };
// The MLA latent cache in FP8: all = every element in FP8; bf16_rope = the rope part kept in BF16 (seed 002 §3:
// bytes_per_entry = nope x 1 + rope x 2); flashmla = FlashMLA's FP8 layout, the same plus four FP32 scales, one per
// 128 latent elements (656 B per token for DeepSeek-V3.2).
enum class MlaKvLayout : std::uint8_t { all, bf16_rope, flashmla };

// Bytes per cached KV element of model m's cache in dtype `kv`: dtype_bytes(kv), or an FP8 MLA latent cache's mix
// under `layout`: the rope part in BF16 (seed 002 §3: nope x 1 + rope x 2 bytes), and with FlashMLA's FP32 scale per
// 128 latent elements (DeepSeek-V3.2: 512 + 16 + 128 = 656 B a token). One rule for the memory model, the decode
// attention's reads and the disaggregated KV transfer.
inline double mla_kv_bytes(const ModelSpec& m, Dtype kv, MlaKvLayout layout) {
    if (m.attn != AttnKind::mla || kv != Dtype::fp8 || layout == MlaKvLayout::all) return dtype_bytes(kv);
    const double lora = m.kv_lora_rank, rope = m.qk_rope_head_dim;
    const double scales = layout == MlaKvLayout::flashmla ? std::ceil(lora / 128.0) * 4.0 : 0.0;
    return lora + rope > 0 ? (lora * 1.0 + rope * 2.0 + scales) / (lora + rope) : 1.0;
}

// A dtype the user may leave to the model ("auto").
struct DtypeSel {
    bool is_auto = true;
    Dtype value = Dtype::bf16;
};

struct ParallelConfig {
    int tp = 1;             // attention tensor parallel
    int dp = 1;             // attention data parallel (DP attention)
    int ep = 1;             // expert parallel; divides tp*dp; experts are TP'd over tp*dp/ep
    int pp = 1;             // pipeline stages
    int gpus_per_node = 0;  // 0: from the hardware
    int cp = 1;             // context parallel inside the attention TP group (divides tp): prefill tokens and the
                            // KV cache split over cp, heads over tp/cp (last, so brace-initialised layouts keep 1)
};

struct WorkloadConfig {
    PhaseSel phase = PhaseSel::both;
    int batch = 64;              // concurrent decode sequences per attention-DP rank
    int prefill_tokens = 8192;   // prompt tokens one prefill forward takes in per attention-DP rank (chunk)
    int prompt_len = 4096;
    int output_len = 1024;
    int context_len = 0;         // KV length seen by a decode step; 0: prompt_len + output_len/2
    double prefix_cache_hit = 0; // share of each prompt already in the KV cache: prefill computes the rest only
    // Not a scenario field (no JSON): prefill_tokens counts the tokens the forward computes, an engine's chunk
    // budget that a prefix-cache hit fills with more prompts. The serving layer sets it (its queue supplies the
    // prompts); a step-level forward holds the prompts its prefill_tokens take in, a hit computing fewer of them.
    bool prefill_tokens_computed = false;
    // Not a scenario field either: of the parallel.dp attention ranks, how many carry the prefill forward's tokens
    // (prefill_tokens each); the others join the MoE with none, as the idle ranks of an attention-DP engine do
    // (TensorRT-LLM's dummy requests, SGLang's idle batches, vLLM's dummy runs keep every rank in the MoE's
    // collectives): a what-if of the step model, 0: all. (The serving simulation prices such forwards from the
    // surface's forward_moe, PoolSurface::lockstep_ms; tests hold the two to each other.)
    int prefill_busy_ranks = 0;
    // A step over requests of mixed lengths (seed 000 §8.1; core/step/mixed.cpp), step-level only. Empty: off.
    // prompt_lens: the prompts one prefill forward holds, each request's attention at its own length; the forward's
    // tokens are their sum (prompt_len and prefill_tokens are then not used by the prefill step).
    // context_lens: the decode batch's KV lengths (the batch is their count; batch and context_len not used).
    // prefill_bucket_lens: each prompt padded to the smallest bucket that holds it (needs prompt_lens).
    std::vector<int> prompt_lens, context_lens, prefill_bucket_lens;
    bool mixed_lengths() const { return !prompt_lens.empty() || !context_lens.empty(); }
    void clear_lengths() {  // every request of a phase back at the one length the fields above give
        prompt_lens.clear();
        context_lens.clear();
        prefill_bucket_lens.clear();
    }
};
// The longest list workload.prompt_lens / context_lens take (one estimate() per distinct length), and the most
// buckets. prompt_lens' padded sum is also held to prefill_tokens' range, kMaxForwardTokens.
constexpr int kMaxLengthsListed = 4096;
constexpr int kMaxBuckets = 64;
// The most prompt tokens one prefill forward takes in: the top of workload.prefill_tokens' range (1 to 10,000,000
// tokens, the field table in scenario.cpp), a bound on the input that keeps counts exact in an int, not a GPU limit.
constexpr double kMaxForwardTokens = 1e7;

struct PrecisionConfig {
    DtypeSel weights, attention, experts, shared_experts, embedding;  // parts default to `weights`
    DtypeSel kv_cache;           // auto: the model's torch_dtype (bf16)
    DtypeSel dispatch;           // auto: fp8 when experts compute in fp8 or lower, else bf16
    DtypeSel combine;            // auto: bf16
    Fp4OnHopper fp4_on_hopper = Fp4OnHopper::dequant;  // 4-bit weights on GPUs without FP4 tensor cores
    Fp8Scaling fp8_scaling = Fp8Scaling::auto_;        // FP8 weights' scaling, and so their GEMM kernel
    Fp4Compute fp4_compute = Fp4Compute::native;       // 4-bit weights on GPUs with FP4 tensor cores
    MlaKvLayout mla_kv = MlaKvLayout::all;             // an FP8 MLA latent cache's rope part and scales
};

// DESIGN §10, seed 003: experts beyond `cached_experts_per_layer` (per layer, per GPU) live in the slower tier and
// are streamed into HBM when a token selects them. The cache holds the hottest experts; `skew` is the Zipf exponent
// of expert popularity (0: every expert equally likely).
struct ExpertOffloadConfig {
    OffloadTier tier = OffloadTier::none;
    int cached_experts_per_layer = 0;
    bool prefetch = false;   // stream the next layer's experts during this layer's compute
    double skew = 0.0;
    // Batches over which the cache counts selections to pick its members (the C largest counts; seed 003: 128).
    // 0: the cache knows the true popularity ranking and holds the C hottest (an oracle).
    int window_batches = 0;
};

// The KV cache's tiers below HBM (issue 29, DESIGN §11.4 runtime.kv_offload): an idle session's KV cache, evicted from
// HBM by LRU, moves to host memory, then to SSD, and is read back when the session's next turn comes (SGLang HiCache,
// vLLM's KV offloading connector, LMCache). Capacities per GPU; 0 = no such tier.
struct KvOffloadConfig {
    double host_GB = 0;
    double ssd_GB = 0;
    double host_bandwidth_GBps = 0;  // 0: hardware.host_bandwidth_GBps
    double ssd_bandwidth_GBps = 0;   // 0: hardware.ssd_bandwidth_GBps
};

// Each engine's documented memory defaults, used where the scenario leaves runtime.mem_fraction / kv_block_tokens
// unset (docs/serving.md, "Serving"): SGLang's --page-size 1 and a mem_fraction_static of about 0.88 on 80-192 GB GPUs
// (server_args.py picks it from the GPU's memory and the TP size), vLLM's 16-token blocks and gpu_memory_utilization
// 0.9, TensorRT-LLM's 32 tokens per block and free_gpu_memory_fraction 0.9 (of what the weights leave: taken here as
// a share of HBM like the others'); the ideal engine pages by the token.
inline double engine_mem_fraction(EngineKind e) { return e == EngineKind::sglang ? 0.88 : 0.9; }
inline int engine_kv_block_tokens(EngineKind e) {
    return e == EngineKind::vllm ? 16 : e == EngineKind::trtllm ? 32 : 1;
}

struct RuntimeConfig {
    A2ABackend a2a_backend = A2ABackend::auto_;
    bool two_batch_overlap = false;    // kept for old scenarios and links: overlap auto + this = tbo
    OverlapKind overlap = OverlapKind::auto_;
    int micro_batches = 0;             // micro-batches per step; 0: 2 with tbo, else 1
    bool shared_expert_overlap = false;  // shared experts run while the dispatch is in flight (seed 001)
    int comm_sms = 24;                 // SMs given to DeepEP normal-mode kernels while computing
    ExpertLayout expert_layout = ExpertLayout::auto_;
    SpeculativeConfig speculative;     // draft method, drafts per step, acceptance per position (speculative.h);
                                       // runtime.mtp_draft_tokens / mtp_acceptance_rate are its older spelling
    double prefill_overhead_ms = -1;   // per prefill forward (scheduler, launches); <0: calibrated default
    double decode_overhead_ms = -1;    // per decode step; <0: calibrated default
    double mem_fraction = -1;          // static memory fraction of HBM (SGLang mem_fraction_static); <0: the engine's
    double reserve_GB = -1;            // CUDA context, graphs, allocator slack; <0: calibrated default
    int kv_block_tokens = 0;           // paged-KV block size (rounding of each request's KV); 0: the engine's
    EngineKind engine = EngineKind::sglang;  // system constants of the serving engine (core/engine.h)
    ExpertOffloadConfig expert_offload;
    MoeKernelSel moe_kernel = MoeKernelSel::auto_;  // the routed experts' kernel (seed 001)
    int moe_chunk_tokens = -1;  // tokens per fused-MoE chunk (seed 001: supports_chunking); -1: the engine's, 0: none
    KvOffloadConfig kv_offload;
    // The memory fraction and paged-KV block in effect: the scenario's, else the engine's default
    // (engine_mem_fraction, engine_kv_block_tokens); memory_fraction(e): the same for engine e (a launch command
    // for another engine than the scenario's).
    double memory_fraction(EngineKind e) const { return mem_fraction >= 0 ? mem_fraction : engine_mem_fraction(e); }
    double memory_fraction() const { return memory_fraction(engine); }
};

// Multi-turn sessions (issue 29, DESIGN §11.4 workload.sessions; stored with the serving fields, whose mean prompt it
// sets): every client runs sessions of `turns` requests; turn t's prompt is the shared system prompt, the session's
// history (its earlier user turns and answers) and `user_len` new tokens; its answer is serving.osl tokens. After an
// answer the client waits `think_time_s` (the user reading, an agent's tool call) before the next turn.
struct SessionsConfig {
    int turns = 0;               // 0: off (every request an independent prompt of serving.isl)
    int system_prompt_len = 0;   // tokens shared by every session (cached once)
    int user_len = 256;          // new tokens per turn
    double think_time_s = 0;
    bool on() const { return turns > 0; }
};

// A trace of requests (issue 29, DESIGN §11.4 workload.trace; core/scenario/trace.cpp): the closed-loop clients replay
// it in order, each taking the next request when its previous one is done. A request may name a prefix id: requests
// with the same id share their first prefix_len prompt tokens (prefix_len 0: the KV the id's previous request left,
// as a conversation's history). The data is shared between copies of a Scenario (a sweep copies it per point).
struct TraceRequest {
    int isl = 1, osl = 1;  // prompt and output tokens
    int prefix = -1;       // index into TraceData::ids; -1: no prefix id
    int prefix_len = 0;    // tokens shared by the id's requests; 0: not given
};
struct TraceData {
    std::vector<TraceRequest> reqs;
    std::vector<nlohmann::json> ids;  // the prefix ids as written (strings or integers), by index
    double mean_isl = 0, mean_osl = 0;
    // The mean prompt tokens a prefix cache without a size limit finds (the closed form's optimistic screen): a
    // prefix_len id's later requests its prefix_len, a conversation's its previous request's prompt and (aggregated:
    // the answer's KV is on the same GPUs) answer; at most isl - 1 each.
    double mean_found_aggregated = 0, mean_found_disaggregated = 0;
};
struct TraceConfig {
    std::shared_ptr<const TraceData> data;  // null or empty: off
    bool on() const { return data && !data->reqs.empty(); }
    std::size_t size() const { return data ? data->reqs.size() : 0; }
};
constexpr std::size_t kMaxTraceRequests = 1000000;

// One pool of a disaggregated deployment: each worker's layout, how many workers, requests per attention-DP rank.
struct PoolConfig {
    ParallelConfig parallel;
    int workers = 1;
    int batch = 1;          // prefill: prompts per forward per DP rank; decode: requests in flight per DP rank
};

// What the GPUs cost (issue 28): the price of one GPU-hour, for the $ per million tokens outputs.
struct CostConfig {
    double gpu_hour_usd = 0;  // 0: the GPU preset's example price (GpuSpec::gpu_hour_usd), if it has one
};

// DESIGN §8.1: the serving workload over the step model.
struct ServingConfig {
    ServingMode mode = ServingMode::off;
    int isl = 1024;                 // input tokens per request
    int osl = 1024;                 // output tokens per request
    int concurrency = 64;           // closed-loop clients: aggregated per replica, disaggregated for the deployment
    int requests_per_client = 10;   // benchmark length: each client sends this many requests (the first together)
    double length_spread = 0;       // each request's isl and osl drawn uniformly from [(1 - spread) x, x] (0: fixed)
    int stream_interval = 1;        // tokens the engine streams to a client at a time (--stream-interval)
    int scheduler_recv_interval = 1;  // SGLang: forwards between the scheduler's polls for new requests
                                      // (--scheduler-recv-interval); recv_wait_steps() is the mean wait it adds
    PoolConfig prefill{{1, 1, 1, 1, 0}, 1, 1};
    // Decode steps a new request waits for SGLang's scheduler to take it in, beyond the step boundary: with
    // --scheduler-recv-interval N the scheduler's SchedulerRecvSkipper (python/sglang/srt/managers/
    // scheduler_recv_skipper.py) counts decode forwards (weight 1) and receives new requests when the count reaches N
    // (after a prefill forward or an idle loop at once), so a request arriving while the batch decodes waits
    // (N - 1) / 2 more forwards on average. 0 for vLLM and TensorRT-LLM, which take new requests at every step.
    double recv_wait_steps(EngineKind engine) const {
        return engine == EngineKind::sglang ? 0.5 * double(scheduler_recv_interval - 1) : 0.0;
    }
    PoolConfig decode{{1, 1, 1, 1, 0}, 1, 64};
    SessionsConfig sessions;        // JSON: workload.sessions
    TraceConfig trace;              // JSON: workload.trace
    // The mean request lengths the benchmark sends (length_spread draws them below the nominal isl and osl). With
    // sessions, the mean turn's prompt: system prompt + user_len x (turns + 1) / 2 + osl x (turns - 1) / 2. With a
    // trace, its means (length_spread does not apply).
    double mean_isl() const {
        if (trace.on()) return trace.data->mean_isl;
        if (!sessions.on()) return isl * (1.0 - 0.5 * length_spread);
        return sessions.system_prompt_len + sessions.user_len * (1.0 - 0.5 * length_spread) * (sessions.turns + 1) / 2.0 +
               mean_osl() * (sessions.turns - 1) / 2.0;
    }
    double mean_osl() const { return trace.on() ? trace.data->mean_osl : osl * (1.0 - 0.5 * length_spread); }
    // Sessions or a trace: the mean prompt tokens a prefix cache without a size limit finds (every turn its system
    // prompt and history; a trace's TraceData::mean_found_*). The closed form computes the rest (an optimistic screen:
    // the simulation, with the tiers' real room, re-ranks the planner's front). 0 without sessions or a trace.
    double mean_found_unbounded(bool aggregated) const {
        if (trace.on()) return aggregated ? trace.data->mean_found_aggregated : trace.data->mean_found_disaggregated;
        if (!sessions.on()) return 0;
        const double turn = sessions.user_len * (1.0 - 0.5 * length_spread) + (aggregated ? mean_osl() : 0.0);
        return sessions.system_prompt_len + turn * (sessions.turns - 1) / 2.0;
    }
    // Disaggregated: the requests the decode pool runs at once, workers x DP ranks x batch (the clients beyond them wait)
    double decode_slots() const { return double(decode.workers) * std::max(1, decode.parallel.dp) * decode.batch; }
};

struct RoutingConfig {
    double imbalance = 1.0;        // hottest EP rank's tokens / mean (>= 1)
    int redundant_experts = 0;     // extra replicas of hot experts spread across EP ranks (EPLB)
    ExpertRows expert_rows = ExpertRows::random;  // rows per expert: binomial or evenly split
};

// Tokens of a prompt of `prompt_len` found in the prefix cache at hit share `hit`: whole tokens, leaving at least
// the last one to compute (its logits start decoding). The step model and the serving layer both use it.
inline double prefix_cached_tokens(double prompt_len, double hit) {
    return std::max(0.0, std::min(std::floor(hit * prompt_len), prompt_len - 1.0));
}

struct Scenario {
    std::string model_ref = "qwen3-30b-a3b";  // preset id; "inline" when model_inline holds a config
    nlohmann::json model_inline;              // an HF config.json object (null when a preset)
    ModelSpec model;
    std::string hardware_ref = "h200";
    nlohmann::json hardware_inline;           // {"base": id, field overrides...} (null when a preset)
    GpuSpec gpu;
    ParallelConfig parallel;
    WorkloadConfig workload;
    PrecisionConfig precision;
    RuntimeConfig runtime;
    RoutingConfig routing;
    ServingConfig serving;
    CostConfig cost;

    int world() const { return parallel.tp * parallel.dp * parallel.pp; }
    // The paged-KV block in effect: runtime.kv_block_tokens, else the engine's for this model and GPU
    // (engine_kv_block_tokens; vLLM's MLA backends force their own, scenario.cpp)
    int kv_block_tokens() const;
    int moe_tp() const { return parallel.ep > 0 ? parallel.tp * parallel.dp / parallel.ep : 1; }
    int gpus_per_node() const { return parallel.gpus_per_node > 0 ? parallel.gpus_per_node : gpu.gpus_per_node; }
    // The overlap policy with `auto` resolved from the older runtime.two_batch_overlap.
    OverlapKind overlap() const {
        if (runtime.overlap != OverlapKind::auto_) return runtime.overlap;
        return runtime.two_batch_overlap ? OverlapKind::tbo : OverlapKind::none;
    }
    int micro_batches() const {
        return runtime.micro_batches > 0 ? runtime.micro_batches : (overlap() == OverlapKind::tbo ? 2 : 1);
    }
    // Tokens per chunk of the standard-format fused MoE: vLLM's modular kernel splits a forward's tokens into chunks
    // of VLLM_FUSED_MOE_CHUNK_SIZE (vllm/envs.py: default 32768) when the experts' kernel supports chunking (seed 001);
    // SGLang's and TensorRT-LLM's MoE runners are taken as one chunk. 0: no chunking.
    int moe_chunk() const {
        if (runtime.moe_chunk_tokens >= 0) return runtime.moe_chunk_tokens;
        return runtime.engine == EngineKind::vllm ? 32768 : 0;
    }
    int context_len() const {
        return workload.context_len > 0 ? workload.context_len : workload.prompt_len + workload.output_len / 2;
    }
    // Tokens of each prompt served from the prefix cache: prefix_cache_hit of the prompt, whole tokens, leaving at
    // least the last token to compute (its logits start decoding).
    double prefill_cached_tokens() const { return prefix_cached_tokens(workload.prompt_len, workload.prefix_cache_hit); }
    double prefill_computed_tokens() const { return workload.prompt_len - prefill_cached_tokens(); }
};

// ---- the field table --------------------------------------------------------------------------------------
// rates: a list of numbers in [0, 1] or the name of a published curve (runtime.speculative.acceptance).
// lengths: a list of whole token counts in [min, max] (workload.prompt_lens; an empty list is off).
enum class FieldType : std::uint8_t { integer, number, boolean, choice, dtype, ref, rates, lengths };

struct FieldDesc {
    const char* path;        // "workload.batch"
    FieldType type;
    const char* unit;        // "tokens", "ms", "" ...
    double min, max;         // inclusive range for integer/number
    const char* const* choices;  // null-terminated, for choice fields
    const char* help;        // one sentence
};
const std::vector<FieldDesc>& scenario_fields();
// An older spelling kept for old scenarios and links (runtime.mtp_draft_tokens -> runtime.speculative.draft_tokens):
// read, never written by scenario_to_json.
bool is_legacy_field(std::string_view path);
const FieldDesc* find_field(std::string_view path);

// Value of a field as JSON (numbers, bools, strings; refs give the preset id or the inline object).
nlohmann::json get_path(const Scenario& s, std::string_view path);

// ---- parsing / printing -----------------------------------------------------------------------------------
struct ParseResult {
    Scenario scenario;
    Issues errors;
    bool ok() const { return errors.empty(); }
};

// From JSON text (size and depth limited) or an already-parsed object. Unknown keys are errors with their path.
ParseResult parse_scenario(std::string_view json_text, const Catalog& catalog);
ParseResult scenario_from_json(const nlohmann::json& j, const Catalog& catalog);
// Full (every field) or compact (only fields differing from the defaults).
nlohmann::json scenario_to_json(const Scenario& s, bool compact);

// Sets one field by dot path. "model"/"hardware" take a preset id or an object, "workload.trace" the list of requests
// (parse_trace; an empty list turns it off). Returns false and appends an
// issue naming the path on a bad path, type or range. Cross-field checks are left to validate_scenario().
bool set_path(Scenario& s, std::string_view path, const nlohmann::json& value, const Catalog& catalog, Issues& errors);
// Fast variant for numeric sweeps: no JSON. Returns false (with an issue) if the field is not numeric.
bool set_path_number(Scenario& s, const FieldDesc& field, double value, Issues& errors);

// workload.trace (trace.cpp): a list of {isl, osl, prefix_id, prefix_len} objects into t (an empty list: off).
// Errors name the entry: workload.trace[12].isl. trace_to_json writes it back in the same form.
bool parse_trace(const nlohmann::json& v, TraceConfig& t, Issues& errors);
nlohmann::json trace_to_json(const TraceConfig& t);
// The text of a trace file as that list: JSONL (one object a line) or, with `csv`, CSV lines isl,osl,prefix_id,
// prefix_len (a header row naming them, in any order, or these four in order; empty cells are absent). Blank lines
// and lines starting with '#' are skipped. False with `error` "<where> line 3: isl: must be ..." on a bad line, or
// "<where>: holds no requests".
bool trace_text_to_json(std::string_view text, bool csv, const std::string& where, nlohmann::json& out, std::string& error);

// Cross-field validation (ep divides tp*dp and the experts, tp divides heads, ...). Empty = valid.
Issues validate_scenario(const Scenario& s);

// workload.prompt_lens / context_lens / prefill_bucket_lens (workload_lengths.cpp): a list of whole token counts
// into `out`, errors naming the entry ("workload.prompt_lens[2]: 0 is not a positive token count"); buckets must
// ascend. validate_workload_lengths: the cross-field checks (buckets need prompts and hold every prompt, the
// padded prompts fit one forward, step-level only).
bool set_token_lengths(std::vector<int>& out, const FieldDesc& field, const nlohmann::json& v, Issues& errors);
void validate_workload_lengths(const Scenario& s, Issues& errors);

// The prompts of one prefill forward after bucketing (seed 000 §8.1), for validate_workload_lengths and the step
// layer's prefill_step_mixed (core/step/mixed.cpp), each of which words its own errors: in order, each prompt is
// checked to lie in [1, max_prompt_tokens], rounded up to whole tokens and padded to the smallest of `buckets` (any
// order; none: itself) that holds it; the first prompt that fails stops it. Then the padded sum is held to
// kMaxForwardTokens.
struct BucketedPrompts {
    enum class Fault : std::uint8_t { none, bad_length, no_bucket, over_one_forward };
    Fault fault = Fault::none;
    std::size_t at = 0;          // bad_length, no_bucket: the prompt's index
    std::vector<double> tokens;  // none, over_one_forward: each prompt's tokens after padding
    double total_tokens = 0;     // none, over_one_forward: their sum
    double largest_bucket = 0;   // 0 without buckets
};
BucketedPrompts bucket_prompts(const std::vector<double>& prompt_lens, std::vector<double> buckets, double max_prompt_tokens);

// The list of request lengths that replaces the scenario field `path` in this workload ("workload.prompt_lens" for
// workload.prompt_len and prefill_tokens, "workload.context_lens" for workload.batch and context_len), or nullptr:
// a sweep over that field would change nothing (native/sweep.cpp refuses the axis, web/sweep.cpp gives no points).
// workload.prefill_bucket_lens replaces no field (it pads prompt_lens, which it needs).
const char* length_list_replacing(const WorkloadConfig& w, std::string_view path);

const char* a2a_backend_name(A2ABackend b);
const char* phase_sel_name(PhaseSel p);
const char* engine_kind_name(EngineKind k);
const char* serving_mode_name(ServingMode m);
const char* overlap_kind_name(OverlapKind k);
const char* offload_tier_name(OffloadTier t);

}  // namespace moe
