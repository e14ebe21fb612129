// csv_cells.h — the cell-level CSV parsing the bench_data table loaders (core/data: tables_load.cpp, tables_moe.cpp,
// tables_gdn.cpp) and a CSV trace (core/scenario/trace.cpp) share.
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace moe::detail {

// Split a CSV line into trimmed cells (spaces, tabs, CRs at either end; no quoting in our tables or traces).
inline std::vector<std::string_view> split_cells(std::string_view line) {
    std::vector<std::string_view> cells;
    while (true) {
        auto comma = line.find(',');
        std::string_view c = line.substr(0, comma);
        while (!c.empty() && (c.front() == ' ' || c.front() == '\t' || c.front() == '\r')) c.remove_prefix(1);
        while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.remove_suffix(1);
        cells.push_back(c);
        if (comma == std::string_view::npos) break;
        line.remove_prefix(comma + 1);
    }
    return cells;
}

// A file's lines, a trailing CR dropped from each.
inline std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return lines;
}

// The index of each of `n` named columns in a header's cells (-1: absent).
inline void find_columns(const std::vector<std::string_view>& header, const char* const* names, int n, int* col) {
    for (int i = 0; i < n; ++i) {
        col[i] = -1;
        for (std::size_t j = 0; j < header.size(); ++j)
            if (header[j] == names[i]) col[i] = int(j);
    }
}

// Sort the points of a series by x, carrying each y column along (the loaders' token series).
inline void sort_series(std::vector<double>& x, std::initializer_list<std::vector<double>*> ys) {
    std::vector<std::size_t> order(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    auto permute = [&](std::vector<double>& v) {
        std::vector<double> out;
        out.reserve(v.size());
        for (std::size_t i : order) out.push_back(v[i]);
        v.swap(out);
    };
    for (std::vector<double>* y : ys) permute(*y);
    permute(x);
}

// Interpolate y over ascending x log-log at t: below the first point its y, past the last y scaled linearly in t.
// exact = t sits on a point (within 1e-9). log_x(i) and log_y(i) give log(x[i]) and log(y[i]).
template <class LogX, class LogY>
inline double loglog_at(const std::vector<double>& x, const std::vector<double>& y, double t, bool& exact, LogX log_x,
                        LogY log_y) {
    exact = false;
    if (t <= x.front()) {
        exact = std::fabs(t - x.front()) <= 1e-9 * x.front();
        return y.front();
    }
    if (t >= x.back()) {
        exact = std::fabs(t - x.back()) <= 1e-9 * x.back();
        return y.back() * t / x.back();
    }
    const std::size_t hi = std::size_t(std::lower_bound(x.begin(), x.end(), t) - x.begin());
    if (std::fabs(t - x[hi]) <= 1e-9 * x[hi]) {
        exact = true;
        return y[hi];
    }
    const double f = (std::log(t) - log_x(hi - 1)) / (log_x(hi) - log_x(hi - 1));
    return std::exp(log_y(hi - 1) + f * (log_y(hi) - log_y(hi - 1)));
}
inline double loglog_at(const std::vector<double>& x, const std::vector<double>& y, double t, bool& exact) {
    return loglog_at(x, y, t, exact, [&](std::size_t i) { return std::log(x[i]); }, [&](std::size_t i) { return std::log(y[i]); });
}
// The same with the logs taken already (lx[i] = log(x[i]), ly[i] = log(y[i])): the same value.
inline double loglog_at(const std::vector<double>& x, const std::vector<double>& lx, const std::vector<double>& y,
                        const std::vector<double>& ly, double t, bool& exact) {
    return loglog_at(x, y, t, exact, [&](std::size_t i) { return lx[i]; }, [&](std::size_t i) { return ly[i]; });
}

// A whole cell as a finite number (at most 64 characters), else false.
inline bool cell_to_double(std::string_view s, double& out) {
    if (s.empty() || s.size() > 64) return false;
    char buf[65];
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = 0;
    char* end = nullptr;
    out = std::strtod(buf, &end);
    return end == buf + s.size() && std::isfinite(out);
}

}  // namespace moe::detail
