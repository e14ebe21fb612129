// report.cpp — the human-readable eval table and the presets listings (see report.h).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "core/step/columns.h"
#include "core/scenario/model_spec.h"
#include "core/serving/serving.h"
#include "values.h"

namespace cli {

namespace {

constexpr double kGB = 1e9;  // SI, as everywhere in the product

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void appendf(std::string& out, const char* fmt, ...) {
    char buf[512];
    va_list args;
    va_start(args, fmt);
    int n = std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    if (n > 0) out.append(buf, std::min<std::size_t>(std::size_t(n), sizeof buf - 1));
}

// A fixed-width text table: columns are left-aligned unless their header starts with '>'.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> headers) {
        for (std::string& h : headers) {
            bool right = !h.empty() && h.front() == '>';
            if (right) h.erase(0, 1);
            right_.push_back(right);
            widths_.push_back(h.size());
        }
        rows_.push_back(std::move(headers));
    }
    void add(std::vector<std::string> row) {
        for (std::size_t i = 0; i < row.size() && i < widths_.size(); ++i)
            widths_[i] = std::max(widths_[i], row[i].size());
        rows_.push_back(std::move(row));
    }
    void render(std::string& out, const char* indent = "  ") const {
        for (const std::vector<std::string>& row : rows_) {
            std::string line = indent;
            for (std::size_t i = 0; i < row.size() && i < widths_.size(); ++i) {
                const std::size_t pad = widths_[i] - row[i].size();
                if (i > 0) line += "  ";
                if (right_[i]) line.append(pad, ' ');
                line += row[i];
                if (!right_[i] && i + 1 < row.size()) line.append(pad, ' ');
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            out += line;
            out += '\n';
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
    std::vector<std::size_t> widths_;
    std::vector<bool> right_;
};

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Three significant digits without exponent for everyday magnitudes: 0.0123, 1.23, 123, 12345.
std::string sig3(double v) {
    const double a = std::fabs(v);
    if (a == 0) return "0";
    if (a >= 100) return fixed(v, 0);
    if (a >= 10) return fixed(v, 1);
    if (a >= 1) return fixed(v, 2);
    if (a >= 0.01) return fixed(v, 3);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2e", v);
    return buf;
}

std::string count(double n) { return n == std::floor(n) ? fixed(n, 0) : sig3(n); }

std::string gb(double bytes) { return fixed(bytes / kGB, 2); }

std::string params(double n) {
    if (n >= 1e9) return fixed(n / 1e9, 1) + "B";
    return fixed(n / 1e6, 1) + "M";
}

const char* dash = "-";

// The scenario in three lines: model, GPUs and layout; parameters and workload; formats and backends.
void headline(std::string& out, const moe::Scenario& s, const moe::Estimate& e) {
    const moe::ParallelConfig& p = s.parallel;
    const std::string model = s.model.name.empty() ? s.model_ref : s.model.name;
    const std::string gpu = s.gpu.name.empty() ? s.hardware_ref : s.gpu.name;
    appendf(out, "%s on %s: tp %d, dp %d, ep %d, pp %d = %d GPUs (%d per node)\n", model.c_str(), gpu.c_str(), p.tp,
            p.dp, p.ep, p.pp, s.world(), s.gpus_per_node());
    const moe::WorkloadConfig& w = s.workload;
    if (!w.mixed_lengths()) {
        appendf(out, "%s params (%s active); batch %d per attention-DP rank, context %d, prefill chunk %d, prompt %d\n",
                params(e.total_params).c_str(), params(e.active_params).c_str(), w.batch, s.context_len(),
                w.prefill_tokens, w.prompt_len);
    } else {
        // requests of mixed lengths (workload.prompt_lens / context_lens): the lists, the first few of each
        auto listed = [](const std::vector<int>& v) {
            std::string t;
            for (std::size_t i = 0; i < v.size() && i < 8; ++i) t += (i ? ", " : "") + std::to_string(v[i]);
            if (v.size() > 8) t += ", ... (" + std::to_string(v.size()) + ")";
            return t;
        };
        std::string shape;
        if (!w.prompt_lens.empty()) {
            shape += "prompts " + listed(w.prompt_lens);
            if (!w.prefill_bucket_lens.empty()) shape += " in buckets " + listed(w.prefill_bucket_lens);
        } else {
            shape += "prefill chunk " + std::to_string(w.prefill_tokens) + ", prompt " + std::to_string(w.prompt_len);
        }
        shape += "; ";
        if (!w.context_lens.empty()) shape += "decode contexts " + listed(w.context_lens);
        else shape += "batch " + std::to_string(w.batch) + " per attention-DP rank, context " + std::to_string(s.context_len());
        appendf(out, "%s params (%s active); %s\n", params(e.total_params).c_str(), params(e.active_params).c_str(),
                shape.c_str());
    }
    appendf(out, "weights %s, experts %s, KV cache %s; all-to-all: prefill %s, decode %s%s\n\n",
            moe::dtype_name(e.weights_dtype), moe::dtype_name(e.experts_dtype), moe::dtype_name(e.kv_dtype),
            moe::a2a_backend_name(e.prefill_backend), moe::a2a_backend_name(e.decode_backend),
            s.runtime.two_batch_overlap ? ", two-batch overlap" : "");
}

// The step's headline numbers: one column per phase the scenario computes (workload.phase: prefill, decode or both).
void phase_table(std::string& out, const moe::Estimate& e) {
    struct Col {
        const moe::PhaseResult* r;
        bool decode;
    };
    std::vector<Col> cols;
    std::vector<std::string> header{""};
    if (e.prefill.computed) {
        cols.push_back({&e.prefill, false});
        header.push_back(">prefill");
    }
    if (e.decode.computed) {
        cols.push_back({&e.decode, true});
        header.push_back(">decode");
    }
    header.push_back("");
    TextTable t(header);
    enum Only { both, prefill_only, decode_only };
    auto add = [&](const char* label, const char* unit, auto value, Only only = both) {
        std::vector<std::string> row{label};
        bool any = false;
        for (const Col& c : cols) {
            const bool shown = only == both || (only == decode_only) == c.decode;
            any = any || shown;
            row.push_back(shown ? sig3(value(*c.r)) : std::string(dash));
        }
        if (!any) return;  // a prefill-only row when only decode is computed, or the reverse
        row.push_back(unit);
        t.add(std::move(row));
    };
    using R = const moe::PhaseResult&;
    add("step", "ms", [](R r) { return r.step_ms; });
    add("TTFT", "ms", [](R r) { return r.ttft_ms; }, prefill_only);
    add("TPOT", "ms", [](R r) { return r.tpot_ms; }, decode_only);
    add("tokens/s per GPU", "", [](R r) { return r.tokens_per_s_per_gpu; });
    add("tokens/s per user", "", [](R r) { return r.tokens_per_s_per_user; }, decode_only);
    add("tokens/s in the cluster", "", [](R r) { return r.tokens_per_s_cluster; });
    add("compute", "ms", [](R r) { return r.compute_ms; });
    add("communication", "ms", [](R r) { return r.comm_ms; });
    add("  exposed (not overlapped)", "ms", [](R r) { return r.exposed_comm_ms; });
    add("overhead", "ms", [](R r) { return r.overhead_ms; });
    if (e.prefill.pp_bubble_ms > 0 || e.decode.pp_bubble_ms > 0)
        add("pipeline bubble", "ms", [](R r) { return r.pp_bubble_ms; });
    if (e.prefill.power_w_per_gpu > 0 || e.decode.power_w_per_gpu > 0) {  // issue 28: GPUs with a board power
        add("board power per GPU", "W", [](R r) { return r.power_w_per_gpu; });
        add("energy per token", "J", [](R r) { return r.joules_per_token; });
    }
    t.render(out, "");
}

void operators(std::string& out, const moe::Estimate& e, moe::Phase phase, const moe::PhaseResult& r) {
    if (!r.computed) return;
    appendf(out, "\n%s operators: time per occurrence, what bounds it, and where its efficiency came from\n",
            phase == moe::Phase::prefill ? "Prefill" : "Decode");
    TextTable t({"group", "operator", ">count", ">time us", ">exposed us", "bound", ">eff", "source"});
    double total_us = 0;
    for (const moe::OpRecord& op : e.ops) {
        if (op.phase != phase) continue;
        const std::string group =
            op.group >= 0 && std::size_t(op.group) < r.groups.size() ? r.groups[std::size_t(op.group)].label.c_str() : "";
        std::string source = moe::source_name(op.source);
        if (op.table && *op.table) source += std::string(" (") + op.table + ")";
        t.add({group, op.name, count(op.count), sig3(op.time_us), sig3(op.exposed_us), moe::bound_name(op.bound),
               op.efficiency > 0 ? fixed(op.efficiency, 2) : std::string(dash), source});
        total_us += op.exposed_us * op.count;
    }
    t.render(out);
    appendf(out,
            "  operators add up to %s ms of the %s ms step; efficiency sources: %.0f%% measured, %.0f%% interpolated, "
            "%.0f%% transferred, %.0f%% analytical\n",
            sig3(total_us / 1000).c_str(), sig3(r.step_ms).c_str(), 100 * r.share_measured,
            100 * r.share_interpolated, 100 * r.share_transferred, 100 * r.share_analytical);
}

void memory(std::string& out, const moe::Scenario& s, const moe::Estimate& e) {
    const moe::MemoryResult& m = e.memory;
    out += "\nMemory per GPU (GB = 1e9 bytes)\n";
    TextTable t({"", ">GB", ""});
    t.add({"weights", gb(m.weights_bytes),
           "attention " + gb(m.weights_attention_bytes) + ", routed experts " + gb(m.weights_experts_bytes) +
               ", shared experts " + gb(m.weights_shared_bytes) + ", dense FFN " + gb(m.weights_dense_ffn_bytes) +
               ", embedding+head " + gb(m.weights_embedding_bytes) + ", other " + gb(m.weights_other_bytes) +
               (m.weights_mtp_bytes > 0 ? ", MTP " + gb(m.weights_mtp_bytes) : std::string())});
    t.add({"KV cache", gb(m.kv_cache_bytes),
           "at batch " + std::to_string(s.workload.batch) + " x context " + std::to_string(s.context_len()) + ", " +
               sig3(m.kv_bytes_per_token / 1e3) + " KB per token" +
               (m.linear_state_bytes_per_request > 0
                    ? " + " + sig3(m.linear_state_bytes_per_request / 1e6) + " MB linear-attention state per request"
                    : std::string())});
    t.add({"activations", gb(m.activation_bytes),
           "prefill peak " + gb(m.activation_prefill_bytes) + ", decode " + gb(m.activation_decode_bytes) +
               ", logits " + gb(m.logits_bytes)});
    t.add({"workspace", gb(m.workspace_bytes), "grouped GEMM and attention"});
    t.add({"comm buffers", gb(m.comm_buffer_bytes), "DeepEP / NCCL"});
    t.add({"reserved", gb(m.reserved_bytes), "CUDA context, graphs, allocator"});
    t.add({"total", gb(m.total_bytes),
           std::string(m.fits ? "fits" : "DOES NOT FIT") + " in " + gb(m.usable_bytes) + " usable of " +
               gb(m.capacity_bytes) +
               (m.fits ? std::string() : " (short by " + gb(m.shortfall_bytes) + ")")});
    t.render(out, "  ");
    appendf(out, "  largest decode batch that fits: %.0f per attention-DP rank at context %d (%.0f in the cluster)\n",
            m.max_batch, s.context_len(), m.cluster_max_batch);
    if (e.decode.computed)  // (a prefill-only scenario holds its chunk's prompts, not a decode batch)
        appendf(out, "  largest context that fits at batch %d: %.0f tokens\n", s.workload.batch, m.max_context);
}

// a length to 4 significant digits, no trailing zeros (1125, 50, 2.5e+04)
std::string g4(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

// The deployment under load (DESIGN §8.2), above the step-level table's operators: what a user decides on.
void serving(std::string& out, const moe::Scenario& s, const moe::Estimate& e) {
    const moe::ServingResult& r = e.serving;
    if (!r.computed) return;
    const moe::ServingConfig& sv = s.serving;
    const bool disagg = sv.mode == moe::ServingMode::disaggregated;
    const char* engine = moe::engine_kind_name(s.runtime.engine);
    // the requests: a trace's own (its count and mean lengths), else the nominal lengths
    const std::string lengths =
        sv.trace.on() ? "a trace of " + std::to_string(sv.trace.size()) + " requests, mean " + g4(sv.mean_isl()) + " in / " +
                            g4(sv.mean_osl()) + " out"
                      : std::to_string(sv.isl) + " in / " + std::to_string(sv.osl) + " out" +
                            (sv.length_spread > 0 ? ", lengths spread " + sig3(sv.length_spread) : std::string());
    if (disagg)
        appendf(out, "Serving, disaggregated on %s: %d prefill worker(s) + %d decode worker(s) x batch %d per DP rank, %s\n",
                engine, sv.prefill.workers, sv.decode.workers, sv.decode.batch, lengths.c_str());
    else
        appendf(out, "Serving, aggregated on %s: %d requests in flight, %s\n", engine, sv.concurrency, lengths.c_str());
    TextTable t({"", ">", "", ""});
    t.add({"TTFT", sig3(r.ttft_ms), "ms",
           "own prefill " + sig3(r.ttft_prefill_ms) + ", queue " + sig3(r.ttft_queue_ms) + ", first wave " +
               sig3(r.ttft_first_wave_ms) + ", engine overhead " + sig3(r.ttft_overhead_ms) +
               (disagg ? ", KV transfer " + sig3(r.kv_transfer_ms) : std::string())});
    t.add({"TPOT", sig3(r.tpot_ms), "ms",
           "decode step " + sig3(r.tpot_decode_ms) + ", interleaved prefill " + sig3(r.tpot_prefill_ms) +
               (r.tpot_preempt_ms > 0 ? ", preempted (memory) " + sig3(r.tpot_preempt_ms) : std::string())});
    t.add({"request latency", sig3(r.e2e_latency_ms), "ms", ""});
    t.add({"output tokens/s per GPU", sig3(r.output_tokens_per_s_per_gpu), "", sig3(r.requests_per_s) + " requests/s on " + count(r.gpus) + " GPUs"});
    t.add({"tokens/s per user", sig3(r.tokens_per_s_per_user), "", "running batch " + sig3(r.running_batch) + " per DP rank, " + r.bound + "-bound"});
    if (r.power_w_per_gpu > 0)
        t.add({"board power per GPU", sig3(r.power_w_per_gpu), "W",
               sig3(r.joules_per_token) + " J per output token, " + sig3(r.joules_per_token_total) + " J per token served"});
    std::string body;
    t.render(body);
    out += body.substr(body.find('\n') + 1);  // no header row
    const moe::EngineConstants k = moe::engine_constants(moe::active_engines(), s);
    if (k.ttft_typical_error > 0 || k.tpot_typical_error > 0)
        appendf(out, "  typical error of %s's serving numbers against measured runs: TTFT %.0f%%, TPOT %.0f%% (median, each "
                     "model family left out of the fit; docs/validation.md)\n",
                engine, 100 * k.ttft_typical_error, 100 * k.tpot_typical_error);
    if (r.has_band)  // issue 28: the p10 .. p90 band from the engine's held-out residuals (docs/serving.md, "Uncertainty")
        appendf(out, "  band (p10 .. p90): TTFT %s .. %s ms, TPOT %s .. %s ms, output tokens/s per GPU %s .. %s\n",
                sig3(r.ttft_ms_p10).c_str(), sig3(r.ttft_ms_p90).c_str(), sig3(r.tpot_ms_p10).c_str(), sig3(r.tpot_ms_p90).c_str(),
                sig3(r.output_tokens_per_s_per_gpu_p10).c_str(), sig3(r.output_tokens_per_s_per_gpu_p90).c_str());
    out += "\nStep-level model at the scenario's workload (the batch, context and prompt above)\n";
}

}  // namespace

std::string estimate_table(const moe::Scenario& s, const moe::Estimate& e) {
    std::string out;
    headline(out, s, e);
    serving(out, s, e);
    phase_table(out, e);
    operators(out, e, moe::Phase::prefill, e.prefill);
    operators(out, e, moe::Phase::decode, e.decode);
    memory(out, s, e);
    if (!e.warnings.empty()) {
        out += "\nWarnings\n";
        for (const std::string& w : e.warnings) out += "  - " + w + "\n";
    }
    return out;
}

bool presets_listing(const moe::Catalog& catalog, std::string_view kind, std::string& out) {
    auto list = [&](const char* title, const std::vector<moe::CatalogEntry>& entries) {
        appendf(out, "%s (%zu)\n", title, entries.size());
        TextTable t({"", ""});
        for (const moe::CatalogEntry& e : entries) t.add({e.id, e.description});
        std::string body;
        t.render(body);
        out += body.substr(body.find('\n') + 1);  // no header row
    };
    const bool all = kind.empty();
    if (all || kind == "models") list("models", catalog.models());
    if (all) out += '\n';
    if (all || kind == "hardware") list("hardware", catalog.hardware());
    if (all) out += '\n';
    if (all || kind == "scenarios") list("scenarios", catalog.scenarios());
    if (all) return true;
    if (kind == "models" || kind == "hardware" || kind == "scenarios") return true;

    if (kind == "fields") {
        const moe::ParseResult defaults = moe::parse_scenario("{}", catalog);
        TextTable t({"path", "type", "unit", "default", "range / choices", "help"});
        auto type_name = [](moe::FieldType type) {
            switch (type) {
                case moe::FieldType::integer: return "integer";
                case moe::FieldType::number: return "number";
                case moe::FieldType::boolean: return "boolean";
                case moe::FieldType::choice: return "choice";
                case moe::FieldType::dtype: return "dtype";
                case moe::FieldType::ref: return "preset";
                case moe::FieldType::rates: return "rates";
                case moe::FieldType::lengths: return "lengths";
            }
            return "";
        };
        for (const moe::FieldDesc& f : moe::scenario_fields()) {
            std::string range;
            if (f.type == moe::FieldType::integer || f.type == moe::FieldType::number) {
                range = number_text(f.min) + " .. " + number_text(f.max);
            } else if (f.type == moe::FieldType::rates) {
                int n = 0;
                const moe::AcceptanceCurve* curves = moe::acceptance_curves(&n);
                range = "rates in 0 .. 1";
                for (int k = 0; k < n; ++k) range += std::string(", ") + curves[k].name;
            } else if (f.type == moe::FieldType::lengths) {
                range = "list of " + number_text(f.min) + " .. " + number_text(f.max);
            } else if (f.choices) {
                for (const char* const* c = f.choices; *c; ++c) range += (range.empty() ? "" : ", ") + std::string(*c);
            }
            nlohmann::json d = moe::get_path(defaults.scenario, f.path);
            t.add({f.path, type_name(f.type), f.unit, d.is_string() ? d.get<std::string>() : d.dump(), range,
                   f.help});
        }
        t.render(out, "");
        return true;
    }
    if (kind == "columns") {
        TextTable t({"column", "unit", "help"});
        for (const moe::Column& c : moe::output_columns()) t.add({c.name, c.unit, c.help});
        t.render(out, "");
        return true;
    }
    return false;
}

}  // namespace cli
