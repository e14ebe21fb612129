// csv_cells.h — the cell-level parsing every bench_data table loader shares (tables.cpp, tables_moe.cpp).
#pragma once

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace moe::detail {

// Split a CSV line into trimmed cells (spaces, tabs, a trailing CR; no quoting in our tables).
inline std::vector<std::string_view> split_cells(std::string_view line) {
    std::vector<std::string_view> cells;
    while (true) {
        auto comma = line.find(',');
        std::string_view c = line.substr(0, comma);
        while (!c.empty() && (c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
        while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.remove_suffix(1);
        cells.push_back(c);
        if (comma == std::string_view::npos) break;
        line.remove_prefix(comma + 1);
    }
    return cells;
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
