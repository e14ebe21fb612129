// tables_store.h — the private inside of Tables, shared by the files that load and read it (tables.cpp, tables_load.cpp,
// tables_gemm.cpp, tables_attention.cpp, tables_comm.cpp): the reference GPUs the tables were measured on, a table's
// grid and its interpolation, and the nearest-shape search. Nothing outside core/data/ includes it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/csv_cells.h"
#include "core/base/json_util.h"
#include "core/data/tables.h"

namespace moe {
namespace tables_detail {

// Reference peaks of the GPUs the tables were measured on: vendor datasheets, dense (no sparsity).
// H20: 148 TFLOPS bf16 / 296 fp8, 4.0 TB/s, 78 SMs. H800 and H100 SXM: 989.5 / 1979, 3.35 TB/s, 132 SMs.
// Special functions: 3.9 TFLOPS on H100 SXM5 (FlashAttention-3 paper, Shah et al. 2024, section 3: 16 exp per SM per
// clock); the H800 is the same die; the H20, with the same SM at 78 SMs, 3.9 x 78 / 132.
// H200: H100's compute at 4.8 TB/s. B200 (HGX): 2250 / 4500, 8.0 TB/s, 148 SMs; GB200: 2500 / 5000, 8.0 TB/s
// (AIConfigurator systems/gb200.yaml), SM count taken as B200's; Blackwell special functions taken as Hopper's 16
// exp per SM per clock at ~1.95 GHz (4.6 TFLOPS; no Blackwell table uses it today). The peaks and bandwidths match
// presets/hardware so a table reproduces its own measurement on its own GPU.
// NVLink per GPU, one direction: 450 GB/s (H20, H100, H200), 200 (H800), 900 (B200, GB200).
inline constexpr FamilyRef kFamilies[] = {
    {"h20", 148.0, 296.0, 4000.0, 78, 2.3, 450.0},
    {"h800", 989.5, 1979.0, 3350.0, 132, 3.9, 200.0},
    {"h100", 989.5, 1979.0, 3350.0, 132, 3.9, 450.0},
    {"h200", 989.5, 1979.0, 4800.0, 132, 3.9, 450.0},
    {"b200", 2250.0, 4500.0, 8000.0, 148, 4.6, 900.0},
    {"gb200", 2500.0, 5000.0, 8000.0, 148, 4.6, 900.0},
};
constexpr int kFamilyCount = int(sizeof(kFamilies) / sizeof(kFamilies[0]));

// A GEMM format's peak on a reference GPU: FP4 tensor cores run at twice FP8's rate on Blackwell (B200 9,000 /
// 4,500 dense TFLOPS; the only family with NVFP4 tables).
inline double format_peak_tflops(const FamilyRef& r, GemmFormat f) {
    return f == GemmFormat::bf16 ? r.tflops_bf16 : f == GemmFormat::nvfp4 ? 2.0 * r.tflops_fp8 : r.tflops_fp8;
}

enum class Kind { gemm, grouped_masked, grouped_contiguous, mha_decode, mha_prefill, mla_decode, mla_prefill, comm };

struct Point {
    double x, u;
    double roof = 0, lat = 0;  // seconds, kept where a per-call overhead may be taken off the latency (GEMM)
    double lx = 0;             // lg(x), set by Tables::add_table (interpolation without two logs per lookup)
};

// u of a point, with `overhead` seconds of per-call timing overhead taken off its measured latency.
inline double util_of(const Point& p, double overhead) {
    if (overhead <= 0 || p.lat <= 0) return p.u;
    return std::min(1.0, p.roof / std::max(p.lat - overhead, p.roof));
}

inline double lg(double v) { return std::log(std::max(v, 1e-30)); }

constexpr double kMaxShape = 1e9;  // shape columns become int keys
// A kernel slower than this (16 minutes) is not a measurement; longer ones made utilisations so small that an
// operator's time (roofline / utilisation) overflowed.
constexpr double kMaxLatencyUs = 1e9;

using detail::split_cells;
using detail::cell_to_double;

// Interpolate value(point) over sorted points in log x, clamped at the ends. exact = q sits on a grid point.
template <class Value>
inline double interp_by(const std::vector<Point>& pts, double q, bool& exact, Value value) {
    exact = false;
    if (pts.empty()) return 0;
    auto same = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); };
    if (q <= pts.front().x) { exact = same(q, pts.front().x); return value(pts.front()); }
    if (q >= pts.back().x) { exact = same(q, pts.back().x); return value(pts.back()); }
    auto hi = std::lower_bound(pts.begin(), pts.end(), q, [](const Point& p, double v) { return p.x < v; });
    if (same(hi->x, q)) { exact = true; return value(*hi); }
    auto lo = hi - 1;
    if (same(lo->x, q)) { exact = true; return value(*lo); }
    // the lookups of one step mostly ask at the same coordinate (every GEMM of a decode step at its tokens): the last
    // coordinate's log is kept per thread
    thread_local double last_q = -1, last_lq = 0;
    if (q != last_q) {
        last_q = q;
        last_lq = lg(q);
    }
    const double t = (last_lq - lo->lx) / (hi->lx - lo->lx);
    const double ul = value(*lo), uh = value(*hi);
    return ul + t * (uh - ul);
}

// Interpolate u (with `ovh` seconds of per-call overhead taken off each point's latency).
inline double interp1(const std::vector<Point>& pts, double q, bool& exact, double ovh = 0) {
    return interp_by(pts, q, exact, [ovh](const Point& p) { return util_of(p, ovh); });
}

// Index of a GPU family in kFamilies (and in Tables' per-family arrays), or -1.
inline int family_index(std::string_view family) {
    static_assert(kFamilyCount <= 8, "Tables::kFamilySlots too small");
    // The estimator passes family_ref()'s own names: a pointer compare finds them without comparing text.
    struct Lengths {
        std::size_t n[kFamilyCount];
        Lengths() {
            for (int f = 0; f < kFamilyCount; ++f) n[f] = std::char_traits<char>::length(kFamilies[f].family);
        }
    };
    // the last name found by its pointer, per thread (an estimate asks for the same family lookup after lookup);
    // kFamilies never changes, so a pointer and length once matched always give the same index
    thread_local const char* last_data = nullptr;
    thread_local std::size_t last_size = 0;
    thread_local int last_f = -1;
    if (family.data() == last_data && family.size() == last_size) return last_f;
    static const Lengths lengths;  // the names' lengths, measured once (no strlen per lookup)
    for (int f = 0; f < kFamilyCount; ++f)
        if (family.data() == kFamilies[f].family && family.size() == lengths.n[f]) {
            last_data = family.data();
            last_size = family.size();
            last_f = f;
            return f;
        }
    for (int f = 0; f < kFamilyCount; ++f)
        if (family.size() == lengths.n[f] && family.compare(0, family.size(), kFamilies[f].family, lengths.n[f]) == 0)
            return f;
    return -1;
}

}  // namespace tables_detail

struct Tables::Table {
    using Point = tables_detail::Point;
    using Kind = tables_detail::Kind;
    std::string path;
    Kind kind;
    std::string family;
    const FamilyRef* ref = nullptr;  // family_ref(family), set by Tables::add_table
    int key[4] = {0, 0, 0, 0};  // GEMM: k, n, GemmFormat, GemmEngine
    double log_key[4] = {0, 0, 0, 0};  // log(max(1, key[i])), set by add_table (shape distances without a log per table)
    bool fp8_kv = false;
    bool graph_timed = false;  // GEMM: timed inside a CUDA graph (no per-call overhead to take off)
    std::string variant;       // comm: "<op>/<impl>"; x1s = GPU counts, points (bytes, lat = latency in seconds)
    // 2-D grid, possibly sparse: lines[i] holds the points along axis 2 at x1s[i]. 1-D tables have x1s = {1}.
    std::vector<double> x1s;
    std::vector<double> lx1s;  // lg(x1s[i]), set by Tables::add_table
    std::vector<std::vector<Point>> lines;
    std::size_t rows = 0;

    void add(double x1, double x2, double u, double roof = 0, double lat = 0) {
        auto it = std::find(x1s.begin(), x1s.end(), x1);
        size_t i = size_t(it - x1s.begin());
        if (it == x1s.end()) {
            x1s.push_back(x1);
            lines.emplace_back();
        }
        // Duplicate grid points (repeated row blocks in a file) are averaged.
        for (Point& p : lines[i])
            if (p.x == x2) { p.u = 0.5 * (p.u + u); p.lat = 0.5 * (p.lat + lat); return; }
        lines[i].push_back({x2, u, roof, lat});
        ++rows;
    }
    void finish() {
        std::vector<size_t> order(x1s.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x1s[a] < x1s[b]; });
        std::vector<double> xs;
        std::vector<std::vector<Point>> ls;
        for (size_t i : order) {
            xs.push_back(x1s[i]);
            ls.push_back(lines[i]);
            std::sort(ls.back().begin(), ls.back().end(), [](const Point& a, const Point& b) { return a.x < b.x; });
        }
        x1s.swap(xs);
        lines.swap(ls);
    }
    double at(double q1, double q2, bool& exact, double ovh = 0) const {
        exact = false;
        if (x1s.empty()) return 0;
        size_t hi = size_t(std::lower_bound(x1s.begin(), x1s.end(), q1) - x1s.begin());
        if (hi < x1s.size() && std::fabs(x1s[hi] - q1) <= 1e-9 * q1) return tables_detail::interp1(lines[hi], q2, exact, ovh);
        if (hi == 0 || hi == x1s.size()) {  // outside the grid along axis 1: the edge line
            double u = tables_detail::interp1(hi == 0 ? lines.front() : lines.back(), q2, exact, ovh);
            exact = false;
            return u;
        }
        bool e1, e2;
        const double u0 = tables_detail::interp1(lines[hi - 1], q2, e1, ovh), u1 = tables_detail::interp1(lines[hi], q2, e2, ovh);
        const double t = (tables_detail::lg(q1) - lx1s[hi - 1]) / (lx1s[hi] - lx1s[hi - 1]);
        return u0 + t * (u1 - u0);
    }
};

namespace tables_detail {
// Distance between shapes in log space (for borrowing the nearest measured shape). The query's logs are taken once
// (ShapeQuery) and each table's when it is added: the same arithmetic as before, without two logs per table per
// lookup (they were a third of a plan's time).
struct ShapeQuery {
    const int* key;
    int n;
    double log_key[4];
    ShapeQuery(const int* k, int count) : key(k), n(count) {
        for (int i = 0; i < n; ++i) log_key[i] = std::log(std::max(1, key[i]));
    }
};
inline double shape_distance(const Tables::Table* t, const ShapeQuery& q) {
    bool equal = true;
    for (int i = 0; i < q.n; ++i) equal = equal && t->key[i] == q.key[i];
    if (equal) return 0;
    double d = 0;
    for (int i = 0; i < q.n; ++i) {
        const double x = t->log_key[i] - q.log_key[i];
        d += x * x;
    }
    return d;
}

// The nearest table to a shape key among those `pred` accepts (exact shape first), with its distance.
template <class Pred>
inline const Tables::Table* nearest(const std::vector<const Tables::Table*>* tables_p, Pred pred, const int* q, int n, double& dist) {
    const Tables::Table* best = nullptr;
    dist = 1e300;
    if (!tables_p) return nullptr;
    const auto& tables = *tables_p;
    for (const Tables::Table* t : tables) {  // exact shape first: integer compares only
        if (!pred(t)) continue;
        bool equal = true;
        for (int i = 0; i < n; ++i) equal = equal && t->key[i] == q[i];
        if (equal) { dist = 0; return t; }
    }
    const ShapeQuery sq(q, n);
    for (const Tables::Table* t : tables) {
        if (!pred(t)) continue;
        double d = shape_distance(t, sq);
        if (d < dist) { dist = d; best = t; }
    }
    return best;
}
// A lookup's result from a table at (q1, q2): measured on a grid point of the query's own shape, interpolated
// between points, transferred from another shape.
inline TableHit hit_from(const Tables::Table* t, double dist, double q1, double q2, double ovh = 0) {
    TableHit h;
    if (!t) return h;
    bool exact;
    h.found = true;
    h.util = t->at(q1, q2, exact, ovh);
    h.source = dist > 0 ? Source::transferred : exact ? Source::measured : Source::interpolated;
    h.table = t->path.c_str();
    return h;
}
// The wide form of a table (AIC's grids since stop 44): a row per series with a us_at_<x> column per measured x (an
// empty cell: not measured) instead of a row per point (x, latency_us). Either form, never both. One parser for every
// kind that has it (GEMM grids, collectives, MHA / MLA decode, MoE layers), so each refuses the same things: a column
// naming no positive whole x, two columns naming the same x, a truncated line, a cell that is not a number.
struct WideForm {
    std::vector<std::pair<int, double>> cols;  // (column, x) of every us_at_<x> column
    bool on() const { return !cols.empty(); }
    // Read the header's us_at_<x> columns (x whole, 1 to x_max); `has_long`: the long form's columns are there too.
    template <class Header>
    bool parse(const Header& header, const std::string& where, const char* x_name, double x_max, bool has_long, Issues& errors) {
        cols.clear();
        for (std::size_t j = 0; j < header.size(); ++j) {
            const std::string_view h = header[j];
            double x = 0;
            if (h.size() < 6 || h.substr(0, 6) != "us_at_") continue;
            if (!cell_to_double(h.substr(6), x) || !(x >= 1) || x > x_max || x != std::floor(x)) {
                errors.push_back({where + ":1", "column '" + detail::shown_text(std::string(h)) + "' does not name a positive whole " + x_name});
                return false;
            }
            for (const auto& [c, other] : cols)
                if (other == x) {
                    errors.push_back({where + ":1", "columns '" + detail::shown_text(std::string(header[std::size_t(c)])) + "' and '" +
                                                        detail::shown_text(std::string(h)) + "' name the same " + x_name});
                    return false;
                }
            cols.push_back({int(j), x});
        }
        if (on() && has_long) {
            errors.push_back({where + ":1", std::string("both the long (") + x_name + ", latency_us) and the wide (us_at_<" + x_name + ">) form"});
            return false;
        }
        return true;
    }
    // A line's (x, latency us) points, its empty cells skipped; false (with the error) on a truncated line or a cell
    // that is not a number. `line_where`: "file:line".
    template <class Header>
    bool points(const std::vector<std::string_view>& cells, const Header& header, const std::string& line_where,
                std::vector<std::pair<double, double>>& out, Issues& errors) const {
        out.clear();
        if (cells.size() < header.size()) {  // a truncated line would half-load
            errors.push_back({line_where, "has " + std::to_string(cells.size()) + " cells, the header " + std::to_string(header.size())});
            return false;
        }
        for (const auto& [j, x] : cols) {
            const std::string_view c = cells[std::size_t(j)];
            if (c.empty()) continue;  // not measured
            double lat = 0;
            if (!cell_to_double(c, lat)) {
                errors.push_back({line_where, "column '" + detail::shown_text(std::string(header[std::size_t(j)])) + "' is not a number"});
                return false;
            }
            out.push_back({x, lat});
        }
        return true;
    }
};

}  // namespace tables_detail
}  // namespace moe
