// fuzz_hf_config.cpp — libFuzzer target: a HuggingFace config.json (a stranger's pasted model), parsed and estimated.
//
// Input: JSON text. It goes through every door a config comes in by: parse_hf_config directly, Catalog::add (the
// CLI's --presets-dir and the embedded presets), and set_path("model", ...) (an inline model in a scenario or a
// --set model=...). A config that parses is estimated on three layouts (one GPU; DP-attention + EP with two-batch
// overlap and MTP; TP + PP on a GPU without tables), each checked by fuzz::check_estimate.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_common.h"

namespace {

using nlohmann::json;

void check_spec(const moe::ModelSpec& m) {
    if (m.num_layers <= 0 || m.hidden <= 0 || m.num_heads <= 0 || m.vocab <= 0)
        fuzz::fail("parse_hf_config accepted a config without layers, hidden size, heads or vocabulary");
    if (m.layers.size() != std::size_t(m.num_layers)) fuzz::fail("layers[] does not match num_layers");
    // every layer has an FFN (MoE or dense), except the mixer-only blocks of a single-block hybrid (Nemotron-H's
    // Mamba-2 and attention blocks)
    int ffn_layers = 0;
    for (const moe::LayerDesc& l : m.layers) ffn_layers += l.ffn ? 1 : 0;
    if (m.n_moe_layers + m.n_dense_layers != ffn_layers) fuzz::fail("MoE + dense layers != layers with an FFN");
    if (!m.single_block_layers && ffn_layers != m.num_layers) fuzz::fail("a layer without an FFN outside a single-block hybrid");
    if (m.is_moe() && (m.top_k < 1 || m.top_k > m.num_experts)) fuzz::fail("top_k outside [1, experts]");
    for (double v : {m.total_params, m.active_params, m.active_compute_params, m.mtp_params})
        if (!std::isfinite(v) || v < 0) fuzz::fail("a parameter count is negative or not finite");
    if (m.active_params > m.total_params * (1 + 1e-12) + 1) fuzz::fail("more active than total parameters");
    const double kv = m.kv_bytes_per_request(4096, std::max(1, m.num_kv_heads), 2.0, 1.0);
    if (!std::isfinite(kv) || kv < 0) fuzz::fail("KV bytes per request negative or not finite");
}

// Layouts as field settings (applied after the model, so cross-field checks see the fuzzed model).
struct Setting {
    const char* path;
    json value;
};
const std::vector<std::vector<Setting>>& layouts() {
    static const std::vector<std::vector<Setting>> l = {
        {{"hardware", "h100-sxm"}},
        {{"hardware", "h800"}, {"parallel.dp", 8}, {"parallel.ep", 8}, {"workload.batch", 3},
         {"workload.prefill_tokens", 1000}, {"runtime.two_batch_overlap", true}, {"runtime.mtp_draft_tokens", 1},
         {"precision.kv_cache", "fp8"}},
        {{"hardware", "mi300x"}, {"parallel.tp", 2}, {"parallel.pp", 2}, {"workload.phase", "decode"},
         {"workload.context_len", 100000}},
    };
    return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const moe::Catalog& cat = moe::builtin_catalog();

    moe::Catalog mine;  // the --presets-dir door: text in, checked before anything is kept
    moe::Issues add_errors;
    const bool added = mine.add("models", "fuzzed", text, add_errors);
    fuzz::check_issues(add_errors, "Catalog::add");
    if (added && !mine.model("fuzzed")) fuzz::fail("Catalog::add succeeded but the model is missing");

    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return 0;
    moe::Issues errs;
    moe::ModelSpec m = moe::parse_hf_config(j, "model", errs);
    fuzz::check_issues(errs, "parse_hf_config");
    for (const moe::Issue& i : errs)
        if (i.path.rfind("model", 0) != 0) fuzz::fail("parse_hf_config: an issue that names no field: " + i.text());
    if (!errs.empty()) return 0;
    check_spec(m);
    if (j.is_object() && !added) fuzz::fail("parse_hf_config accepts what Catalog::add refuses: " + add_errors[0].text());

    for (const std::vector<Setting>& layout : layouts()) {
        moe::ParseResult r = moe::parse_scenario("{}", cat);
        moe::Issues set_errors;
        if (!moe::set_path(r.scenario, "model", j, cat, set_errors))
            fuzz::fail("set_path(model) refuses a config parse_hf_config accepts: " +
                       (set_errors.empty() ? std::string("?") : set_errors[0].text()));
        for (const Setting& st : layout)
            if (!moe::set_path(r.scenario, st.path, st.value, cat, set_errors)) fuzz::fail("a fixed layout does not set");
        moe::Estimate e = moe::estimate(r.scenario, moe::builtin_tables());
        fuzz::check_estimate(e, "hf config");
        fuzz::check_json(e, size % 16 == 0);
        // The same model through the catalog gives the same numbers (same spec, same path through the core).
        if (added) {
            moe::Scenario via_cat = r.scenario;
            moe::Issues e2;
            moe::set_path(via_cat, "model", "fuzzed", mine, e2);
            moe::Estimate e_cat = moe::estimate(via_cat, moe::builtin_tables());
            if (e_cat.ok != e.ok || (e.ok && e_cat.memory.total_bytes != e.memory.total_bytes))
                fuzz::fail("the catalog's copy of the model estimates differently");
        }
    }
    return 0;
}
