// cases.cpp — the table of validation cases (see cases.h).
//
// [SECTION] helpers: scenarios from JSON, ops from an estimate, DeepEP's benchmark byte counts
// [SECTION] DeepEP low-latency kernels (dispatch / combine latency, EP 8..256)
// [SECTION] DeepEP normal kernels (bottleneck bandwidth, intranode EP8 and internode EP16/32/64)
// [SECTION] DeepGEMM dense and grouped GEMMs
// [SECTION] FlashMLA and FlashAttention-3
// [SECTION] InferSim's measured column (end to end) and InferSim's own outputs (reference model)
// [SECTION] exclusions: CSV rows that are not cases, and why
#include "cases.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

namespace val {

const char* fit_group_name(FitGroup g) {
    switch (g) {
        case FitGroup::none: return "-";
        case FitGroup::fallback_gemm: return "fallback: dense GEMM";
        case FitGroup::fallback_grouped: return "fallback: grouped GEMM";
        case FitGroup::fallback_attn: return "fallback: attention";
        case FitGroup::comm_ll: return "comm: DeepEP low-latency";
        case FitGroup::comm_normal: return "comm: DeepEP normal";
        case FitGroup::e2e: return "end to end";
        case FitGroup::gemm_tables: return "GEMM tables: per-call overhead";
        case FitGroup::attn_tables: return "attention tables: tile schedule (shape only)";
    }
    return "?";
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] helpers
// ---------------------------------------------------------------------------------------------------------------

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

moe::Scenario scenario(const nlohmann::json& j) {
    moe::ParseResult r = moe::scenario_from_json(j, moe::builtin_catalog());
    if (!r.ok()) {  // a case we wrote is invalid: our bug, not a validation result
        std::fprintf(stderr, "moe-validate: bad case scenario %s: %s\n", j.dump().c_str(), r.errors[0].text().c_str());
        std::exit(2);
    }
    return r.scenario;
}

moe::Scenario preset(const char* id) {
    const moe::CatalogEntry* e = moe::builtin_catalog().scenario(id);
    if (!e) {
        std::fprintf(stderr, "moe-validate: missing preset scenario %s\n", id);
        std::exit(2);
    }
    return scenario(e->json);
}

const moe::OpRecord* find_op(const moe::Estimate& e, const char* name) {
    for (const moe::OpRecord& o : e.ops)
        if (std::string_view(o.name) == name) return &o;
    return nullptr;
}

// Op time in microseconds (per occurrence: one layer, both micro-batches).
std::function<double(const moe::Estimate&)> op_time(const char* name) {
    return [name](const moe::Estimate& e) {
        const moe::OpRecord* o = find_op(e, name);
        return o ? o->time_us : kNaN;
    };
}
// Achieved TFLOPS of an op: its FLOPs over its time.
std::function<double(const moe::Estimate&)> op_tflops(const char* name) {
    return [name](const moe::Estimate& e) {
        const moe::OpRecord* o = find_op(e, name);
        return o && o->time_us > 0 ? o->flops / o->time_us * 1e-6 : kNaN;
    };
}
// Achieved HBM GB/s of an op: weight + activation bytes over its time.
std::function<double(const moe::Estimate&)> op_hbm_GBps(const char* name) {
    return [name](const moe::Estimate& e) {
        const moe::OpRecord* o = find_op(e, name);
        return o && o->time_us > 0 ? (o->weight_bytes + o->activation_bytes) / o->time_us * 1e-3 : kNaN;
    };
}
// `bytes` (a benchmark's own byte count) over an op's time, in GB/s.
std::function<double(const moe::Estimate&)> bytes_over_op(const char* name, double bytes) {
    return [name, bytes](const moe::Estimate& e) {
        const moe::OpRecord* o = find_op(e, name);
        return o && o->time_us > 0 ? bytes / o->time_us * 1e-3 : kNaN;
    };
}
std::function<double(const moe::Estimate&)> tokens_per_s(moe::Phase ph) {
    return [ph](const moe::Estimate& e) {
        const moe::PhaseResult& p = ph == moe::Phase::prefill ? e.prefill : e.decode;
        return p.computed ? p.tokens_per_s_per_gpu : kNaN;
    };
}

// P(a given set of `m` of `n` items gets none of `k` draws without replacement) = C(n-m, k) / C(n, k).
double p_miss(int n, int m, int k) {
    double p = 1;
    for (int i = 0; i < k; ++i) p *= double(n - m - i) / double(n - i);
    return std::max(0.0, p);
}

// What the model lacks for some cases (Case::model_gap), named so the lead can act on each.
// The masked grouped-GEMM table is converted to uniform load when loaded (tables.cpp, masked_uniform_us). What keeps
// the 2 x 512 case outside its tolerance:
const char* const kMissMaskedSplit =
    "InferSim's masked table times one random split, int(expected_m * U(0.7, 1.3)) rows per group. The loader "
    "converts it to uniform load using the expected wave count over the splits that match the row's recorded total. "
    "Up projection: 983 rows over 2 groups, 2.64 expected waves against 2 uniform. If the timed draw had a group "
    "above 512 rows (3 waves, p = 0.64), the case would be 884 TFLOPS (-11%). Down projection: 727 TFLOPS after the "
    "conversion against the README's 916. The table's down rows already run 12% below the README at 1 x 1024, where "
    "no wave changes. InferSim times the later m_grouped_fp8_gemm_nt_masked 1D2D kernel; the README times the "
    "February 2025 kernel";
const char* const kGapMaskedSplit =
    "per-group row counts of the masked table's timed draw: only their total is recorded, so the uniform-load "
    "conversion uses an expected wave count. Also missing: a masked grouped-GEMM table of the README's DeepGEMM build";
const char* const kGapFlashInfer =
    "MLA decode tables are FlashInfer's MLA kernel, whose compute side peaks at 563 TFLOPS on H800 (0.57 of peak); "
    "FlashMLA, which SGLang uses for DeepSeek on Hopper, reaches 660 when compute-bound. A FlashMLA table would close "
    "it";

std::string fixed(double v, int decimals) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}

// InferSim's per-operator times for its two-batch-overlap DeepSeek-V3 runs, composed our way (see Case).
// Decode (InferSim: 2 x max(attention, MoE + dispatch + combine) per layer, i.e. attention compute hidden under
// MoE compute): our four slots per layer, two_batch_overlap_slots(). Prefill (InferSim: four max() slots with an SM
// ratio): seed 000 §5.3, two_batch_overlap_seed(), compute slowed by the SMs DeepEP takes. Both: 61 layers, our
// per-step overhead instead of InferSim's fixed 30 / 5 ms.
void attach_policy_normalised(Case& c, const std::string& file) {
    const int layers = 61;
    if (file == "dsv3_decode_h800_ep128.txt") {
        c.infersim_ops = {{"Attn core latency (us):", 184.48},   {"Q_down_proj latency (us):", 10.70},
                          {"Q_up_proj latency (us):", 20.38},     {"KV_down_proj latency (us):", 9.31},
                          {"bmm_q_wk latency (us):", 17.09},      {"bmm_o_wv latency (us):", 58.87},
                          {"O_proj latency (us):", 50.46},        {"Routed experts/FFN latency (us):", 65.07},
                          {"Experts loading latency (us):", 29.89}, {"Shared expert latency (us):", 27.49},
                          {"Comm before MoE/FFN (us):", 85.45},   {"Comm after MoE/FFN (us):", 170.90}};
        const auto ops = c.infersim_ops;
        const double tokens = 2 * 64;  // two micro-batches of --decode-bs 64
        c.policy_normalised = [ops, tokens, layers](const moe::Calibration& cal) {
            auto v = [&](size_t i) { return ops[i].second; };
            const double pre = v(0) + v(1) + v(2) + v(3) + v(4) + v(5) + v(6);
            const double post = std::max(v(7), v(8)) + v(9);
            const double layer_us = moe::two_batch_overlap_slots(pre, post, v(10), v(11));
            return tokens / ((layers * layer_us / 1000.0 + cal.decode_overhead_ms) / 1000.0);
        };
    } else if (file == "dsv3_prefill_h800_ep32.txt") {
        c.infersim_ops = {{"Attn core latency (us):", 1198.64},   {"Q_down_proj latency (us):", 126.80},
                          {"Q_up_proj latency (us):", 458.25},     {"KV_down_proj latency (us):", 63.34},
                          {"bmm_q_wk latency (us):", 101.38},      {"bmm_o_wv latency (us):", 191.05},
                          {"O_proj latency (us):", 1279.64},       {"Routed experts latency (us):", 4257.82},
                          {"Experts loading latency (us):", 119.58}, {"Shared expert latency (us):", 506.27},
                          {"Comm before MoE/FFN (us):", 4443.36},  {"Comm after MoE/FFN (us):", 8886.72}};
        const auto ops = c.infersim_ops;
        const double tokens = 2 * 8192, prompts_per_mb = 2;  // InferSim: attention core per 4096-token prompt
        const double sm_share = std::max(0.05, 1.0 - double(c.scenario.runtime.comm_sms) / c.scenario.gpu.sm_count);
        c.policy_normalised = [ops, tokens, prompts_per_mb, sm_share, layers](const moe::Calibration& cal) {
            auto v = [&](size_t i) { return ops[i].second; };
            const double attn = prompts_per_mb * v(0) + v(1) + v(2) + v(3) + v(4) + v(5) + v(6);
            const double moe_us = std::max(v(7), v(8)) + v(9);
            const double layer_us = moe::two_batch_overlap_seed((attn + moe_us) / sm_share, v(10), v(11));
            return tokens / ((layers * layer_us / 1000.0 + cal.prefill_overhead_ms) / 1000.0);
        };
    }
}

}  // namespace

// DeepEP tests/test_intranode.py: top-k of `experts` uniform scores; a token is received once by every rank that
// holds one of its experts (the sender included): NVL bytes = received tokens x hidden x bytes.
double deepep_intranode_ranks(int ranks, int experts, int top_k) {
    return ranks * (1.0 - p_miss(experts, experts / ranks, top_k));
}

// DeepEP tests/legacy/test_internode.py: scores grouped by node, the `topk_groups` nodes with the largest maximum
// kept, then top-k experts among them; RDMA bytes = tokens x distinct nodes (the local node included) x hidden x
// bytes. With topk_groups == nodes this is uniform sampling (closed form); otherwise the group limit makes nearly
// every kept node receive a token, which we count by a fixed-seed simulation (only ranks of iid scores matter).
double deepep_internode_nodes(int nodes, int experts, int top_k, int topk_groups) {
    const int per = experts / nodes;
    if (topk_groups >= nodes) return nodes * (1.0 - p_miss(experts, per, top_k));
    std::mt19937 rng(12345);
    const int trials = 20000;
    std::vector<double> s(size_t(experts), 0.0);
    std::vector<std::pair<double, int>> cand;
    std::vector<std::pair<double, int>> gmax(static_cast<size_t>(nodes), {0.0, 0});
    double total = 0;
    for (int t = 0; t < trials; ++t) {
        for (double& x : s) x = double(rng()) / 4294967296.0;
        for (int g = 0; g < nodes; ++g) {
            double m = 0;
            for (int i = 0; i < per; ++i) m = std::max(m, s[size_t(g * per + i)]);
            gmax[size_t(g)] = {m, g};
        }
        std::partial_sort(gmax.begin(), gmax.begin() + topk_groups, gmax.end(), std::greater<>());
        cand.clear();
        for (int j = 0; j < topk_groups; ++j)
            for (int i = 0; i < per; ++i) cand.push_back({s[size_t(gmax[size_t(j)].second * per + i)], gmax[size_t(j)].second});
        std::partial_sort(cand.begin(), cand.begin() + top_k, cand.end(), std::greater<>());
        unsigned long long seen = 0;
        for (int i = 0; i < top_k; ++i) seen |= 1ull << cand[size_t(i)].second;
        total += __builtin_popcountll(seen);
    }
    return total / trials;
}

moe::Estimate run(const Case& c, const moe::Tables& tables) { return moe::estimate(c.scenario, tables); }

double predict(const Case& c, const moe::Tables& tables) {
    moe::Estimate e = run(c, tables);
    if (!e.ok) return kNaN;
    return c.extract(e);
}

std::vector<Case> build_cases() {
    std::vector<Case> out;
    using nlohmann::json;

    // -----------------------------------------------------------------------------------------------------------
    // [SECTION] DeepEP low-latency kernels
    // DeepEP docs/legacy.md (same table in README.md @2be0d4f8), "V1 final" rows (2025-06-05: LL kernels forward
    // over NVLink inside a node, PR #173). Setup: H800, one CX7 400 Gb/s NIC per GPU, 128 tokens per rank, hidden
    // 7168, top-8, FP8 dispatch, BF16 combine, no overlap. Predicted: the comm.dispatch / comm.combine op of a
    // DeepSeek-V3 decode step at dp = ep = N, batch 128, deepep_low_latency, no two-batch overlap.
    // -----------------------------------------------------------------------------------------------------------
    {
        const char* cite = "DeepEP docs/legacy.md @dd758caf, low-latency table (V1 final, 2025-06-05)";
        struct Row { int ep, line_d, line_c; double disp_us, comb_us; };
        const Row rows[] = {{8, 10, 12, 77, 114},    {16, 14, 16, 118, 195}, {32, 18, 20, 155, 273},
                            {64, 22, 24, 173, 314},  {128, 26, 28, 192, 369}, {256, 30, 32, 194, 360}};
        for (const Row& r : rows) {
            json j = {{"model", "deepseek-v3"}, {"hardware", "h800"},
                      {"parallel", {{"tp", 1}, {"dp", r.ep}, {"ep", r.ep}}},
                      {"workload", {{"phase", "decode"}, {"batch", 128}, {"prompt_len", 4096}, {"output_len", 1024}}},
                      {"runtime", {{"a2a_backend", "deepep_low_latency"}, {"two_batch_overlap", false}}}};
            for (int which = 0; which < 2; ++which) {
                Case c;
                const bool d = which == 0;
                c.id = std::string("deepep.ll.") + (d ? "dispatch" : "combine") + ".ep" + std::to_string(r.ep);
                c.set = "DeepEP low-latency (decode)";
                c.what = std::string(d ? "dispatch" : "combine") + " latency, EP" + std::to_string(r.ep) +
                         ", 128 tokens/rank, hidden 7168, top-8, " + (d ? "FP8" : "BF16");
                c.citation = std::string(cite) + ", CSV line " + std::to_string(d ? r.line_d : r.line_c);
                c.rows = {{d ? r.line_d : r.line_c, d ? r.disp_us : r.comb_us}};
                c.measured = d ? r.disp_us : r.comb_us;
                c.unit = "us";
                c.tolerance = 0.20;
                c.fit = FitGroup::comm_ll;
                c.scenario = scenario(j);
                c.extract = op_time(d ? "comm.dispatch" : "comm.combine");
                out.push_back(std::move(c));
            }
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // [SECTION] DeepEP normal kernels
    // Same table source, V1 final rows (after the 2025-04-22 IBGDA / multi-QP update). 4096 tokens per rank, 24
    // SMs. DeepEP's "bottleneck bandwidth" is its benchmark's byte count over the kernel time (notify excluded):
    // intranode = tokens each rank receives (itself included) x hidden x bytes; internode = tokens x distinct
    // destination nodes (the local one included: a "logical" count) x hidden x bytes, with routing limited to
    // min(nodes, 4) node groups. Predicted: that same byte count over our comm.dispatch / comm.combine time of a
    // DeepSeek-V3 prefill of 4096 tokens per rank at dp = ep = N, deepep_normal, no overlap.
    // -----------------------------------------------------------------------------------------------------------
    {
        const char* cite = "DeepEP docs/legacy.md @dd758caf, normal-kernel table (V1 final, after 2025-04-22)";
        struct Row { int ep, line_d, line_c; double disp, comb; };
        const Row rows[] = {{8, 2, 3, 153, 158}, {16, 4, 5, 43, 43}, {32, 6, 7, 58, 57}, {64, 8, 9, 51, 50}};
        const double tokens = 4096, hidden = 7168, fp8 = 1.0 + 4.0 / 128.0, bf16 = 2.0;
        for (const Row& r : rows) {
            const bool intra = r.ep <= 8;
            const int nodes = r.ep / 8;
            const double copies = intra ? deepep_intranode_ranks(r.ep, 256, 8) : deepep_internode_nodes(nodes, 256, 8, std::min(nodes, 4));
            // DeepEP's benchmark routes with groups = nodes and min(nodes, 4) groups per token
            // (tests/test_internode.py), not DeepSeek-V3's 8 groups / 4: give the model that routing.
            json model = moe::builtin_catalog().models()[0].json;
            for (const auto& m : moe::builtin_catalog().models())
                if (m.id == "deepseek-v3") model = m.json;
            model["n_group"] = std::max(1, nodes);
            model["topk_group"] = std::max(1, std::min(nodes, 4));
            json j = {{"model", model}, {"hardware", "h800"},
                      {"parallel", {{"tp", 1}, {"dp", r.ep}, {"ep", r.ep}}},
                      {"workload", {{"phase", "prefill"}, {"prefill_tokens", 4096}, {"prompt_len", 4096}}},
                      {"runtime", {{"a2a_backend", "deepep_normal"}, {"two_batch_overlap", false}}}};
            for (int which = 0; which < 2; ++which) {
                Case c;
                const bool d = which == 0;
                c.id = std::string("deepep.normal.") + (d ? "dispatch" : "combine") + ".ep" + std::to_string(r.ep);
                c.set = "DeepEP normal (prefill)";
                c.what = std::string(d ? "dispatch" : "combine") + " bottleneck bandwidth, EP" + std::to_string(r.ep) +
                         (intra ? " intranode (NVLink)" : " internode (RDMA)") + ", 4096 tokens, " + (d ? "FP8" : "BF16") +
                         "; DeepEP bytes = tokens x " + fixed(copies, 2) + (intra ? " ranks" : " nodes") + " x 7168 x " +
                         (d ? "1.03" : "2");
                c.citation = std::string(cite) + ", CSV line " + std::to_string(d ? r.line_d : r.line_c);
                c.rows = {{d ? r.line_d : r.line_c, d ? r.disp : r.comb}};
                c.measured = d ? r.disp : r.comb;
                c.unit = "GB/s";
                c.tolerance = 0.20;
                c.fit = FitGroup::comm_normal;
                c.scenario = scenario(j);
                c.extract = bytes_over_op(d ? "comm.dispatch" : "comm.combine", tokens * copies * hidden * (d ? fp8 : bf16));
                out.push_back(std::move(c));
            }
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // [SECTION] DeepGEMM dense GEMMs (FP8, 1x128 / 128x128 block scaling, BF16 out), H800 SXM5
    // Shapes are DeepSeek-V3's projections without TP, so each is an op of a DeepSeek-V3 forward of M tokens on one
    // GPU (tp = dp = ep = 1): N=2112,K=7168 attn.qkv_a_proj; 24576,1536 attn.q_b_proj; 32768,512 attn.kv_b_proj;
    // 7168,16384 attn.o_proj; 4096,7168 moe.shared_up; 7168,2048 moe.shared_down. Predicted TFLOPS = op FLOPs /
    // op time. M=64/128: README @a6d97a1c (values unchanged through 2025-04-09); M=4096: the 2025-04-09 table.
    // -----------------------------------------------------------------------------------------------------------
    {
        struct Shape { int n, k; const char* op; };
        const Shape shapes[] = {{2112, 7168, "attn.qkv_a_proj"}, {24576, 1536, "attn.q_b_proj"}, {32768, 512, "attn.kv_b_proj"},
                                {7168, 16384, "attn.o_proj"},    {4096, 7168, "moe.shared_up"},  {7168, 2048, "moe.shared_down"}};
        struct Table { int m; int first_line; const char* cite; double tflops[6]; };
        const Table tables[] = {
            {64, 76, "DeepGEMM README.md @a6d97a1c, normal GEMM table (2025-02-25, unchanged to 2025-04-09)", {206, 289, 219, 336, 287, 295}},
            {128, 94, "DeepGEMM README.md @a6d97a1c, normal GEMM table (2025-02-25, unchanged to 2025-04-09)", {352, 535, 358, 645, 533, 510}},
            {4096, 160, "DeepGEMM README.md @327ec92f, normal GEMM table (2025-04-09)", {1127, 1212, 775, 1520, 1410, 1168}},
        };
        for (const Table& t : tables) {
            json j = {{"model", "deepseek-v3"}, {"hardware", "h800"},
                      {"parallel", {{"tp", 1}, {"dp", 1}, {"ep", 1}}},
                      {"workload", {{"phase", "prefill"}, {"prefill_tokens", t.m}, {"prompt_len", t.m}}},
                      {"runtime", {{"a2a_backend", "none"}}}};
            moe::Scenario s = scenario(j);
            for (int i = 0; i < 6; ++i) {
                const Shape& sh = shapes[i];
                const int line = t.first_line + 3 * i;
                Case c;
                c.id = "deepgemm.dense.m" + std::to_string(t.m) + ".n" + std::to_string(sh.n) + ".k" + std::to_string(sh.k);
                c.set = "DeepGEMM dense GEMM";
                c.what = "FP8 GEMM M=" + std::to_string(t.m) + " N=" + std::to_string(sh.n) + " K=" + std::to_string(sh.k) +
                         " (" + sh.op + ")";
                c.citation = std::string(t.cite) + ", CSV line " + std::to_string(line);
                c.rows = {{line, t.tflops[i]}};
                c.measured = t.tflops[i];
                c.unit = "TFLOPS";
                c.tolerance = 0.15;
                c.fit = FitGroup::fallback_gemm;
                c.fit2 = FitGroup::gemm_tables;
                if (sh.n == 32768 || sh.n == 2112)
                    c.miss_note = "Shape not in the H800 GEMM table: the nearest measured shape's efficiency is moved "
                                  "through DeepGEMM's tiling (k-iterations per tile, waves); the tiling model is "
                                  "approximate (block sizes follow the README-era heuristic, one fixed cost per tile).";
                else if (t.m <= 128)
                    c.miss_note = "The table latency minus the fitted mean per-call overhead (gemm_table_overhead_us) leaves a "
                                  "residual: InferSim's per-call overhead varies from 3.5 to 10 us by shape, one constant "
                                  "cannot take each shape's own off.";
                c.scenario = s;
                c.extract = op_tflops(sh.op);
                out.push_back(std::move(c));
            }
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // DeepGEMM grouped GEMMs (DeepSeek-V3 experts: up N=4096 K=7168, down N=7168 K=2048). Our moe.routed_experts op
    // is up + down together, so a case combines the two published rows of one layout into one throughput:
    // (F_up + F_down) / (F_up / r_up + F_down / r_down), F_up = 2 F_down. Groups x m tokens per group map to
    // local experts = 256 / ep and tokens per expert = 8 T / groups (dp = ep).
    // -----------------------------------------------------------------------------------------------------------
    {
        struct G { int groups, m; bool masked; int line_up, line_down; double up, down; const char* cite; };
        const G gs[] = {
            {4, 8192, false, 178, 181, 1346, 1214, "DeepGEMM README.md @327ec92f, grouped contiguous table (2025-03-25, unchanged 2025-04-09)"},
            {8, 4096, false, 184, 187, 1346, 1214, "DeepGEMM README.md @327ec92f, grouped contiguous table (2025-03-25, unchanged 2025-04-09)"},
            {1, 1024, true, 142, 145, 1233, 925, "DeepGEMM README.md @a6d97a1c, grouped masked table (2025-02-25, unchanged to 2025-04-09)"},
            {2, 512, true, 148, 151, 1040, 916, "DeepGEMM README.md @a6d97a1c, grouped masked table (2025-02-25, unchanged to 2025-04-09)"},
            {4, 256, true, 154, 157, 932, 815, "DeepGEMM README.md @a6d97a1c, grouped masked table (2025-02-25, unchanged to 2025-04-09)"},
        };
        for (const G& g : gs) {
            const int ep = 256 / g.groups;
            const int T = g.m * g.groups / 8;
            json j = {{"model", "deepseek-v3"}, {"hardware", "h800"}, {"parallel", {{"tp", 1}, {"dp", ep}, {"ep", ep}}}};
            if (g.masked)
                j["workload"] = {{"phase", "decode"}, {"batch", T}, {"prompt_len", 4096}, {"output_len", 1024}};
            else
                j["workload"] = {{"phase", "prefill"}, {"prefill_tokens", T}, {"prompt_len", 4096}};
            j["runtime"] = {{"a2a_backend", g.masked ? "deepep_low_latency" : "deepep_normal"}, {"two_batch_overlap", false},
                            {"expert_layout", g.masked ? "masked" : "contiguous"}};
            Case c;
            c.id = std::string("deepgemm.grouped.") + (g.masked ? "masked." : "contiguous.") + std::to_string(g.groups) + "x" +
                   std::to_string(g.m);
            c.set = "DeepGEMM grouped GEMM";
            c.what = std::string(g.masked ? "masked" : "contiguous") + " grouped FP8 GEMM, " + std::to_string(g.groups) +
                     " groups x " + std::to_string(g.m) + " tokens, up + down combined (" + fixed(g.up, 0) + " / " +
                     fixed(g.down, 0) + " TFLOPS); DeepSeek-V3 EP" + std::to_string(ep) + ", " + std::to_string(T) + " tokens/GPU";
            c.citation = std::string(g.cite) + ", CSV lines " + std::to_string(g.line_up) + " + " + std::to_string(g.line_down);
            c.rows = {{g.line_up, g.up}, {g.line_down, g.down}};
            c.measured = 3.0 / (2.0 / g.up + 1.0 / g.down);
            c.unit = "TFLOPS";
            c.tolerance = 0.15;
            c.fit = FitGroup::fallback_grouped;
            // Masked rows are converted to uniform load when loaded. 1 x 1024 and 4 x 256 then land within 3%; 2 x 512
            // stays outside its tolerance.
            if (g.masked && g.groups == 2) {
                c.miss_note = kMissMaskedSplit;
                c.model_gap = kGapMaskedSplit;
            }
            c.scenario = scenario(j);
            c.extract = op_tflops("moe.routed_experts");
            out.push_back(std::move(c));
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // [SECTION] FlashMLA (dense MLA decode, H800 SXM5, CUDA 12.8). The README gives peaks, not configs; we take
    // the configs of its test script: batch 128, KV length 8192, d_k 576 / d_v 512, BF16 KV. Memory-bound: 16 query
    // heads per GPU (tp 8), one query per sequence. Compute-bound: 128 heads (tp 1), two queries per sequence (one
    // MTP draft token).
    // -----------------------------------------------------------------------------------------------------------
    {
        Case c;
        c.id = "flashmla.decode.bandwidth";
        c.set = "FlashMLA";
        c.what = "dense MLA decode, memory-bound: 16 heads/GPU, batch 128, KV 8192 (HBM GB/s of attn.core)";
        c.citation = "FlashMLA README.md @9241ae3e ('up to 3000 GB/s in memory-bound configuration'), CSV line 202";
        c.rows = {{202, 3000}};
        c.measured = 3000;
        c.unit = "GB/s";
        c.tolerance = 0.20;
        c.caveat = "a peak ('up to'); config from FlashMLA's test script";
        c.fit = FitGroup::fallback_attn;
        c.scenario = scenario({{"model", "deepseek-v3"}, {"hardware", "h800"}, {"parallel", {{"tp", 8}, {"dp", 1}, {"ep", 8}}},
                               {"workload", {{"phase", "decode"}, {"batch", 128}, {"context_len", 8192}}},
                               {"runtime", {{"a2a_backend", "deepep_low_latency"}}}});
        c.miss_note = "16 heads run memory-bound at the best streaming fraction of the H800 decode-attention tables "
                      "(FlashInfer MHA, 0.96 of HBM): above FlashMLA's 'up to 3000 GB/s' (0.90).";
        c.extract = op_hbm_GBps("attn.core");
        out.push_back(std::move(c));
    }
    {
        Case c;
        c.id = "flashmla.decode.compute";
        c.set = "FlashMLA";
        c.what = "dense MLA decode, compute-bound: 128 heads/GPU x 2 queries (MTP), batch 128, KV 8192 (TFLOPS of attn.core)";
        c.citation = "FlashMLA README.md @9241ae3e ('660 TFLOPS in computation-bound configuration', after 2025-04-22), CSV line 203";
        c.rows = {{203, 660}};
        c.measured = 660;
        c.unit = "TFLOPS";
        c.tolerance = 0.20;
        c.caveat = "a peak ('up to'); config from FlashMLA's test script";
        c.fit = FitGroup::fallback_attn;
        c.scenario = scenario({{"model", "deepseek-v3"}, {"hardware", "h800"}, {"parallel", {{"tp", 1}, {"dp", 8}, {"ep", 8}}},
                               {"workload", {{"phase", "decode"}, {"batch", 128}, {"context_len", 8192}}},
                               {"runtime", {{"a2a_backend", "deepep_low_latency"}, {"mtp_draft_tokens", 1}}}});
        c.model_gap = kGapFlashInfer;
        c.miss_note = "The table's kernel (FlashInfer) is slower than FlashMLA when compute-bound: 0.54 of peak at the "
                      "table's 128 heads against FlashMLA's 660 TFLOPS (0.67).";
        c.extract = op_tflops("attn.core");
        out.push_back(std::move(c));
    }

    // FlashAttention-3 forward, causal, FP16, H100 SXM5: the README chart (values read from its bar labels, marked
    // UNVERIFIED in the CSV). FA3 benchmark setup: 16k tokens in total (batch = 16k / seqlen), hidden 2048, heads =
    // 2048 / head dim. Modelled as a one-layer dense model on h100-sxm: attn.core TFLOPS (causal FLOPs = FA3's).
    {
        const char* cite = "flash-attention README.md -> assets/flash3_fp16_fwd.png @0251105a (chart bar labels)";
        struct Row { int d, first_line; double tf[6]; };
        const Row rows[] = {{64, 219, {197, 265, 371, 420, 460, 473}},
                            {128, 231, {292, 423, 521, 579, 602, 616}},
                            {256, 242, {286, 427, 537, 612, 628, 642}}};
        const int seqs[] = {512, 1024, 2048, 4096, 8192, 16384};
        for (const Row& r : rows) {
            const int heads = 2048 / r.d;
            json model = {{"model_type", "llama"}, {"hidden_size", 2048}, {"num_hidden_layers", 1},
                          {"num_attention_heads", heads}, {"num_key_value_heads", heads}, {"head_dim", r.d},
                          {"intermediate_size", 8192}, {"vocab_size", 32000}, {"torch_dtype", "float16"}};
            for (int i = 0; i < 6; ++i) {
                Case c;
                c.id = "fa3.causal.d" + std::to_string(r.d) + ".s" + std::to_string(seqs[i]);
                c.set = "FlashAttention-3 (H100)";
                c.what = "causal forward, head dim " + std::to_string(r.d) + ", " + std::to_string(heads) + " heads, seqlen " +
                         std::to_string(seqs[i]) + ", batch " + std::to_string(16384 / seqs[i]);
                c.citation = std::string(cite) + ", CSV line " + std::to_string(r.first_line + i);
                c.rows = {{r.first_line + i, r.tf[i]}};
                c.measured = r.tf[i];
                c.unit = "TFLOPS";
                c.tolerance = 0.25;
                c.caveat = "UNVERIFIED chart read (wider tolerance)";
                c.fit = FitGroup::fallback_attn;
                c.fit2 = FitGroup::attn_tables;
                c.miss_note = "Level: the H100 tables (BLIS, a 2025 FlashAttention build) run at 0.72-0.81 of peak per "
                              "useful tile, the chart's FA3 (the 2024 paper's build) at ~0.65; the chart values are "
                              "UNVERIFIED reads. The shape across sequence length and head dim (tile schedule, softmax "
                              "share at head dim 64) is fitted, the level is the tables'.";
                c.scenario = scenario({{"model", model}, {"hardware", "h100-sxm"},
                                       {"workload", {{"phase", "prefill"}, {"prefill_tokens", 16384}, {"prompt_len", seqs[i]}}}});
                c.extract = op_tflops("attn.core");
                out.push_back(std::move(c));
            }
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // [SECTION] InferSim README's measured column: end-to-end tokens/s per GPU, our preset scenarios of the same
    // setups (presets/scenarios/*.json say which).
    // -----------------------------------------------------------------------------------------------------------
    {
        const char* cite = "InferSim README.md @f2293dab, 'actual' column";
        struct Row { const char* preset; moe::Phase ph; int line; double tgs; const char* what; };
        const Row rows[] = {
            {"deepseek-v3-prefill-h800-ep32", moe::Phase::prefill, 190, 7839, "DeepSeek-V3 prefill, 32 H800, EP32, 16K tokens/GPU, TBO (deepseek-ai/profile-data)"},
            {"deepseek-v3-decode-h800-ep128", moe::Phase::decode, 192, 2324, "DeepSeek-V3 decode, 128 H800, EP128, 128 req/GPU, TBO, KV 4989 (profile-data)"},
            {"qwen3-30b-a3b-prefill-h20", moe::Phase::prefill, 194, 16594, "Qwen3-30B-A3B BF16 prefill, 1 H20, 16K tokens (SGLang)"},
            {"qwen3-30b-a3b-decode-h20-ep4", moe::Phase::decode, 196, 2749, "Qwen3-30B-A3B BF16 decode, 4 H20, DP4+EP4, batch 100, KV 5120 (SGLang)"},
            {"qwen3-8b-prefill-h20", moe::Phase::prefill, 198, 15061, "Qwen3-8B FP8 prefill, 1 H20, 16K tokens (SGLang)"},
            {"qwen3-8b-decode-h20", moe::Phase::decode, 200, 2682, "Qwen3-8B FP8 decode, 1 H20, batch 64, KV 5120 (SGLang)"},
        };
        for (const Row& r : rows) {
            Case c;
            c.id = std::string("e2e.") + r.preset;
            c.set = "End to end (InferSim measured)";
            c.what = std::string(r.what) + " [preset " + r.preset + "]";
            c.citation = std::string(cite) + ", CSV line " + std::to_string(r.line);
            c.rows = {{r.line, r.tgs}};
            c.measured = r.tgs;
            c.unit = "tokens/s/GPU";
            c.tolerance = 0.10;
            c.fit = FitGroup::e2e;
            c.scenario = preset(r.preset);
            c.extract = tokens_per_s(r.ph);
            out.push_back(std::move(c));
        }
    }

    // InferSim's own outputs (reference/infersim_runs, InferSim @f2293dab on its bench_data): the reference-model
    // cross-check. InferSim's TGS includes its fixed 30 ms per prefill / 5 ms per decode step and its 1024-based
    // byte units; see docs/validation.md for every deliberate difference.
    {
        struct Row { const char* file; const char* id; moe::Phase ph; double tgs; const char* what; nlohmann::json s; };
        auto with = [](const char* id, std::initializer_list<std::pair<const char*, nlohmann::json>> sets) {
            nlohmann::json j = moe::builtin_catalog().scenario(id)->json;
            for (auto& kv : sets) {
                std::string path = kv.first;
                const size_t dot = path.find('.');
                j[path.substr(0, dot)][path.substr(dot + 1)] = kv.second;
            }
            return j;
        };
        auto qwen235 = [](const char* phase) {
            return nlohmann::json{{"model", "qwen3-235b-a22b"}, {"hardware", "h20"},
                                  {"parallel", {{"tp", 1}, {"dp", 8}, {"ep", 8}}}, {"precision", {{"weights", "fp8"}}},
                                  {"workload", {{"phase", phase}, {"batch", 64}, {"prefill_tokens", 4096}, {"prompt_len", 4096}, {"output_len", 2048}}},
                                  {"runtime", {{"a2a_backend", "allgather"}}}};
        };
        const Row rows[] = {
            {"dsv3_prefill_h800_ep32.txt", "deepseek-v3-prefill-h800-ep32", moe::Phase::prefill, 9034,
             "DeepSeek-V3 prefill EP32, 2 x 8192 tokens/GPU, TBO", with("deepseek-v3-prefill-h800-ep32", {})},
            {"dsv3_decode_h800_ep128.txt", "deepseek-v3-decode-h800-ep128", moe::Phase::decode, 2675,
             "DeepSeek-V3 decode EP128, 2 x 64 req/GPU, TBO, KV 4989", with("deepseek-v3-decode-h800-ep128", {})},
            {"qwen3_30b_a3b_decode_h20_ep4.txt", "qwen3-30b-a3b-decode-h20-ep4", moe::Phase::decode, 3161,
             "Qwen3-30B-A3B decode, 4 H20, batch 100/GPU, KV 5120", with("qwen3-30b-a3b-decode-h20-ep4", {})},
            {"edge_dsv3_prefill_h800_ep32_notbo.txt", "deepseek-v3-prefill-h800-ep32 (8192 tokens, no TBO)", moe::Phase::prefill, 5788,
             "DeepSeek-V3 prefill EP32, 8192 tokens/GPU, no TBO",
             with("deepseek-v3-prefill-h800-ep32", {{"workload.prefill_tokens", 8192}, {"runtime.two_batch_overlap", false}})},
            {"edge_dsv3_decode_h800_ep128_notbo.txt", "deepseek-v3-decode-h800-ep128 (batch 64, no TBO)", moe::Phase::decode, 1341,
             "DeepSeek-V3 decode EP128, 64 req/GPU, no TBO",
             with("deepseek-v3-decode-h800-ep128", {{"workload.batch", 64}, {"runtime.two_batch_overlap", false}})},
            {"qwen3_30b_a3b_prefill_h20.txt", "qwen3-30b-a3b-prefill-h20", moe::Phase::prefill, 17252,
             "Qwen3-30B-A3B prefill, 1 H20, 16384 tokens", with("qwen3-30b-a3b-prefill-h20", {})},
            {"qwen3_8b_h20_fp8.txt", "qwen3-8b-prefill-h20", moe::Phase::prefill, 16328, "Qwen3-8B FP8 prefill, 1 H20, 16384 tokens",
             with("qwen3-8b-prefill-h20", {})},
            {"qwen3_8b_h20_fp8.txt", "qwen3-8b-decode-h20", moe::Phase::decode, 2581, "Qwen3-8B FP8 decode, 1 H20, batch 64",
             with("qwen3-8b-decode-h20", {})},
            // InferSim without --enable-deepep: DP attention over the world, experts EP over it, tokens all-gathered.
            {"edge_qwen3_235b_h20_ep8.txt", "qwen3-235b-a22b on 8 H20, dp 8 + ep 8, allgather", moe::Phase::prefill, 4051,
             "Qwen3-235B-A22B FP8 prefill, 8 H20, 4096 tokens/GPU", qwen235("prefill")},
            {"edge_qwen3_235b_h20_ep8.txt", "qwen3-235b-a22b on 8 H20, dp 8 + ep 8, allgather", moe::Phase::decode, 1463,
             "Qwen3-235B-A22B FP8 decode, 8 H20, batch 64/GPU, KV 5120", qwen235("decode")},
        };
        for (const Row& r : rows) {
            Case c;
            c.id = std::string("infersim.") + (r.ph == moe::Phase::prefill ? "prefill." : "decode.") + r.file;
            c.id = c.id.substr(0, c.id.size() - 4);
            c.set = "Reference model (InferSim outputs)";
            c.what = std::string(r.what) + " [" + r.id + "]";
            c.citation = std::string("reference/infersim_runs/") + r.file + " (InferSim @f2293dab), 'Throughput (TGS)'";
            c.measured = r.tgs;
            c.unit = "tokens/s/GPU";
            c.tolerance = 0.20;
            c.reference_model = true;
            c.scenario = scenario(r.s);
            attach_policy_normalised(c, r.file);
            const std::string f = r.file;
            if (f == "dsv3_prefill_h800_ep32.txt")
                c.miss_note = "Overlap policy (deliberate): seed 000 §5.3 exposes one dispatch and one combine per layer, "
                              "InferSim's four max() slots hide every transfer; composed our way, InferSim's own per-op "
                              "times give the policy-normalised value, within 3% of ours.";
            else if (f == "dsv3_decode_h800_ep128.txt")
                c.miss_note = "Overlap policy (deliberate): InferSim's decode TBO, 2 x max(attention, MoE + dispatch + "
                              "combine), hides one micro-batch's attention compute under the other's MoE compute on the "
                              "same GPU; composed with our four slots, InferSim's own per-op times land within 1% of ours.";
            else if (f == "edge_qwen3_235b_h20_ep8.txt" && r.ph == moe::Phase::decode)
                c.miss_note = "Per layer: no H20 decode table has 64 query / 4 KV heads, so we transfer the 32-4-128 table "
                              "(274 us) where InferSim falls back to its KV-read time (191 us); our all-gather + reduce-scatter "
                              "carry the unfitted NCCL constants (77 us against InferSim's 22 us); per step we add the LM head "
                              "(0.7 ms). InferSim's fixed 5 ms per step is above our fitted 1.7 ms.";
            else if (f == "edge_dsv3_prefill_h800_ep32_notbo.txt")
                c.miss_note = "Without two-batch overlap every transfer is exposed, and our DeepEP normal model sends a token "
                              "once per node it needs: DeepSeek-V3's node-limited routing (4 of 8 groups, 2 groups per node "
                              "at EP32) reaches 3.1 of 4 nodes, where InferSim charges every token-expert pair (top-8) over "
                              "RDMA; our exposed communication per layer is therefore smaller and our throughput higher.";
            else if (f == "edge_dsv3_decode_h800_ep128_notbo.txt")
                c.miss_note = "Without two-batch overlap the routed experts are exposed. InferSim costs them from its masked "
                              "grouped-GEMM table as timed: one random draw of int(expected_m x U(0.7, 1.3)) rows per group; "
                              "at EP128, batch 64, the up projection's 584 rows over 2 groups fill 5 m-blocks of 128 and run "
                              "2 waves where uniform load needs 4 blocks and 1. We convert the table to uniform load (up "
                              "50.6 -> 25.3 us per MoE layer), so our throughput is higher.";
            else if (f == "qwen3_30b_a3b_decode_h20_ep4.txt")
                c.miss_note = "Per layer we cost DeepEP low-latency dispatch + combine (2 x 39 us with the fitted latency) "
                              "where InferSim charges a 4 us all-reduce, and our batch-100 grouped GEMM is interpolated "
                              "(199 us) where InferSim snaps to a row (140 us); per step we add the LM head (0.5 ms) and "
                              "InferSim a fixed 5 ms (ours: the fitted 1.7 ms).";
            c.extract = tokens_per_s(r.ph);
            out.push_back(std::move(c));
        }
    }
    return out;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] exclusions
// -----------------------------------------------------------------------------------------------------------------
std::vector<Exclusion> exclusions() {
    return {
        {11, 33, "same timing as the latency case of its row: DeepEP computes this bandwidth as its byte count over that "
                 "latency, so its relative error is the latency's", "rdma_bandwidth"},
        {34, 65, "superseded: DeepEP V1 initial release (2025-02-24); the V1 final rows (after the 2025-04-22 IBGDA "
                 "update and the 2025-06-05 NVLink-aware low-latency kernels) are the cases", ""},
        {66, 75, "DeepEP V2 ElasticBuffer: a different kernel from the V1 normal / low-latency kernels the model costs; "
                 "the GPU model is not stated (SM90 / SM100) and its 'logical bandwidth' counts local-rank traffic "
                 "without a published byte count", ""},
        {76, 111, "speedup over DeepSeek's internal CUTLASS 3.6 kernels: relative to an unpublished baseline", "speedup"},
        {76, 111, "same timing as the TFLOPS case of its shape (DeepGEMM prints both from one kernel time)", "memory_bandwidth"},
        {112, 141, "superseded: DeepGEMM 2025-02-25 prefill (M=4096) and contiguous grouped numbers; the 2025-04-09 "
                   "table (CSV lines 160-189) is the case", ""},
        {142, 159, "speedup over DeepSeek's internal CUTLASS 3.6 kernels: relative to an unpublished baseline", "speedup"},
        {142, 159, "same timing as the TFLOPS case of its shape (DeepGEMM prints both from one kernel time)", "memory_bandwidth"},
        {160, 189, "speedup over DeepSeek's internal CUTLASS 3.6 kernels: relative to an unpublished baseline", "speedup"},
        {160, 189, "same timing as the TFLOPS case of its shape (DeepGEMM prints both from one kernel time)", "memory_bandwidth"},
        {191, 201, "InferSim's simulated value, not a measurement (the reference-model cross-check uses InferSim's own "
                   "outputs in reference/infersim_runs instead)", "TGS_simulated"},
        {204, 204, "superseded: FlashMLA initial release 580 TFLOPS (CUDA 12.6); 660 TFLOPS (CSV line 203) is the case", ""},
        {205, 210, "sparse MLA (DeepSeek-V3.2 DSA token-level sparse attention): not in the model", ""},
        {211, 211, "B200 dense MHA prefill 1460 TFLOPS 'as reported by NVIDIA': second-hand, shape not stated", ""},
        {212, 212, "a stated estimate (H800 clock-throttled peak), not a measurement", ""},
        {213, 247, "non-causal attention: the model's prefill attention is causal only (LLM prefill)", "non-causal"},
    };
}

}  // namespace val
