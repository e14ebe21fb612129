// estimate.h — the model: Scenario -> layer plan -> operator records -> times -> Estimate (DESIGN §3, §5).
//
// Room: core/step/ — one forward step: the operators of a layer (ops_*), their time (op_time), communication
// (comm, topology), offload, memory, the overlap policies and the step (step.cpp), the Estimate and its output
// columns. May include core/base/, core/scenario/ and core/data/.
//
//   moe::Estimate e = moe::estimate(scenario, moe::builtin_tables());
//   if (!e.ok) ...e.errors...;  e.decode.tpot_ms, e.memory.max_batch, e.ops[i].time_us
//
// Pure, deterministic, exception-free, a few microseconds. User errors come back in `errors`, never as a crash.
// Every number in an Estimate is finite.
#pragma once
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario/scenario.h"
#include "core/data/tables.h"
#include "core/base/types.h"

namespace moe {

enum class Engine : std::uint8_t { tensor, hbm, nvlink, rdma, host, mesh };
const char* engine_name(Engine e);

// One operator of one layer group, per occurrence (multiply time by `count` for its share of the step).
struct OpRecord {
    const char* name = "";        // "attn.q_b_proj", "moe.routed_experts", "comm.dispatch", ...
    Phase phase = Phase::decode;
    int group = 0;                // index into PhaseResult::groups
    double count = 0;             // occurrences per step (layers in the group, or 1)
    double flops = 0;
    double weight_bytes = 0;      // HBM reads of weights
    double activation_bytes = 0;  // HBM reads/writes of activations and KV cache
    double comm_bytes = 0;        // bytes sent per GPU (offload: streamed in from the host tier)
    double hops = 0;              // mesh: link-hops per token of the message (0 elsewhere: one switch hop)
    Engine engine = Engine::tensor;
    Dtype compute_dtype = Dtype::bf16;  // the format the tensor cores ran in (its roof on a roofline chart)
    Bound bound = Bound::compute;
    double efficiency = 0;        // fraction of the roofline achieved (from tables or the fallback)
    Source source = Source::analytical;
    const char* table = "";       // bench_data file of the efficiency, if any
    double time_us = 0;           // per occurrence, before overlap
    double exposed_us = 0;        // per occurrence, after overlap (what adds to the step)
};

// A layer group's label, its text kept inline (at most 63 characters; the step model's labels are at most ~60): an
// estimate allocates nothing per label. Reads as a std::string_view.
class GroupLabel {
public:
    GroupLabel() { text_[0] = 0; }
    GroupLabel(std::string_view s) { assign(s); }  // NOLINT: implicit, like the std::string it replaced
    GroupLabel(const char* s) { assign(s); }        // NOLINT
    GroupLabel& operator=(std::string_view s) { assign(s); return *this; }
    GroupLabel& operator=(const char* s) { assign(s); return *this; }
    void assign(std::string_view s) {
        size_ = static_cast<unsigned char>(s.size() < kCapacity ? s.size() : kCapacity);
        std::memcpy(text_, s.data(), size_);
        text_[size_] = 0;
    }
    const char* c_str() const { return text_; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::string_view view() const { return {text_, size_}; }
    operator std::string_view() const { return view(); }  // NOLINT
    std::string str() const { return std::string(text_, size_); }
    bool starts_with(std::string_view p) const { return view().substr(0, p.size()) == p; }
    friend bool operator==(const GroupLabel& a, std::string_view b) { return a.view() == b; }
    friend bool operator!=(const GroupLabel& a, std::string_view b) { return a.view() != b; }
    static constexpr std::size_t kCapacity = 63;

private:
    char text_[kCapacity + 1];
    unsigned char size_ = 0;
};

struct LayerGroup {
    GroupLabel label;             // "MoE layers", "dense layers", "MoE layers (window 128)", "embedding + LM head"...
    int count = 0;
    double time_us = 0;           // per layer, after overlap
};

struct PhaseResult {
    bool computed = false;
    double step_ms = 0;               // one forward (prefill chunk / decode step)
    double ttft_ms = 0;               // prefill only
    double tpot_ms = 0;               // decode only
    double tokens_per_s_per_gpu = 0;
    double tokens_per_s_per_user = 0; // decode only
    double tokens_per_step = 0;       // per attention-DP rank
    double compute_ms = 0;            // sum of compute operator times (after SM sharing)
    double comm_ms = 0;               // sum of communication times
    double exposed_comm_ms = 0;       // communication not hidden by overlap
    double overhead_ms = 0;
    double pp_bubble_ms = 0;
    double offload_ms = 0;            // expert streaming from the host tier not hidden by prefetch
    double offload_bytes = 0;         // expert bytes streamed per step, per GPU
    double tokens_per_s_cluster = 0;
    double usd_per_mtok = 0;          // USD per million of this phase's tokens at Estimate::gpu_hour_usd (0: no price)
    // Power (issue 28; core/step/power.h): what the step keeps busy, as time-averaged fractions of each engine's
    // peak, and the board power that follows (0 when the GPU has no board_power_w)
    double tensor_utilisation = 0;    // FLOPs / (peak of their format x step time)
    double hbm_utilisation = 0;       // HBM bytes / (HBM bandwidth x step time)
    double link_utilisation = 0;      // NVLink / mesh / host-link bytes / (that link's bandwidth x step time)
    double power_w_per_gpu = 0;       // average board power of one GPU over the step, W
    double joules_per_token = 0;      // power_w_per_gpu / tokens_per_s_per_gpu
    // Provenance: share of the step's operator time by efficiency source.
    double share_measured = 0, share_interpolated = 0, share_transferred = 0, share_analytical = 0;
    std::vector<LayerGroup> groups;
};

struct MemoryResult {
    double weights_bytes = 0, kv_cache_bytes = 0, activation_bytes = 0, workspace_bytes = 0;
    double comm_buffer_bytes = 0, reserved_bytes = 0, total_bytes = 0, capacity_bytes = 0;
    double offloaded_experts_bytes = 0;  // expert weights kept in the host tier / on SSD (not in HBM)
    double offload_hit_rate = 1;      // share of token-expert selections served by the HBM cache (decode)
    double usable_bytes = 0;          // capacity * mem_fraction
    bool fits = false;
    double shortfall_bytes = 0;       // how much is missing when it does not fit
    double kv_bytes_per_token = 0;    // per GPU, all layers
    // Of kv_cache_bytes: the fixed recurrent state of the Gated DeltaNet layers (per request, whatever the context)
    double linear_state_bytes = 0;
    double linear_state_bytes_per_request = 0;
    double max_batch = 0;             // largest decode batch per attention-DP rank that fits at the context
    double max_context = 0;           // largest context that fits at the scenario's batch
    // weights by part
    double weights_attention_bytes = 0, weights_experts_bytes = 0, weights_shared_bytes = 0;
    double weights_dense_ffn_bytes = 0, weights_embedding_bytes = 0, weights_other_bytes = 0, weights_mtp_bytes = 0;
    double activation_prefill_bytes = 0, activation_decode_bytes = 0, logits_bytes = 0;
    // cluster totals (seed 002 §8)
    double cluster_weights_bytes = 0, cluster_kv_cache_bytes = 0, cluster_max_batch = 0;
};

// DESIGN §8.2: the serving layer's results (core/serving.h computes them; computed = false when serving is off).
struct ServingResult {
    bool computed = false;
    double ttft_ms = 0, tpot_ms = 0, e2e_latency_ms = 0;
    double output_tokens_per_s_per_gpu = 0, tokens_per_s_per_user = 0, requests_per_s = 0;
    // USD per million output tokens, and per million tokens served (prompt + output), at Estimate::gpu_hour_usd
    double usd_per_mtok_output = 0, usd_per_mtok_total = 0;
    // Average board power per GPU under load and the energy per output token / per token served (0: no board power)
    double power_w_per_gpu = 0, joules_per_token = 0, joules_per_token_total = 0;
    // The band (issue 28): the 10th and 90th percentiles around the means above from the engine's held-out residuals
    // (EngineConstants::*_log_error_p10/_p90); p10 <= mean <= p90. has_band false: the engine carries none (0 here).
    bool has_band = false;
    double ttft_ms_p10 = 0, ttft_ms_p90 = 0, tpot_ms_p10 = 0, tpot_ms_p90 = 0;
    double output_tokens_per_s_per_gpu_p10 = 0, output_tokens_per_s_per_gpu_p90 = 0;
    double gpus = 0;
    bool fits = false;
    // the parts, for display and tests
    double ttft_prefill_ms = 0;     // the request's own prefill (steady state)
    double ttft_queue_ms = 0;       // waiting for prefill capacity (steady state) and for a free slot
    double ttft_first_wave_ms = 0;  // the first requests' wait behind each other, averaged over the run
    double ttft_overhead_ms = 0;    // the engine's per-request overhead
    double kv_transfer_ms = 0;      // disaggregated; with KV tiers: waiting for a session's KV read back from host / SSD
    // Multi-turn sessions (workload.sessions): shares of the prompt tokens found in HBM, host memory and SSD, and the
    // KV bytes moved between HBM and those tiers (reloads and demotions, all GPUs) per output token
    double prefix_hit_rate_gpu = 0, prefix_hit_rate_host = 0, prefix_hit_rate_ssd = 0, kv_bytes_moved_per_token = 0;
    double tpot_decode_ms = 0;      // the decode step itself
    double tpot_prefill_ms = 0;     // prefill work interleaved with decoding, per output token
    double tpot_preempt_ms = 0;     // preempted and waiting for KV room (engines that do not reserve the output's KV)
    double running_batch = 0;       // requests decoding per DP rank
    double peak_running_batch = 0;  // the most requests decoding at once on a DP rank (simulation; 0 from the closed form)
    double prefill_utilisation = 0; // share of time (or of the prefill pool) spent on prefill
    const char* bound = "";         // "decode", "prefill", "memory"
    bool prefill_fits = true;       // disaggregated: a prefill worker holds its forward (else a warning)
};

struct Estimate {
    bool ok = false;
    Issues errors;
    std::vector<std::string> warnings;
    PhaseResult prefill, decode;
    MemoryResult memory;
    ServingResult serving;
    double total_params = 0, active_params = 0;
    double gpu_hour_usd = 0;  // the price the $ outputs use: cost.gpu_hour_usd, else the GPU preset's example (0: none)
    double board_power_w = 0;  // the GPU's board power (0: none given: the power and energy outputs stay empty)
    std::vector<OpRecord> ops;
    // resolved choices, for display
    A2ABackend prefill_backend = A2ABackend::none, decode_backend = A2ABackend::none;
    Dtype weights_dtype = Dtype::bf16, experts_dtype = Dtype::bf16, kv_dtype = Dtype::bf16;
};

Estimate estimate(const Scenario& s, const Tables& tables);

// Seed 000 §8.1: one step over requests of mixed lengths (core/step/mixed.cpp). estimate() prices a step at one
// length (the scenario's prompt_len / context); here each request's attention (attn.core, attn.indexer) follows its
// own length: the step at the mean length, its attention replaced by the sum over the requests of the attention of
// a step of as many requests all at that request's length, divided by their number (the kernel keeps the real
// step's parallelism). Causal prefill attention is quadratic in the prompt, so a mixed batch costs more than its
// mean; decode attention is linear in the context (without windows) and costs the same. The rest of the step
// follows the tokens alone. The difference is added to the step as it is: exact without micro-batch overlap.
// A scenario reaches it through estimate() with workload.prompt_lens / context_lens / prefill_bucket_lens: its
// prefill (decode) phase is then the step here, its attention records scaled to the requests' own lengths.
struct MixedStep {
    bool ok = false;
    Issues errors;
    double step_ms = 0;               // the step with each request's own attention
    double step_ms_at_mean = 0;       // the same requests at their mean length (what estimate() prices)
    double attention_ms = 0;          // attention over each request's own length
    double attention_ms_at_mean = 0;
    double attention_flops = 0, attention_flops_at_mean = 0;  // the same records' work, per GPU
    double attention_bytes = 0, attention_bytes_at_mean = 0;  // and their HBM bytes (KV cache, activations)
    double tokens = 0;                // tokens the step computes (prefill: after bucket padding)
};
// A prefill forward of prompts of `prompt_lens` tokens; with `bucket_lens`, each prompt is first padded up to the
// smallest bucket that holds it (engines that run one compiled graph per bucket length), the padding computed in
// every operator.
MixedStep prefill_step_mixed(const Scenario& s, const Tables& tables, const std::vector<double>& prompt_lens,
                             const std::vector<double>& bucket_lens = {});
// KV fragmentation over a length distribution (seed 002 §10: "PagedAttention 利用率取决于 seq_len 分布"): a request
// of L tokens holds ceil(L / block) whole blocks, wasting ceil(L / block) x block - L token slots. For lengths spread
// uniformly over the whole numbers lo..hi, the expected waste per request in tokens (exact: every run of `block`
// consecutive lengths wastes 0 .. block - 1 once each) and the share of the blocks' slots holding tokens.
struct KvFragmentation {
    double waste_tokens = 0;   // expected empty slots of a request's last block
    double utilisation = 1;    // mean tokens / mean slots held
};
KvFragmentation kv_fragmentation(double lo, double hi, double block_tokens);
// A decode step of sequences at KV lengths `contexts`.
MixedStep decode_step_mixed(const Scenario& s, const Tables& tables, const std::vector<double>& contexts);
// Whether runtime.a2a_backend auto means DeepEP (at ep > 1) for this scenario: for a step-level scenario or the
// ideal engine (the wide-EP deployments of the seeds); under a serving engine it means that engine's own default,
// all-gather (none of SGLang, vLLM and TensorRT-LLM turns DeepEP on by itself). resolve_a2a_backend, the planner's engine
// limits and its launch commands all ask this one function.
inline bool auto_a2a_is_deepep(const Scenario& s) {
    return s.serving.mode == ServingMode::off || s.runtime.engine == EngineKind::ideal;
}
// How tokens reach the experts in phase `ph`: runtime.a2a_backend, auto resolved (none for a dense model).
A2ABackend resolve_a2a_backend(const Scenario& s, Phase ph);
// USD per million tokens of a GPU that costs `gpu_hour_usd` an hour and makes `tokens_per_s` tokens a second.
inline double usd_per_mtok(double gpu_hour_usd, double tokens_per_s) { return gpu_hour_usd / 3600.0 / tokens_per_s * 1e6; }
// estimate() into `out`, which is reset first: the same Estimate as estimate() returns, but `out`'s vectors keep their
// capacity (a sweep reuses one Estimate per thread: no allocation per point). With warnings = false no warning text
// is built (out.warnings stays empty), for callers that never show warnings (the sweep's CSV has no such column).
void estimate_into(const Scenario& s, const Tables& tables, Estimate& out, bool warnings = true);

// Overlap policies, exposed for tests. Seed 000 §5.3 (used for prefill): two micro-batches, the first dispatch and
// the last combine exposed. Decode TBO: four slots per layer, each micro-batch's communication under the other's
// compute stage (pre = attention side, post = experts side).
double two_batch_overlap_seed(double mb_compute, double mb_dispatch, double mb_combine);
double two_batch_overlap_slots(double c_pre, double c_post, double dispatch, double combine);
// Seed 000 §5.3 mode 1 for any number n >= 1 of micro-batches (runtime.micro_batches): dispatch, compute, combine of
// each micro-batch, one communication stream issuing D1, D2, M1, D3, M2, ..., Dn, M(n-1), Mn and one compute stream.
// n = 2 is two_batch_overlap_seed; many micro-batches approach n * max(compute, dispatch + combine).
double micro_batch_pipeline(double mb_compute, double mb_dispatch, double mb_combine, int n);

}  // namespace moe
