// tables_moe.cpp — measured routed-expert MoE layers (bench_data/moe/<family>/*.csv, distilled from AIConfigurator's
// SGLang moe_perf by scripts/distill_aic.py): loading and the latency lookup (Tables::moe_layer, tables.h).
//
//   dtype,hidden,inter,topk,experts,tp,ep,tokens,latency_us        (long: one token count per row), or
//   dtype,hidden,inter,topk,experts,tp,ep,us_at_1,us_at_4,...    (wide: one key per row, a column per token count;
//   nvfp4,6144,2048,8,256,8,1,41.2,44.9,...                         an empty cell is a count not measured)
//
// One latency: one MoE layer's routed experts on one GPU of a moe_tp x ep layout (token permutation, gate/up GEMM,
// activation, down GEMM, weighted combine), `tokens` entering the layer across the EP group, balanced routing. The
// distilled tables are wide (the key is written once per series: half the gzip size of the long form). The file's
// name says which kernel path it measured (MoeKernel, tables.h): `*deepep_prefill.csv` / `*deepep_decode.csv` are
// DeepEP's contiguous / masked expert compute (AIC's wideep collector), `*flashinfer_cutlass.csv` vLLM's FlashInfer
// CUTLASS fused MoE, `*triton.csv` SGLang's Triton fused MoE alone, `trtllm_*.csv` TensorRT-LLM's own fused MoE, any
// other name the engine's fused MoE.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include "core/base/csv_cells.h"
#include "core/base/json_util.h"
#include "core/data/tables.h"
#include "core/data/tables_store.h"
#include "core/base/set_cache.h"

namespace moe {

namespace {

using Key = std::tuple<const FamilyRef*, int, int, int, int, int, int, int, int>;  // family, kernel, dtype, h, i, k, e, tp, ep

Key key_of(const MoeSeries& s) {
    return {s.ref, int(s.kernel), int(s.dtype), s.hidden, s.inter, s.top_k, s.experts, s.tp, s.ep};
}

// The kernel a file measured, from its name (bench_data/README.md): `..._deepep_prefill.csv`, `..._deepep_decode.csv`,
// `..._flashinfer_cutlass.csv`, `..._triton.csv`, `trtllm_...csv`, anything else the engine's fused MoE.
MoeKernel kernel_of(const std::string& path) {
    auto ends = [&](std::string_view tail) {
        return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends("deepep_prefill.csv")) return MoeKernel::deepep_contiguous;
    if (ends("deepep_decode.csv")) return MoeKernel::deepep_masked;
    if (ends("flashinfer_cutlass.csv")) return MoeKernel::flashinfer_cutlass;
    if (ends("triton.csv")) return MoeKernel::triton;
    const size_t slash = path.rfind('/');
    if (path.compare(slash == std::string::npos ? 0 : slash + 1, 7, "trtllm_") == 0) return MoeKernel::trtllm;
    return MoeKernel::fused;
}

}  // namespace

bool Tables::load_moe_csv(const std::string& path, const FamilyRef& ref, std::string_view text, Issues& errors) {
    const std::vector<std::string_view> lines = detail::split_lines(text);
    if (lines.empty() || lines[0].empty()) {
        errors.push_back({path, "empty file"});
        return false;
    }
    static const char* const kCols[] = {"dtype", "hidden", "inter", "topk", "experts", "tp", "ep", "tokens", "latency_us"};
    int col[9];
    // the long form (a row per point: tokens, latency_us) or the wide one (a us_at_<tokens> column per token count;
    // tables_detail::WideForm, shared with the other kinds)
    tables_detail::WideForm wide;
    const auto header = detail::split_cells(lines[0]);
    {
        detail::find_columns(header, kCols, 9, col);
        if (!wide.parse(header, path, "tokens", 1e12, col[7] >= 0 || col[8] >= 0, errors)) return false;
        for (int i = 0; i < 9; ++i) {
            if (col[i] < 0 && !(i >= 7 && wide.on())) {
                errors.push_back({path + ":1", std::string("missing column '") + kCols[i] + "'"});
                return false;
            }
        }
    }
    std::map<Key, MoeSeries> series;
    const MoeKernel kernel = kernel_of(path);
    const size_t errors_before = errors.size();
    for (size_t i = 1; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        const auto cells = detail::split_cells(lines[i]);
        const std::string where = path + ":" + std::to_string(i + 1);
        auto cell = [&](int c) { return size_t(col[c]) < cells.size() ? cells[size_t(col[c])] : std::string_view(); };
        MoeSeries s;
        s.ref = &ref;
        s.kernel = kernel;
        if (!parse_dtype(cell(0), s.dtype)) {
            errors.push_back({where, "column 'dtype' is not a known format"});
            continue;
        }
        double v[8];
        bool ok = true;
        const int key_cols = wide.on() ? 7 : 9;
        for (int c = 1; c < key_cols && ok; ++c) {
            // shape and layout: whole numbers from 1 to 2^24; tokens and latency: positive and finite
            const double hi = c < 7 ? 16777216.0 : 1e12;
            if (!detail::cell_to_double(cell(c), v[c - 1]) || !(v[c - 1] > 0) || v[c - 1] > hi ||
                (c < 8 && v[c - 1] != std::floor(v[c - 1])) || (c < 7 && v[c - 1] < 1)) {
                errors.push_back({where, std::string("column '") + kCols[c] + "' is not a positive number in range"});
                ok = false;
            }
        }
        if (!ok) continue;
        s.hidden = int(v[0]);
        s.inter = int(v[1]);
        s.top_k = int(v[2]);
        s.experts = int(v[3]);
        s.tp = int(v[4]);
        s.ep = int(v[5]);
        MoeSeries& dst = series.emplace(key_of(s), s).first->second;
        auto add = [&](double tokens, double us) {
            if (std::find(dst.tokens.begin(), dst.tokens.end(), tokens) != dst.tokens.end()) {
                errors.push_back({where, "repeated token count for this key"});
                return;
            }
            dst.tokens.push_back(tokens);
            dst.us.push_back(us);
        };
        if (!wide.on()) {
            add(v[6], v[7]);
            continue;
        }
        std::vector<std::pair<double, double>> pts;
        if (!wide.points(cells, header, where, pts, errors)) continue;
        for (const auto& [tokens, us] : pts) {
            if (!(us > 0) || us > 1e12) {
                errors.push_back({where, "the latency at " + std::to_string(int64_t(tokens)) + " tokens is not a positive number in range"});
                break;
            }
            add(tokens, us);
        }
    }
    if (errors.size() != errors_before) return false;
    if (series.empty()) {
        errors.push_back({path, "no data rows"});
        return false;
    }
    if (kernel == MoeKernel::deepep_contiguous) {
        // Per received row: along a fixed count of tokens per rank r (>= 4096, past the launch floor) the expert work
        // per GPU is the same at ep and 2ep, the rows handed over double (r x ep -> r x 2ep); the rise per added row.
        std::vector<double> slopes;
        for (const auto& a : series)
            for (const auto& b : series) {
                const MoeSeries &x = a.second, &y = b.second;
                if (y.ep != 2 * x.ep || y.dtype != x.dtype || y.hidden != x.hidden || y.inter != x.inter ||
                    y.top_k != x.top_k || y.experts != x.experts || y.tp != x.tp)
                    continue;
                for (std::size_t i = 0; i < x.tokens.size(); ++i) {
                    const double r = x.tokens[i] / x.ep;
                    if (r < 4096) continue;
                    for (std::size_t j = 0; j < y.tokens.size(); ++j)
                        if (y.tokens[j] == r * y.ep) slopes.push_back((y.us[j] - x.us[i]) / (y.tokens[j] - x.tokens[i]));
                }
            }
        double row_us = 0;
        if (!slopes.empty()) {
            std::sort(slopes.begin(), slopes.end());
            row_us = std::max(0.0, slopes[slopes.size() / 2]);
        }
        for (auto& entry : series) entry.second.row_us = row_us;
    }
    // The file's series come out of the map in key order: one merge with moe_ (also in key order), where a later file's
    // series replaces an earlier one with its key. (An insert per series moved every series after it: quadratic in
    // the series, a third of a CLI start under AddressSanitizer.)
    std::vector<MoeSeries> merged;
    merged.reserve(moe_.size() + series.size());
    auto old = moe_.begin();
    for (auto& entry : series) {
        const Key& k = entry.first;
        MoeSeries& s = entry.second;
        detail::sort_series(s.tokens, {&s.us});
        s.log_tokens.clear();
        s.log_us.clear();
        for (double t : s.tokens) s.log_tokens.push_back(std::log(t));
        for (double u : s.us) s.log_us.push_back(std::log(u));
        s.path = path;
        for (; old != moe_.end() && key_of(*old) < k; ++old) merged.push_back(std::move(*old));
        if (old != moe_.end() && key_of(*old) == k) ++old;  // replaced by this file's
        merged.push_back(std::move(s));
    }
    for (; old != moe_.end(); ++old) merged.push_back(std::move(*old));
    moe_ = std::move(merged);
    // every series of the file is this family's and this kernel's (a replaced series had the same key, so no bit clears)
    static_assert(int(MoeKernel::trtllm) < 8, "moe_kernels_ holds a bit per MoeKernel");
    const int f = tables_detail::family_index(ref.family);
    if (f >= 0) moe_kernels_[f] = std::uint8_t(moe_kernels_[f] | 1u << int(kernel));
    gen_ = next_gen();  // moe_layer's per-thread results are keyed on it
    return true;
}

bool Tables::has_moe_kernel(std::string_view family, MoeKernel kernel) const {
    const int f = tables_detail::family_index(family);
    return f >= 0 && (moe_kernels_[f] >> int(kernel) & 1u) != 0;
}

MoeHit Tables::moe_layer(std::string_view family, Dtype dtype, int hidden, int inter, int top_k, int experts, int tp,
                         int ep, double tokens, MoeKernel kernel) const {
    MoeHit h;
    const FamilyRef* ref = family_ref(family);
    if (!ref || moe_.empty() || !(tokens > 0) || !std::isfinite(tokens)) return h;
    // The hit depends on the series (the table set) and the query alone: the last few are kept per thread (a prefill
    // chunk's tokens are the same whatever the prompt length; the key search and log-log interpolation are not free).
    struct Query {
        std::uint64_t gen = 0;
        const FamilyRef* ref = nullptr;
        int q[8] = {};
        bool operator==(const Query& o) const { return gen == o.gen && ref == o.ref && std::equal(q, q + 8, o.q); }
    };
    struct Point {
        Query shape;
        double tokens = 0;  // (tokens > 0 and finite: equal values are the same bits)
        bool operator==(const Point& o) const { return tokens == o.tokens && shape == o.shape; }
    };
    thread_local SetCache<Point, MoeHit, 1, 4> hits;
    const Query shape{gen_, ref, {int(kernel), int(dtype), hidden, inter, top_k, experts, tp, ep}};
    if (const MoeHit* hit = hits.find({shape, tokens})) return *hit;
    MoeHit& slot = hits.insert({shape, tokens});
    slot = MoeHit{};  // a query without a series, until found below
    // The series of a key (or none), kept per thread too: a decode step's tokens change with the batch, its key not.
    // A DeepEP table without this ep (AIC's b200 and gb200 have no EP8 row) reads its two neighbours at the same
    // tokens per rank, ep/2 at tokens/2 and 2ep at 2 tokens, and takes their geometric mean (log-linear in ep).
    struct Pick {
        const MoeSeries* exact = nullptr;
        const MoeSeries *lo = nullptr, *hi = nullptr;
    };
    thread_local SetCache<Query, Pick, 1, 4> series;
    auto at_ep = [&](int e) -> const MoeSeries* {
        const Key k{ref, int(kernel), int(dtype), hidden, inter, top_k, experts, tp, e};
        auto at = std::lower_bound(moe_.begin(), moe_.end(), k, [](const MoeSeries& a, const Key& b) { return key_of(a) < b; });
        return at == moe_.end() || key_of(*at) != k ? nullptr : &*at;
    };
    Pick pick;
    if (const Pick* found = series.find(shape)) {
        pick = *found;
    } else {
        pick.exact = at_ep(ep);
        const bool deepep = kernel == MoeKernel::deepep_contiguous || kernel == MoeKernel::deepep_masked;
        if (!pick.exact && deepep && ep >= 2 && ep % 2 == 0) {
            pick.lo = at_ep(ep / 2);
            pick.hi = at_ep(ep * 2);
            if (!pick.lo || !pick.hi) pick.lo = pick.hi = nullptr;
        }
        series.insert(shape) = pick;
    }
    bool exact = false;
    if (pick.exact) {
        const MoeSeries* it = pick.exact;
        h.found = true;
        h.table = it->path.c_str();
        // below the first point the first point's time (a kernel has a floor); past the last its time per token
        h.latency_us = detail::loglog_at(it->tokens, it->log_tokens, it->us, it->log_us, tokens, exact);
        h.source = exact ? Source::measured : Source::interpolated;
        h.row_us = it->row_us;
    } else if (pick.lo) {
        bool e1 = false, e2 = false;
        const double a = detail::loglog_at(pick.lo->tokens, pick.lo->log_tokens, pick.lo->us, pick.lo->log_us, tokens / 2, e1);
        const double b = detail::loglog_at(pick.hi->tokens, pick.hi->log_tokens, pick.hi->us, pick.hi->log_us, tokens * 2, e2);
        h.found = true;
        h.table = pick.lo->path.c_str();
        h.latency_us = std::sqrt(a * b);
        h.source = Source::interpolated;
        h.row_us = std::sqrt(pick.lo->row_us * pick.hi->row_us);
    } else {
        return h;
    }
    slot = h;
    return h;
}

}  // namespace moe
