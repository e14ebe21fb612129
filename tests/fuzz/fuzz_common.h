// fuzz_common.h — what every fuzz target checks after running the core on a stranger's input.
//
//   moe::Estimate e = moe::estimate(s, moe::builtin_tables());
//   fuzz::check_estimate(e, "scenario");          // aborts (a libFuzzer finding) on a broken promise
//
// The promises (DESIGN §3, issue 8): no crash, no exception across the API, every error names something, every
// output number is finite (NaN only as "not computed" for a phase that was not asked for or a failed estimate),
// the JSON of an estimate always serialises. A broken promise prints one line and aborts, so libFuzzer keeps the
// input as crash-<sha1> (scripts/fuzz.sh turns it into a regression test).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/moe.h"

namespace fuzz {

[[noreturn]] inline void fail(const std::string& what) {
    std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

// Valid UTF-8 exactly when replacing and ignoring invalid bytes serialise the same (exception-free).
inline bool valid_utf8(const std::string& s) {
    const nlohmann::json j = s;
    using eh = nlohmann::json::error_handler_t;
    return j.dump(-1, ' ', false, eh::replace) == j.dump(-1, ' ', false, eh::ignore);
}

// A user error must say what is wrong, in text that prints and serialises, at a readable length; `where` names the
// target in the message.
inline void check_issues(const moe::Issues& issues, const char* where) {
    for (const moe::Issue& i : issues) {
        if (i.message.empty()) fail(std::string(where) + ": an issue without a message");
        if (!valid_utf8(i.text())) fail(std::string(where) + ": a message that is not valid UTF-8");
        if (i.text().size() > 2000) fail(std::string(where) + ": a message of " + std::to_string(i.text().size()) + " bytes");
    }
}

inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

inline void check_finite(double v, const std::string& what) {
    if (!std::isfinite(v)) fail(what + " is not finite (" + std::to_string(v) + ")");
}

// Every number an Estimate publishes: the output columns (what the CLI, the page and its test hook print) and the
// per-operator records. NaN is the columns' "not computed" marker and is allowed only where it means that.
inline void check_estimate(const moe::Estimate& e, const char* where) {
    const std::string w = where;
    check_issues(e.errors, where);
    if (!e.ok && e.errors.empty()) fail(w + ": estimate failed without an error");
    for (const moe::Issue& i : e.errors)
        if (i.message.find("non-finite") != std::string::npos) fail(w + ": the model's NaN guard tripped: " + i.text());
    for (const moe::Column& c : moe::output_columns()) {
        if (c.type == moe::ColumnType::text) {
            (void)c.text(e);
            continue;
        }
        const double v = c.number(e);
        if (std::isinf(v)) fail(w + ": column " + c.name + " is infinite");
        if (!std::isnan(v)) continue;
        const std::string_view name = c.name;
        const bool not_computed = (starts_with(name, "prefill.") && !e.prefill.computed) ||
                                  (starts_with(name, "decode.") && !e.decode.computed) ||
                                  (starts_with(name, "memory.") && !e.ok) ||
                                  // a prefill-only step holds no decode batch to find a context for (stop 35)
                                  (name == "memory.max_context" && !e.decode.computed) ||
                                  (starts_with(name, "serving.") && !(e.ok && e.serving.computed)) ||  // DESIGN 8.2
                                  // the $ columns are empty without a GPU-hour price (issue 28)
                                  ((name == "cost.gpu_hour_usd" || name.find("usd_per_mtok") != std::string_view::npos) &&
                                   !(e.gpu_hour_usd > 0)) ||
                                  // the power and energy columns are empty without a board power (issue 28)
                                  ((name.find("power_w") != std::string_view::npos ||
                                    name.find("joules") != std::string_view::npos) &&
                                   !(e.board_power_w > 0));
        if (!not_computed) fail(w + ": column " + c.name + " is NaN");
    }
    if (!e.ok) {
        // Every failure returns before a phase runs, except the NaN guard (above): a failed estimate must not leave
        // computed phases behind, whose columns would print.
        if (e.prefill.computed || e.decode.computed) fail(w + ": a failed estimate has computed phases");
        return;
    }
    for (const moe::PhaseResult* p : {&e.prefill, &e.decode}) {
        if (!p->computed) continue;
        if (!(p->step_ms > 0)) fail(w + ": step_ms is not positive");
        for (const moe::LayerGroup& g : p->groups) check_finite(g.time_us, w + ": group '" + g.label.str() + "' time_us");
    }
    for (const moe::OpRecord& o : e.ops) {
        const std::string op = w + ": op " + o.name;
        check_finite(o.time_us, op + " time_us");
        check_finite(o.exposed_us, op + " exposed_us");
        check_finite(o.flops, op + " flops");
        check_finite(o.weight_bytes, op + " weight_bytes");
        check_finite(o.activation_bytes, op + " activation_bytes");
        check_finite(o.comm_bytes, op + " comm_bytes");
        check_finite(o.efficiency, op + " efficiency");
        check_finite(o.count, op + " count");
        if (o.time_us < 0 || o.exposed_us < 0 || o.flops < 0 || o.weight_bytes < 0 || o.activation_bytes < 0 ||
            o.comm_bytes < 0)
            fail(op + ": a negative time or count");
    }
    const moe::MemoryResult& m = e.memory;
    for (double v : {m.weights_bytes, m.kv_cache_bytes, m.activation_bytes, m.workspace_bytes, m.comm_buffer_bytes,
                     m.reserved_bytes, m.total_bytes, m.capacity_bytes, m.kv_bytes_per_token, m.max_batch,
                     m.max_context, m.cluster_max_batch})
        if (!(v >= 0)) fail(w + ": a memory number is negative or NaN");
}

// The CLI prints estimate_to_json(e).dump(); it must never throw (invalid UTF-8 in a message would). The per-operator
// part is numbers and fixed names, and the most expensive thing a fuzz run does: `full` says whether to include it.
inline void check_json(const moe::Estimate& e, bool full) {
    if (full) (void)moe::estimate_to_json(e).dump();
    nlohmann::json j = moe::estimate_to_flat_json(e);
    for (const moe::Issue& i : e.errors) j["errors"].push_back({{"path", i.path}, {"message", i.message}});
    j["warnings"] = e.warnings;
    (void)j.dump();
}

}  // namespace fuzz
