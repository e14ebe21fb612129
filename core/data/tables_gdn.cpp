// tables_gdn.cpp — measured Gated DeltaNet prefill kernels (bench_data/gdn/<family>/*.csv, distilled from
// AIConfigurator's SGLang linear_attention gdn_perf by scripts/distill_aic.py): loading and the lookup
// (Tables::gdn_prefill, tables.h).
//
//   k_heads,v_heads,k_dim,v_dim,tokens,conv_us,core_us
//   2,8,128,128,1024,4.825,69.67
//
// One row: one sequence of `tokens` through one layer's causal conv (causal_conv1d_fn) and chunked gated delta rule
// (chunk_gated_delta_rule) on one GPU holding `k_heads` key and `v_heads` value heads.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "core/base/csv_cells.h"
#include "core/data/tables.h"

namespace moe {

namespace {

using Key = std::tuple<const FamilyRef*, int, int, int, int>;  // family, k heads, v heads, k dim, v dim

Key key_of(const GdnSeries& s) { return {s.ref, s.k_heads, s.v_heads, s.k_dim, s.v_dim}; }

}  // namespace

bool Tables::load_gdn_csv(const std::string& path, const FamilyRef& ref, std::string_view text, Issues& errors) {
    const std::vector<std::string_view> lines = detail::split_lines(text);
    if (lines.empty() || lines[0].empty()) {
        errors.push_back({path, "empty file"});
        return false;
    }
    static const char* const kCols[] = {"k_heads", "v_heads", "k_dim", "v_dim", "tokens", "conv_us", "core_us"};
    constexpr int kN = 7;
    int col[kN];
    detail::find_columns(detail::split_cells(lines[0]), kCols, kN, col);
    for (int i = 0; i < kN; ++i)
        if (col[i] < 0) {
            errors.push_back({path + ":1", std::string("missing column '") + kCols[i] + "'"});
            return false;
        }
    std::map<Key, GdnSeries> series;
    const size_t errors_before = errors.size();
    for (size_t i = 1; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        const auto cells = detail::split_cells(lines[i]);
        const std::string where = path + ":" + std::to_string(i + 1);
        auto cell = [&](int c) { return size_t(col[c]) < cells.size() ? cells[size_t(col[c])] : std::string_view(); };
        double v[kN];
        bool ok = true;
        for (int c = 0; c < kN && ok; ++c) {
            // heads and dims: whole numbers from 1 to 2^16; tokens and latencies: positive and finite
            const double hi = c < 4 ? 65536.0 : 1e12;
            if (!detail::cell_to_double(cell(c), v[c]) || !(v[c] > 0) || v[c] > hi || (c < 4 && v[c] != std::floor(v[c]))) {
                errors.push_back({where, std::string("column '") + kCols[c] + "' is not a positive number in range"});
                ok = false;
            }
        }
        if (!ok) continue;
        GdnSeries s;
        s.ref = &ref;
        s.k_heads = int(v[0]);
        s.v_heads = int(v[1]);
        s.k_dim = int(v[2]);
        s.v_dim = int(v[3]);
        GdnSeries& dst = series.emplace(key_of(s), s).first->second;
        if (std::find(dst.tokens.begin(), dst.tokens.end(), v[4]) != dst.tokens.end()) {
            errors.push_back({where, "repeated token count for this key"});
            continue;
        }
        dst.tokens.push_back(v[4]);
        dst.conv_us.push_back(v[5]);
        dst.core_us.push_back(v[6]);
    }
    if (errors.size() != errors_before) return false;
    if (series.empty()) {
        errors.push_back({path, "no data rows"});
        return false;
    }
    for (auto& entry : series) {
        const Key& k = entry.first;
        GdnSeries& s = entry.second;
        detail::sort_series(s.tokens, {&s.conv_us, &s.core_us});
        s.path = path;
        // a later file with the same key replaces the earlier series
        auto it = std::lower_bound(gdn_.begin(), gdn_.end(), k, [](const GdnSeries& a, const Key& b) { return key_of(a) < b; });
        if (it != gdn_.end() && key_of(*it) == k) *it = std::move(s);
        else gdn_.insert(it, std::move(s));
    }
    return true;
}

GdnHit Tables::gdn_prefill(std::string_view family, int k_heads, int v_heads, int k_dim, int v_dim, double tokens) const {
    GdnHit h;
    const FamilyRef* ref = family_ref(family);
    if (!ref || gdn_.empty() || !(tokens > 0) || !std::isfinite(tokens)) return h;
    const Key k{ref, k_heads, v_heads, k_dim, v_dim};
    auto it = std::lower_bound(gdn_.begin(), gdn_.end(), k, [](const GdnSeries& a, const Key& b) { return key_of(a) < b; });
    if (it == gdn_.end() || key_of(*it) != k) return h;
    bool exact = false;
    h.found = true;
    h.table = it->path.c_str();
    h.conv_us = detail::loglog_at(it->tokens, it->conv_us, tokens, exact);
    h.core_us = detail::loglog_at(it->tokens, it->core_us, tokens, exact);
    h.source = exact ? Source::measured : Source::interpolated;
    return h;
}

}  // namespace moe
