#include "core/step/columns.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace moe {

namespace {
constexpr double kNA = std::numeric_limits<double>::quiet_NaN();  // "not computed" (phase not asked for)

#define P(phase, field) [](const Estimate& e) { return e.phase.computed ? double(e.phase.field) : kNA; }
#define M(field) [](const Estimate& e) { return e.ok ? double(e.memory.field) : kNA; }
#define S(field) [](const Estimate& e) { return e.ok && e.serving.computed ? double(e.serving.field) : kNA; }

std::string status_text(const Estimate& e) { return e.ok ? "ok" : "error"; }
std::string error_text(const Estimate& e) {
    std::string s;
    for (const Issue& i : e.errors) s += (s.empty() ? "" : "; ") + i.text();
    return s;
}

const std::vector<Column> kColumns = {
    {"prefill.step_ms", "ms", ColumnType::number, P(prefill, step_ms), nullptr, "Time of one prefill forward (a chunk of prefill_tokens per attention-DP rank)."},
    {"prefill.ttft_ms", "ms", ColumnType::number, P(prefill, ttft_ms), nullptr, "Time to first token: ceil(prompt_len / prefill_tokens) forwards, plus the pipeline fill."},
    {"prefill.tokens_per_s_per_gpu", "tokens/s", ColumnType::number, P(prefill, tokens_per_s_per_gpu), nullptr, "Prompt tokens served per second per GPU (those read from the prefix cache included; the forward computes the others)."},
    {"prefill.compute_ms", "ms", ColumnType::number, P(prefill, compute_ms), nullptr, "Sum of compute-operator time in a prefill forward."},
    {"prefill.comm_ms", "ms", ColumnType::number, P(prefill, comm_ms), nullptr, "Sum of communication time in a prefill forward (before overlap)."},
    {"prefill.exposed_comm_ms", "ms", ColumnType::number, P(prefill, exposed_comm_ms), nullptr, "Communication not hidden under compute."},
    {"prefill.tokens_per_s_cluster", "tokens/s", ColumnType::number, P(prefill, tokens_per_s_cluster), nullptr, "Prompt tokens served per second over all GPUs (prefix-cache hits included)."},
    {"prefill.offload_ms", "ms", ColumnType::number, P(prefill, offload_ms), nullptr, "Expert streaming from the host tier / SSD in a prefill forward that prefetch does not hide."},
    {"prefill.share_measured", "", ColumnType::number, P(prefill, share_measured), nullptr, "Share of compute time whose efficiency is a measured grid point."},
    {"prefill.share_interpolated", "", ColumnType::number, P(prefill, share_interpolated), nullptr, "Share interpolated between measured points."},
    {"prefill.share_transferred", "", ColumnType::number, P(prefill, share_transferred), nullptr, "Share borrowed from another GPU's or shape's table through the roofline."},
    {"prefill.share_analytical", "", ColumnType::number, P(prefill, share_analytical), nullptr, "Share from the analytical fallback (no table)."},
    {"decode.step_ms", "ms", ColumnType::number, P(decode, step_ms), nullptr, "Time of one decode step (all sequences of the batch, MTP drafts included)."},
    {"decode.tpot_ms", "ms", ColumnType::number, P(decode, tpot_ms), nullptr, "Time per output token seen by one user (step time / accepted tokens per step)."},
    {"decode.tokens_per_s_per_gpu", "tokens/s", ColumnType::number, P(decode, tokens_per_s_per_gpu), nullptr, "Generated tokens per second per GPU."},
    {"decode.tokens_per_s_per_user", "tokens/s", ColumnType::number, P(decode, tokens_per_s_per_user), nullptr, "Generated tokens per second seen by one user (1 / TPOT)."},
    {"decode.tokens_per_step", "tokens", ColumnType::number, P(decode, tokens_per_step), nullptr, "Tokens generated per step per attention-DP rank (batch x MTP acceptance)."},
    {"decode.compute_ms", "ms", ColumnType::number, P(decode, compute_ms), nullptr, "Sum of compute-operator time in a decode step."},
    {"decode.comm_ms", "ms", ColumnType::number, P(decode, comm_ms), nullptr, "Sum of communication time in a decode step (before overlap)."},
    {"decode.exposed_comm_ms", "ms", ColumnType::number, P(decode, exposed_comm_ms), nullptr, "Communication not hidden under compute."},
    {"decode.tokens_per_s_cluster", "tokens/s", ColumnType::number, P(decode, tokens_per_s_cluster), nullptr, "Generated tokens per second over all GPUs."},
    {"decode.offload_ms", "ms", ColumnType::number, P(decode, offload_ms), nullptr, "Expert streaming from the host tier / SSD in a decode step that prefetch does not hide."},
    {"decode.offload_bytes", "bytes", ColumnType::number, P(decode, offload_bytes), nullptr, "Expert weights streamed into HBM per decode step, per GPU."},
    {"decode.share_measured", "", ColumnType::number, P(decode, share_measured), nullptr, "Share of compute time whose efficiency is a measured grid point."},
    {"decode.share_interpolated", "", ColumnType::number, P(decode, share_interpolated), nullptr, "Share interpolated between measured points."},
    {"decode.share_transferred", "", ColumnType::number, P(decode, share_transferred), nullptr, "Share borrowed from another GPU's or shape's table through the roofline."},
    {"decode.share_analytical", "", ColumnType::number, P(decode, share_analytical), nullptr, "Share from the analytical fallback (no table)."},
    {"memory.weights_bytes", "bytes", ColumnType::number, M(weights_bytes), nullptr, "Weights held by one GPU (scales included)."},
    {"memory.kv_cache_bytes", "bytes", ColumnType::number, M(kv_cache_bytes), nullptr, "KV cache of the batch at the decode context on one GPU."},
    {"memory.activation_bytes", "bytes", ColumnType::number, M(activation_bytes), nullptr, "Peak activations (largest prefill chunk or the decode batch) with logits."},
    {"memory.workspace_bytes", "bytes", ColumnType::number, M(workspace_bytes), nullptr, "GEMM and attention workspaces."},
    {"memory.comm_buffer_bytes", "bytes", ColumnType::number, M(comm_buffer_bytes), nullptr, "DeepEP / NCCL communication buffers."},
    {"memory.reserved_bytes", "bytes", ColumnType::number, M(reserved_bytes), nullptr, "CUDA context, graphs and allocator slack."},
    {"memory.total_bytes", "bytes", ColumnType::number, M(total_bytes), nullptr, "Everything one GPU holds."},
    {"memory.capacity_bytes", "bytes", ColumnType::number, M(capacity_bytes), nullptr, "HBM capacity of one GPU."},
    {"memory.usable_bytes", "bytes", ColumnType::number, M(usable_bytes), nullptr, "Capacity times the engine's memory fraction."},
    {"memory.fits", "", ColumnType::boolean, [](const Estimate& e) { return e.ok ? (e.memory.fits ? 1.0 : 0.0) : kNA; }, nullptr, "Whether total_bytes fits in usable_bytes."},
    {"memory.shortfall_bytes", "bytes", ColumnType::number, M(shortfall_bytes), nullptr, "How much is missing when it does not fit."},
    {"memory.kv_bytes_per_token", "bytes", ColumnType::number, M(kv_bytes_per_token), nullptr, "KV-cache bytes per token on one GPU, all its layers."},
    {"memory.max_batch", "sequences", ColumnType::number, M(max_batch), nullptr, "Largest decode batch per attention-DP rank that fits at the context."},
    {"memory.max_context", "tokens", ColumnType::number, [](const Estimate& e) { return e.ok && e.decode.computed ? e.memory.max_context : kNA; }, nullptr, "Largest decode context that fits at the batch (empty for a prefill-only scenario)."},
    {"memory.weights_attention_bytes", "bytes", ColumnType::number, M(weights_attention_bytes), nullptr, "Attention weights on one GPU."},
    {"memory.weights_experts_bytes", "bytes", ColumnType::number, M(weights_experts_bytes), nullptr, "Routed-expert weights on one GPU (redundant experts included)."},
    {"memory.weights_shared_bytes", "bytes", ColumnType::number, M(weights_shared_bytes), nullptr, "Shared-expert weights on one GPU."},
    {"memory.weights_dense_ffn_bytes", "bytes", ColumnType::number, M(weights_dense_ffn_bytes), nullptr, "Dense FFN layer weights on one GPU."},
    {"memory.weights_embedding_bytes", "bytes", ColumnType::number, M(weights_embedding_bytes), nullptr, "Embedding and LM head on one GPU (vocab-parallel)."},
    {"memory.offloaded_experts_bytes", "bytes", ColumnType::number, M(offloaded_experts_bytes), nullptr, "Expert weights held in the host tier or on SSD rather than in HBM (runtime.expert_offload)."},
    {"memory.offload_hit_rate", "", ColumnType::number, M(offload_hit_rate), nullptr, "Share of a decode step's token-expert selections served by the experts cached in HBM (1 without offload)."},
    {"memory.weights_mtp_bytes", "bytes", ColumnType::number, M(weights_mtp_bytes), nullptr, "MTP modules on one GPU (when MTP is on)."},
    {"memory.cluster_weights_bytes", "bytes", ColumnType::number, M(cluster_weights_bytes), nullptr, "Weights summed over all GPUs (replicas included)."},
    {"memory.cluster_kv_cache_bytes", "bytes", ColumnType::number, M(cluster_kv_cache_bytes), nullptr, "KV cache summed over all GPUs."},
    {"memory.cluster_max_batch", "sequences", ColumnType::number, M(cluster_max_batch), nullptr, "Largest batch over all attention-DP ranks."},
    {"serving.ttft_ms", "ms", ColumnType::number, S(ttft_ms), nullptr, "Mean time to first token under load: the engine's request overhead, the request's own prefill, waiting for prefill capacity or a free slot, and the first wave's share."},
    {"serving.tpot_ms", "ms", ColumnType::number, S(tpot_ms), nullptr, "Mean time per output token under load: the decode step with the engine's overhead, plus the other requests' prefill work interleaved with decoding."},
    {"serving.e2e_latency_ms", "ms", ColumnType::number, S(e2e_latency_ms), nullptr, "Mean request latency: TTFT + (osl - 1) x TPOT."},
    {"serving.output_tokens_per_s_per_gpu", "tokens/s", ColumnType::number, S(output_tokens_per_s_per_gpu), nullptr, "Output tokens per second of the whole deployment over its GPUs."},
    {"serving.tokens_per_s_per_user", "tokens/s", ColumnType::number, S(tokens_per_s_per_user), nullptr, "Output tokens per second seen by one user (1000 / TPOT)."},
    {"serving.requests_per_s", "requests/s", ColumnType::number, S(requests_per_s), nullptr, "Completed requests per second of the deployment."},
    {"serving.gpus", "GPUs", ColumnType::number, S(gpus), nullptr, "GPUs of the deployment (aggregated: one replica; disaggregated: both pools)."},
    {"serving.fits", "", ColumnType::boolean, [](const Estimate& e) { return e.ok && e.serving.computed ? (e.serving.fits ? 1.0 : 0.0) : kNA; }, nullptr, "Whether at least one request's KV cache fits next to the weights (beyond the memory's batch, requests wait for a slot); disaggregated, also whether a prefill worker holds its forward."},
    {"serving.ttft_prefill_ms", "ms", ColumnType::number, S(ttft_prefill_ms), nullptr, "Part of TTFT: the request's own prefill (steady state)."},
    {"serving.ttft_queue_ms", "ms", ColumnType::number, S(ttft_queue_ms), nullptr, "Part of TTFT: waiting for prefill capacity or a free slot."},
    {"serving.ttft_first_wave_ms", "ms", ColumnType::number, S(ttft_first_wave_ms), nullptr, "Part of TTFT: the first requests of the run waiting behind each other, averaged over all requests."},
    {"serving.ttft_overhead_ms", "ms", ColumnType::number, S(ttft_overhead_ms), nullptr, "Part of TTFT: the engine's per-request overhead (HTTP, tokenisation, admission)."},
    {"serving.kv_transfer_ms", "ms", ColumnType::number, S(kv_transfer_ms), nullptr, "Part of TTFT: disaggregated, moving one request's KV cache from a prefill to a decode worker; with workload.sessions or workload.trace, plus the mean wait for a prefix read back from host memory or SSD (aggregated: that wait alone)."},
    {"serving.prefix_hit_rate_gpu", "", ColumnType::number, S(prefix_hit_rate_gpu), nullptr, "With workload.sessions or workload.trace: share of the prompt tokens found in HBM (the system prompt and sessions' KV still there), not computed again."},
    {"serving.prefix_hit_rate_host", "", ColumnType::number, S(prefix_hit_rate_host), nullptr, "With workload.sessions or workload.trace: share of the prompt tokens read back from host memory (runtime.kv_offload.host_GB)."},
    {"serving.prefix_hit_rate_ssd", "", ColumnType::number, S(prefix_hit_rate_ssd), nullptr, "With workload.sessions or workload.trace: share of the prompt tokens read back from SSD (runtime.kv_offload.ssd_GB)."},
    {"serving.kv_bytes_moved_per_token", "bytes", ColumnType::number, S(kv_bytes_moved_per_token), nullptr, "With workload.sessions or workload.trace: KV bytes moved between HBM and the host / SSD tiers (reads back and evictions, all GPUs) per output token."},
    {"serving.tpot_decode_ms", "ms", ColumnType::number, S(tpot_decode_ms), nullptr, "Part of TPOT: the decode step with the engine's per-step overhead."},
    {"serving.tpot_prefill_ms", "ms", ColumnType::number, S(tpot_prefill_ms), nullptr, "Part of TPOT: other requests' prefill work per output token."},
    {"serving.tpot_preempt_ms", "ms", ColumnType::number, S(tpot_preempt_ms), nullptr, "Part of TPOT: time preempted, waiting for KV room, per output token (engines that admit a request without reserving its output's KV, when memory holds fewer requests than are in flight)."},
    {"serving.running_batch", "requests", ColumnType::number, S(running_batch), nullptr, "Requests decoding per attention-DP rank (the memory model or the prefill pool may hold it below the concurrency)."},
    {"serving.prefill_utilisation", "", ColumnType::number, S(prefill_utilisation), nullptr, "Share of the time (aggregated) or of the prefill pool (disaggregated) spent on prefill."},
    {"cost.gpu_hour_usd", "USD/h", ColumnType::number, [](const Estimate& e) { return e.ok && e.gpu_hour_usd > 0 ? e.gpu_hour_usd : kNA; }, nullptr, "The GPU-hour price the $ outputs use: cost.gpu_hour_usd, else the GPU preset's example price (empty: none)."},
    {"prefill.usd_per_mtok", "USD/Mtok", ColumnType::number, [](const Estimate& e) { return e.prefill.computed && e.prefill.usd_per_mtok > 0 ? e.prefill.usd_per_mtok : kNA; }, nullptr, "GPU cost of a million prompt tokens at the prefill rate: cost.gpu_hour_usd / 3600 / prefill.tokens_per_s_per_gpu x 1e6."},
    {"decode.usd_per_mtok", "USD/Mtok", ColumnType::number, [](const Estimate& e) { return e.decode.computed && e.decode.usd_per_mtok > 0 ? e.decode.usd_per_mtok : kNA; }, nullptr, "GPU cost of a million generated tokens at the decode rate: cost.gpu_hour_usd / 3600 / decode.tokens_per_s_per_gpu x 1e6."},
    {"serving.usd_per_mtok_output", "USD/Mtok", ColumnType::number, [](const Estimate& e) { return e.ok && e.serving.computed && e.serving.usd_per_mtok_output > 0 ? e.serving.usd_per_mtok_output : kNA; }, nullptr, "GPU cost of a million output tokens under load: cost.gpu_hour_usd / 3600 / serving.output_tokens_per_s_per_gpu x 1e6 (the prompts' cost included)."},
    {"serving.usd_per_mtok_total", "USD/Mtok", ColumnType::number, [](const Estimate& e) { return e.ok && e.serving.computed && e.serving.usd_per_mtok_total > 0 ? e.serving.usd_per_mtok_total : kNA; }, nullptr, "GPU cost of a million tokens served, prompt and output counted alike (isl + osl per request)."},
    {"prefill.tensor_utilisation", "", ColumnType::number, P(prefill, tensor_utilisation), nullptr, "Time-averaged tensor-core use over a prefill forward: its FLOPs / (the peak of their format x step time)."},
    {"prefill.hbm_utilisation", "", ColumnType::number, P(prefill, hbm_utilisation), nullptr, "Time-averaged HBM use over a prefill forward: bytes read and written / (HBM bandwidth x step time)."},
    {"prefill.link_utilisation", "", ColumnType::number, P(prefill, link_utilisation), nullptr, "Time-averaged use of the board's links (NVLink, mesh links, host link; not the RDMA NIC) over a prefill forward."},
    {"prefill.power_w_per_gpu", "W", ColumnType::number, [](const Estimate& e) { return e.prefill.computed && e.prefill.power_w_per_gpu > 0 ? e.prefill.power_w_per_gpu : kNA; }, nullptr, "Average board power of one GPU over a prefill forward: idle power plus an energy per FLOP, per HBM byte and per link byte, at most the board power (docs/model.md, \"Power and energy\"; empty: the GPU has no board_power_w)."},
    {"prefill.joules_per_token", "J/token", ColumnType::number, [](const Estimate& e) { return e.prefill.computed && e.prefill.joules_per_token > 0 ? e.prefill.joules_per_token : kNA; }, nullptr, "GPU board energy per prompt token: prefill.power_w_per_gpu / prefill.tokens_per_s_per_gpu."},
    {"decode.tensor_utilisation", "", ColumnType::number, P(decode, tensor_utilisation), nullptr, "Time-averaged tensor-core use over a decode step: its FLOPs / (the peak of their format x step time)."},
    {"decode.hbm_utilisation", "", ColumnType::number, P(decode, hbm_utilisation), nullptr, "Time-averaged HBM use over a decode step: bytes read and written / (HBM bandwidth x step time)."},
    {"decode.link_utilisation", "", ColumnType::number, P(decode, link_utilisation), nullptr, "Time-averaged use of the board's links (NVLink, mesh links, host link; not the RDMA NIC) over a decode step."},
    {"decode.power_w_per_gpu", "W", ColumnType::number, [](const Estimate& e) { return e.decode.computed && e.decode.power_w_per_gpu > 0 ? e.decode.power_w_per_gpu : kNA; }, nullptr, "Average board power of one GPU over a decode step (as prefill.power_w_per_gpu)."},
    {"decode.joules_per_token", "J/token", ColumnType::number, [](const Estimate& e) { return e.decode.computed && e.decode.joules_per_token > 0 ? e.decode.joules_per_token : kNA; }, nullptr, "GPU board energy per generated token: decode.power_w_per_gpu / decode.tokens_per_s_per_gpu."},
    {"serving.power_w_per_gpu", "W", ColumnType::number, [](const Estimate& e) { return e.ok && e.serving.computed && e.serving.power_w_per_gpu > 0 ? e.serving.power_w_per_gpu : kNA; }, nullptr, "Average board power of one GPU under load: idle power plus the energy of the prompt and output tokens it serves per second, at most the board power."},
    {"serving.joules_per_token", "J/token", ColumnType::number, [](const Estimate& e) { return e.ok && e.serving.computed && e.serving.joules_per_token > 0 ? e.serving.joules_per_token : kNA; }, nullptr, "GPU board energy per output token under load (the prompts' energy included): serving.power_w_per_gpu / serving.output_tokens_per_s_per_gpu."},
    {"serving.joules_per_token_total", "J/token", ColumnType::number, [](const Estimate& e) { return e.ok && e.serving.computed && e.serving.joules_per_token_total > 0 ? e.serving.joules_per_token_total : kNA; }, nullptr, "GPU board energy per token served, prompt and output counted alike (isl + osl per request; InferenceX's J/total token)."},
#define B(field) [](const Estimate& e) { return e.ok && e.serving.computed && e.serving.has_band ? e.serving.field : kNA; }
    {"serving.ttft_ms_p10", "ms", ColumnType::number, B(ttft_ms_p10), nullptr, "Band of serving.ttft_ms, low end: the mean times exp of the 10th percentile of log(measured / predicted) over the engine's held-out runs (engines.json; empty: the engine has no band)."},
    {"serving.ttft_ms_p90", "ms", ColumnType::number, B(ttft_ms_p90), nullptr, "Band of serving.ttft_ms, high end (the 90th percentile; docs/serving.md, \"Uncertainty\")."},
    {"serving.tpot_ms_p10", "ms", ColumnType::number, B(tpot_ms_p10), nullptr, "Band of serving.tpot_ms, low end (as serving.ttft_ms_p10)."},
    {"serving.tpot_ms_p90", "ms", ColumnType::number, B(tpot_ms_p90), nullptr, "Band of serving.tpot_ms, high end."},
    {"serving.output_tokens_per_s_per_gpu_p10", "tokens/s", ColumnType::number, B(output_tokens_per_s_per_gpu_p10), nullptr, "Band of serving.output_tokens_per_s_per_gpu, low end: from the held-out runs' E2E residuals (at a fixed number of clients, throughput goes as 1 / E2E)."},
    {"serving.output_tokens_per_s_per_gpu_p90", "tokens/s", ColumnType::number, B(output_tokens_per_s_per_gpu_p90), nullptr, "Band of serving.output_tokens_per_s_per_gpu, high end."},
#undef B
    {"model.total_params", "params", ColumnType::number, [](const Estimate& e) { return e.total_params; }, nullptr, "Parameters of the model (embeddings included, MTP excluded)."},
    {"model.active_params", "params", ColumnType::number, [](const Estimate& e) { return e.active_params; }, nullptr, "Parameters used per token (embedding included: DeepSeek/Qwen/Mistral convention)."},
    {"status", "", ColumnType::text, nullptr, status_text, "ok, or error when the scenario is invalid."},
    {"error", "", ColumnType::text, nullptr, error_text, "What is wrong, naming the field."},
};
#undef P
#undef M
#undef S
}  // namespace

const std::vector<Column>& output_columns() { return kColumns; }

const Column* find_column(std::string_view name) {
    for (const Column& c : kColumns)
        if (name == c.name) return &c;
    return nullptr;
}

std::string format_number(double v) {
    if (!std::isfinite(v)) return "";
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

std::string format_value(const Column& c, const Estimate& e) {
    switch (c.type) {
        case ColumnType::text: return c.text(e);
        case ColumnType::boolean: {
            double v = c.number(e);
            return std::isfinite(v) ? (v != 0 ? "true" : "false") : "";
        }
        case ColumnType::number: return format_number(c.number(e));
    }
    return "";
}

void append_csv_cell(std::string& out, std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
        out += text;
        return;
    }
    out += '"';
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

nlohmann::json column_json(const Column& c, const Estimate& e) {
    switch (c.type) {
        case ColumnType::text: return c.text(e);
        case ColumnType::boolean: {
            double v = c.number(e);
            return std::isfinite(v) ? nlohmann::json(v != 0) : nlohmann::json();
        }
        case ColumnType::number: {
            double v = c.number(e);
            return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
        }
    }
    return nullptr;
}

nlohmann::json estimate_to_flat_json(const Estimate& e) {
    nlohmann::json j = nlohmann::json::object();
    for (const Column& c : kColumns) j[c.name] = column_json(c, e);
    return j;
}

nlohmann::json estimate_to_json(const Estimate& e) {
    nlohmann::json j = nlohmann::json::object();
    for (const Column& c : kColumns) {
        std::string name = c.name;
        auto dot = name.find('.');
        if (dot == std::string::npos) j[name] = column_json(c, e);
        else j[name.substr(0, dot)][name.substr(dot + 1)] = column_json(c, e);
    }
    nlohmann::json layers = nlohmann::json::array();
    for (const OpRecord& o : e.ops) {
        const PhaseResult& p = o.phase == Phase::prefill ? e.prefill : e.decode;
        layers.push_back({{"name", o.name},
                          {"phase", phase_name(o.phase)},
                          {"group", size_t(o.group) < p.groups.size() ? p.groups[size_t(o.group)].label.c_str() : ""},
                          {"count", o.count},
                          {"time_us", o.time_us},
                          {"exposed_us", o.exposed_us},
                          {"flops", o.flops},
                          {"weight_bytes", o.weight_bytes},
                          {"activation_bytes", o.activation_bytes},
                          {"comm_bytes", o.comm_bytes},
                          {"hops", o.hops},
                          {"bound", bound_name(o.bound)},
                          {"compute_dtype", dtype_name(o.compute_dtype)},
                          {"engine", engine_name(o.engine)},
                          {"efficiency", o.efficiency},
                          {"source", source_name(o.source)},
                          {"table", o.table}});
    }
    j["layers"] = layers;
    nlohmann::json errs = nlohmann::json::array();
    for (const Issue& i : e.errors) errs.push_back({{"path", i.path}, {"message", i.message}});
    j["errors"] = errs;
    j["warnings"] = e.warnings;
    j["backends"] = {{"prefill", a2a_backend_name(e.prefill_backend)}, {"decode", a2a_backend_name(e.decode_backend)}};
    j["dtypes"] = {{"weights", dtype_name(e.weights_dtype)}, {"experts", dtype_name(e.experts_dtype)}, {"kv_cache", dtype_name(e.kv_dtype)}};
    return j;
}

}  // namespace moe
