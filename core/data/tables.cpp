#include "core/data/tables.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include "core/data/csv_cells.h"
#include "core/base/embedded.h"
#include "core/data/kernels.h"
#include "core/base/json_util.h"

namespace moe {

namespace {

// Reference peaks of the GPUs the tables were measured on: vendor datasheets, dense (no sparsity).
// H20: 148 TFLOPS bf16 / 296 fp8, 4.0 TB/s, 78 SMs. H800 and H100 SXM: 989.5 / 1979, 3.35 TB/s, 132 SMs.
// Special functions: 3.9 TFLOPS on H100 SXM5 (FlashAttention-3 paper, Shah et al. 2024, section 3: 16 exp per SM per
// clock); the H800 is the same die; the H20, with the same SM at 78 SMs, 3.9 x 78 / 132.
// H200: H100's compute at 4.8 TB/s. B200 (HGX): 2250 / 4500, 8.0 TB/s, 148 SMs; GB200: 2500 / 5000, 8.0 TB/s
// (AIConfigurator systems/gb200.yaml), SM count taken as B200's; Blackwell special functions taken as Hopper's 16
// exp per SM per clock at ~1.95 GHz (4.6 TFLOPS; no Blackwell table uses it today). The peaks and bandwidths match
// presets/hardware so a table reproduces its own measurement on its own GPU.
// NVLink per GPU, one direction: 450 GB/s (H20, H100, H200), 200 (H800), 900 (B200, GB200).
const FamilyRef kFamilies[] = {
    {"h20", 148.0, 296.0, 4000.0, 78, 2.3, 450.0},
    {"h800", 989.5, 1979.0, 3350.0, 132, 3.9, 200.0},
    {"h100", 989.5, 1979.0, 3350.0, 132, 3.9, 450.0},
    {"h200", 989.5, 1979.0, 4800.0, 132, 3.9, 450.0},
    {"b200", 2250.0, 4500.0, 8000.0, 148, 4.6, 900.0},
    {"gb200", 2500.0, 5000.0, 8000.0, 148, 4.6, 900.0},
};
constexpr int kFamilyCount = int(sizeof(kFamilies) / sizeof(kFamilies[0]));

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

double lg(double v) { return std::log(std::max(v, 1e-30)); }

constexpr double kMaxShape = 1e9;  // shape columns become int keys
// A kernel slower than this (16 minutes) is not a measurement; longer ones made utilisations so small that an
// operator's time (roofline / utilisation) overflowed.
constexpr double kMaxLatencyUs = 1e9;

using detail::split_cells;
using detail::cell_to_double;

// Interpolate value(point) over sorted points in log x, clamped at the ends. exact = q sits on a grid point.
template <class Value>
double interp_by(const std::vector<Point>& pts, double q, bool& exact, Value value) {
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
double interp1(const std::vector<Point>& pts, double q, bool& exact, double ovh = 0) {
    return interp_by(pts, q, exact, [ovh](const Point& p) { return util_of(p, ovh); });
}

// Index of a GPU family in kFamilies (and in Tables' per-family arrays), or -1.
int family_index(std::string_view family) {
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

}  // namespace

struct Tables::Table {
    std::string path;
    Kind kind;
    std::string family;
    const FamilyRef* ref = nullptr;  // family_ref(family), set by Tables::add_table
    int key[4] = {0, 0, 0, 0};
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
        if (hi < x1s.size() && std::fabs(x1s[hi] - q1) <= 1e-9 * q1) return interp1(lines[hi], q2, exact, ovh);
        if (hi == 0 || hi == x1s.size()) {  // outside the grid along axis 1: the edge line
            double u = interp1(hi == 0 ? lines.front() : lines.back(), q2, exact, ovh);
            exact = false;
            return u;
        }
        bool e1, e2;
        const double u0 = interp1(lines[hi - 1], q2, e1, ovh), u1 = interp1(lines[hi], q2, e2, ovh);
        const double t = (lg(q1) - lx1s[hi - 1]) / (lx1s[hi] - lx1s[hi - 1]);
        return u0 + t * (u1 - u0);
    }
};

const FamilyRef* family_ref(std::string_view family) {
    const int f = family_index(family);  // the names' lengths measured once: no strlen per known family per call
    return f < 0 ? nullptr : &kFamilies[f];
}

namespace {
std::uint64_t next_generation() {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;  // never 0: an empty cache slot
}
}  // namespace

std::uint64_t Tables::next_gen() { return next_generation(); }

Tables::Tables() : gen_(next_generation()) {}
Tables::~Tables() {
    for (Table* t : tables_) delete t;
}
Tables::Tables(const Tables& o) : calibration(o.calibration), gen_(next_generation()), moe_(o.moe_), gdn_(o.gdn_) {
    for (const Table* t : o.tables_) add_table(new Table(*t));
}
Tables& Tables::operator=(const Tables& o) {
    if (this != &o) {
        Tables copy(o);
        std::swap(tables_, copy.tables_);
        std::swap(moe_, copy.moe_);
        std::swap(gdn_, copy.gdn_);
        for (int k = 0; k < kKinds; ++k)
            for (int f = 0; f < kFamilySlots; ++f) std::swap(buckets_[k][f], copy.buckets_[k][f]);
        for (int f = 0; f < kFamilySlots; ++f) std::swap(stream_util_[f], copy.stream_util_[f]);
        calibration = o.calibration;
        gen_ = next_generation();
    }
    return *this;
}

void Tables::add_table(Table* t) {
    gen_ = next_generation();
    for (auto& line : t->lines)
        for (Point& p : line) p.lx = lg(p.x);
    t->ref = family_ref(t->family);
    t->lx1s.clear();
    for (double x : t->x1s) t->lx1s.push_back(lg(x));
    for (int i = 0; i < 4; ++i) t->log_key[i] = std::log(std::max(1, t->key[i]));
    tables_.push_back(t);
    const int f = family_index(t->family);
    if (f < 0) return;
    buckets_[int(t->kind)][f].push_back(t);
    if (t->kind == Kind::mha_decode)
        for (const auto& line : t->lines)
            for (const Point& p : line) stream_util_[f] = std::max(stream_util_[f], p.u);
}

const std::vector<const Tables::Table*>* Tables::bucket(int kind, std::string_view family) const {
    const int f = family_index(family);
    return f < 0 ? nullptr : &buckets_[kind][f];
}

std::size_t Tables::row_count() const {
    std::size_t n = 0;
    for (const Table* t : tables_) n += t->rows;
    return n;
}

bool Tables::has_family(std::string_view family) const {
    // A known family's tables are all in its buckets (add_table): a few empty() checks instead of a string compare
    // per table (estimate() asks up to four times).
    const int f = family_index(family);
    if (f >= 0) {
        for (int k = 0; k < kKinds; ++k)
            if (!buckets_[k][f].empty()) return true;
        return false;
    }
    for (const Table* t : tables_)
        if (t->family == family) return true;
    return false;
}

// InferSim's masked grouped-GEMM tables time one random draw of rows per group: m_g = int(expected_m * U(0.7, 1.3))
// (alibaba/InferSim kernel_benchmark/deepgemm_grouped_gemm_masked.py, generate_m_grouped_masked). A group above
// expected_m can add an m-block, and with it a whole wave over the SMs. DeepGEMM's README and a balanced serving step
// run every group at expected_m. This converts one projection's time (n x k FP8 weights per group) to that uniform
// load:
//   t_uniform = max(t * W_uniform / W_table, min(t, weight bytes / (0.9 * HBM)))
// W_table is the expected number of waves of the draw. When the row's mfu cell allows it, the draw is conditioned on
// its total rows; InferSim writes mfu = 2 * valid_m * n * k / t / gpu_tflops with valid_m = sum m_g, so valid_m comes
// back to within the cell's rounding. If the cell is missing or implausible, the unconditional expectation is used.
// The floor keeps memory-bound rows at their weight-streaming time (0.9 of peak HBM, about the best a streaming
// kernel reaches). Real routing imbalance is not in the table after this; routing.imbalance models it.
static double masked_uniform_us(double t_us, double expected_m, double groups, double n, double k,
                                std::string_view mfu_cell, const FamilyRef& ref) {
    const double sms = ref.sm_count;
    const kernels::DeepGemmTiles tiles = kernels::deepgemm_tiles(expected_m, n, groups, sms);
    const double w_uni = kernels::deepgemm_waves(expected_m, n, groups, tiles, sms);
    double w_tab = -1, mfu = 0;
    if (cell_to_double(mfu_cell, mfu) && mfu > 0 && mfu <= 1) {
        // half a unit of the cell's last decimal, plus a little for the rounding of the time
        double half = 5e-7 * mfu;
        const auto dot = mfu_cell.find('.');
        if (dot != std::string_view::npos && mfu_cell.find_first_of("eE") == std::string_view::npos) {
            int decimals = 0;
            for (size_t i = dot + 1; i < mfu_cell.size() && mfu_cell[i] >= '0' && mfu_cell[i] <= '9'; ++i) ++decimals;
            half = 0.5 * std::pow(10.0, -std::min(decimals, 15));
        }
        const double rows_per_mfu = ref.tflops_fp8 * 1e12 * t_us * 1e-6 / (2.0 * n * k);
        const double lo = (mfu - half) * rows_per_mfu * (1 - 1e-5), hi = (mfu + half) * rows_per_mfu * (1 + 1e-5);
        w_tab = kernels::masked_waves_expected(expected_m, groups, n, tiles, sms, lo, hi);
    }
    if (!(w_tab > 0)) w_tab = kernels::masked_waves_expected(expected_m, groups, n, tiles, sms);
    if (!(w_tab > 0) || !(w_uni > 0)) return t_us;
    const double floor_us = groups * n * k / (0.9 * ref.hbm_GBps * 1e9) * 1e6;
    const double out = std::max(t_us * w_uni / w_tab, std::min(t_us, floor_us));
    return std::isfinite(out) && out > 0 ? out : t_us;
}

bool Tables::load_csv(std::string_view path, std::string_view text, Issues& errors) {
    if (!detail::valid_utf8(path)) {  // the path names every hit's table in the estimate's JSON
        errors.push_back({detail::shown_text(std::string(path), 256), "file name is not valid UTF-8"});
        return false;
    }
    const std::string where(path);
    // Parse the path: bench_data/<kind>/[<phase>/]<family>/<file>.csv
    std::vector<std::string> parts;
    {
        std::string_view p = path;
        while (!p.empty()) {
            auto slash = p.find('/');
            parts.emplace_back(p.substr(0, slash));
            if (slash == std::string_view::npos) break;
            p.remove_prefix(slash + 1);
        }
    }
    if (!parts.empty() && parts[0] == "bench_data") parts.erase(parts.begin());
    if (parts.size() < 3) {
        errors.push_back({where, "expected bench_data/<kind>/[<phase>/]<family>/<file>.csv"});
        return false;
    }
    const std::string& kind_s = parts[0];
    if (kind_s == "moe") {  // bench_data/moe/<family>/<file>.csv: tables_moe.cpp
        const FamilyRef* ref = parts.size() == 3 ? family_ref(parts[1]) : nullptr;
        if (!ref) {
            errors.push_back({where, "expected bench_data/moe/<family>/<file>.csv with a known GPU family"});
            return false;
        }
        return load_moe_csv("bench_data/moe/" + parts[1] + "/" + parts[2], *ref, text, errors);
    }
    if (kind_s == "gdn" && parts.size() == 3) {  // bench_data/gdn/<family>/<file>.csv: tables_gdn.cpp
        const FamilyRef* ref = family_ref(parts[1]);
        if (!ref) {
            errors.push_back({where, "expected bench_data/gdn/<family>/<file>.csv with a known GPU family"});
            return false;
        }
        return load_gdn_csv("bench_data/gdn/" + parts[1] + "/" + parts[2], *ref, text, errors);
    }
    if (kind_s != "gemm" && kind_s != "grouped_gemm" && kind_s != "mha" && kind_s != "mla" && kind_s != "comm")
        return true;  // unused kinds
    auto t = std::make_unique<Table>();
    t->path = "bench_data/" + std::string(path.substr(path.find(kind_s)));
    const bool phased = kind_s != "gemm" && kind_s != "comm";
    if (phased && parts.size() < 4) {
        errors.push_back({where, "expected bench_data/" + kind_s + "/<phase>/<family>/<file>.csv"});
        return false;
    }
    const std::string phase = phased ? parts[1] : "";
    if (phased && phase != "decode" && phase != "prefill") {
        errors.push_back({where, "phase folder must be decode or prefill"});
        return false;
    }
    t->family = parts[phased ? 2 : 1];
    const FamilyRef* ref = family_ref(t->family);
    if (!ref) {
        std::string known;
        for (const FamilyRef& f : kFamilies) known += std::string(known.empty() ? "" : ", ") + f.family;
        errors.push_back({where, "unknown GPU family '" + t->family + "' (known: " + known + ")"});
        return false;
    }
    // Tables split by shape (one per key) are finished and registered in key order.
    auto add_shapes = [this](auto& shapes) {
        for (auto& entry : shapes) {
            entry.second->finish();
            add_table(entry.second.release());
        }
    };
    std::string file = parts.back();
    if (file.size() < 5 || file.substr(file.size() - 4) != ".csv") {
        errors.push_back({where, "not a .csv file"});
        return false;
    }
    file.resize(file.size() - 4);
    if (kind_s == "gemm") t->kind = Kind::gemm;
    else if (kind_s == "comm") t->kind = Kind::comm;
    else if (kind_s == "grouped_gemm") t->kind = phase == "decode" ? Kind::grouped_masked : Kind::grouped_contiguous;
    else if (kind_s == "mha") t->kind = phase == "decode" ? Kind::mha_decode : Kind::mha_prefill;
    else t->kind = phase == "decode" ? Kind::mla_decode : Kind::mla_prefill;

    // Shape key from the file name: H-Hkv-D[-tpN] (mha), H-kv_lora-rope (mla decode), H-nope-rope (mla prefill).
    if (kind_s == "mha" || kind_s == "mla") {
        int vals[4] = {0, 0, 0, 1};
        int n = 0;
        std::string_view f = file;
        while (!f.empty() && n < 4) {
            auto dash = f.find('-');
            std::string_view c = f.substr(0, dash);
            if (c.substr(0, 2) == "tp") c.remove_prefix(2);
            double v;
            if (!cell_to_double(c, v) || v < 1 || v > 1e6 || v != std::floor(v)) {
                errors.push_back({where, "file name must be <heads>-<kv heads>-<head dim>[-tp<N>].csv"});
                return false;
            }
            vals[n++] = int(v);
            if (dash == std::string_view::npos) break;
            f.remove_prefix(dash + 1);
        }
        if (n < 3) {
            errors.push_back({where, "file name must be <heads>-<kv heads>-<head dim>[-tp<N>].csv"});
            return false;
        }
        const int tp = vals[3];
        if (kind_s == "mha") {
            // BLIS files (-tpN) name the model's heads; the kernel runs on heads/tp per GPU.
            if (vals[0] % tp != 0) {
                errors.push_back({where, "heads not divisible by tp"});
                return false;
            }
            t->key[0] = vals[0] / tp;
            t->key[1] = std::max(1, vals[1] / tp);
        } else {
            t->key[0] = vals[0];
            t->key[1] = vals[1];
        }
        t->key[2] = vals[2];
    }

    // Header (by name). One InferSim file has no header row: detect a data row and use the kind's standard header.
    std::vector<std::string_view> lines;
    {
        std::string_view rest = text;
        while (!rest.empty()) {
            auto nl = rest.find('\n');
            std::string_view line = rest.substr(0, nl);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (!line.empty()) lines.push_back(line);
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
    }
    if (lines.empty()) {
        errors.push_back({where, "empty file"});
        return false;
    }
    static const char* const kStd[] = {"dtype", "kv_dtype", "batch_size", "kv_len", "latency_us", "mfu"};
    std::vector<std::string> header;
    size_t first = 1;
    {
        auto cells = split_cells(lines[0]);
        double dummy;
        const bool looks_like_data = t->kind == Kind::mha_decode && cells.size() == 6 && cell_to_double(cells[2], dummy);
        if (looks_like_data) {
            header.assign(std::begin(kStd), std::end(kStd));
            first = 0;
        } else {
            for (auto c : cells) header.emplace_back(c);
        }
    }
    auto col = [&](const char* name) -> int {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return int(i);
        return -1;
    };
    auto need = [&](std::initializer_list<const char*> names) {
        for (const char* n : names)
            if (col(n) < 0) {
                errors.push_back({where + ":1", "missing column '" + std::string(n) + "'"});
                return false;
            }
        return true;
    };
    const size_t errors_before = errors.size();
    auto no_rows = [&] {  // a header alone is not a table (its lookups would promise what it does not hold)
        errors.push_back({where, "no data rows"});
        return false;
    };
    auto num = [&](const std::vector<std::string_view>& cells, const char* name, size_t line_no, double& out) {
        int c = col(name);
        if (c < 0 || size_t(c) >= cells.size() || !cell_to_double(cells[size_t(c)], out)) {
            errors.push_back({where + ":" + std::to_string(line_no + 1), "column '" + std::string(name) + "' is not a number"});
            return false;
        }
        return true;
    };

    switch (t->kind) {
        case Kind::gemm: {
            if (!need({"m", "k", "n", "latency_us"})) return false;
            // One Table per (k, n, input dtype) shape. Files without a dtype column: InferSim's DeepGEMM FP8 tables,
            // BLIS's H100 table is BF16. Files named *cuda_graph*.csv were timed inside CUDA graphs (AIConfigurator).
            std::map<std::tuple<int, int, int>, std::unique_ptr<Table>> shapes;
            const int dtcol = col("dtype");
            const bool fp8_default = t->family != "h100";
            t->graph_timed = file.find("cuda_graph") != std::string::npos;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double m, k, n, lat;
                if (!num(cells, "m", i, m) || !num(cells, "k", i, k) || !num(cells, "n", i, n) || !num(cells, "latency_us", i, lat)) continue;
                if (m < 1 || k < 1 || n < 1 || k > kMaxShape || n > kMaxShape || lat <= 0 || lat > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "sizes must be in [1, 1e9] and latency in (0, 1e9] us"});
                    continue;
                }
                bool fp8 = fp8_default;
                if (dtcol >= 0) {
                    const std::string_view d = size_t(dtcol) < cells.size() ? cells[size_t(dtcol)] : std::string_view();
                    if (d != "bf16" && d != "fp8") {
                        errors.push_back({where + ":" + std::to_string(i + 1), "column 'dtype' must be bf16 or fp8"});
                        continue;
                    }
                    fp8 = d == "fp8";
                }
                auto& s = shapes[{int(k), int(n), fp8 ? 1 : 2}];
                if (!s) {
                    s = std::make_unique<Table>(*t);
                    s->key[0] = int(k);
                    s->key[1] = int(n);
                    s->key[2] = fp8 ? 1 : 2;  // input bytes
                }
                const double b = fp8 ? 1.0 : 2.0;
                kernels::Cost c = kernels::gemm(m, k, n, b, b);
                const double peak = (fp8 ? ref->tflops_fp8 : ref->tflops_bf16) * 1e12;
                const double roof = std::max(c.flops / peak, c.bytes / (ref->hbm_GBps * 1e9));
                s->add(1, m, std::min(1.0, roof / (lat * 1e-6)), roof, lat * 1e-6);
            }
            if (errors.size() != errors_before) return false;
            if (shapes.empty()) return no_rows();
            add_shapes(shapes);
            return true;
        }
        case Kind::comm: {
            // One Table per (op, impl): lines by GPU count, points (message bytes, latency).
            if (!need({"op", "impl", "num_gpus", "message_bytes", "latency_us"})) return false;
            std::map<std::string, std::unique_ptr<Table>> series;
            const int opc = col("op"), implc = col("impl");
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double gpus, bytes, lat;
                if (!num(cells, "num_gpus", i, gpus) || !num(cells, "message_bytes", i, bytes) || !num(cells, "latency_us", i, lat)) continue;
                const std::string_view op = size_t(opc) < cells.size() ? cells[size_t(opc)] : std::string_view();
                const std::string_view impl = size_t(implc) < cells.size() ? cells[size_t(implc)] : std::string_view();
                if (op != "all_reduce" && op != "all_gather" && op != "reduce_scatter") {
                    errors.push_back({where + ":" + std::to_string(i + 1), "column 'op' must be all_reduce, all_gather or reduce_scatter"});
                    continue;
                }
                if (impl.empty() || impl.size() > 32 || !detail::valid_utf8(impl)) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "column 'impl' must name the implementation (1-32 characters)"});
                    continue;
                }
                if (gpus < 2 || gpus > 1e6 || gpus != std::floor(gpus) || bytes < 1 || bytes > 1e15 || lat <= 0 || lat > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "num_gpus must be an integer >= 2, message_bytes in [1, 1e15], latency in (0, 1e9] us"});
                    continue;
                }
                auto& s = series[std::string(op) + "/" + std::string(impl)];
                if (!s) {
                    s = std::make_unique<Table>(*t);
                    s->variant = std::string(op) + "/" + std::string(impl);
                    s->path += "#" + s->variant;  // the table an op names: file and series
                }
                s->add(gpus, bytes, 1.0, 0, lat * 1e-6);
            }
            if (errors.size() != errors_before) return false;
            if (series.empty()) return no_rows();
            add_shapes(series);
            return true;
        }
        case Kind::grouped_masked:
        case Kind::grouped_contiguous: {
            const char* tok = t->kind == Kind::grouped_masked ? "batch_size_per_gpu" : "seq_len_per_gpu";
            if (!need({"num_experts", "num_gpus", "num_local_experts", "topk", "hidden_size", "intermediate_size", tok,
                       "up_proj_us", "down_proj_us"}))
                return false;
            std::map<std::vector<int>, std::unique_ptr<Table>> shapes;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double E, gpus, local, k, h, inter, tokens, up, down;
                if (!num(cells, "num_experts", i, E) || !num(cells, "num_gpus", i, gpus) || !num(cells, "num_local_experts", i, local) ||
                    !num(cells, "topk", i, k) || !num(cells, "hidden_size", i, h) || !num(cells, "intermediate_size", i, inter) ||
                    !num(cells, tok, i, tokens) || !num(cells, "up_proj_us", i, up) || !num(cells, "down_proj_us", i, down))
                    continue;
                if (E < 1 || gpus < 1 || local < 1 || k < 1 || h < 1 || inter < 1 || tokens < 1 || up <= 0 || down <= 0 ||
                    E > kMaxShape || k > kMaxShape || h > kMaxShape || inter > kMaxShape || up > kMaxLatencyUs || down > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "values must be positive (shapes at most 1e9, latencies 1e9 us)"});
                    continue;
                }
                std::vector<int> key = {int(E), int(k), int(h), int(inter)};
                auto& s = shapes[key];
                if (!s) {
                    s = std::make_unique<Table>(*t);
                    for (int j = 0; j < 4; ++j) s->key[j] = key[size_t(j)];
                }
                double em = 0;  // expected rows per group (masked rows)
                if (t->kind == Kind::grouped_masked) {
                    // Uniform load per group (masked_uniform_us). The expected m is InferSim's
                    // round(bs * topk / groups), from its tokens_per_expert column when the file has one.
                    auto cell = [&](const char* name) {
                        const int c = col(name);
                        return c >= 0 && size_t(c) < cells.size() ? cells[size_t(c)] : std::string_view();
                    };
                    if (!cell_to_double(cell("tokens_per_expert"), em) || em < 1) em = std::nearbyint(tokens * k / local);
                    up = masked_uniform_us(up, em, local, 2.0 * inter, h, cell("up_mfu"), *ref);
                    down = masked_uniform_us(down, em, local, h, inter, cell("down_mfu"), *ref);
                }
                // Experts whose weights the timed kernel read. Masked rows, converted to uniform load, hold expected_m
                // >= 1 rows in every group: all local experts. Contiguous rows route tokens*gpus tokens at random:
                // only the experts that receive one.
                const double pairs = tokens * k;  // token-expert pairs on one GPU (balanced)
                const double active = t->kind == Kind::grouped_masked && em >= 1
                                          ? local
                                          : kernels::expected_active_experts(local, k * local / E, tokens * gpus);
                kernels::Cost c = kernels::grouped_experts(pairs, std::max(1.0, active), h, inter, 1.0, 1.0);
                const double roof = std::max(c.flops / (ref->tflops_fp8 * 1e12), c.bytes / (ref->hbm_GBps * 1e9));
                s->add(gpus, tokens, std::min(1.0, roof / ((up + down) * 1e-6)));
            }
            if (errors.size() != errors_before) return false;
            if (shapes.empty()) return no_rows();
            add_shapes(shapes);
            return true;
        }
        case Kind::mha_decode:
        case Kind::mla_decode: {
            if (!need({"batch_size", "kv_len", "latency_us"})) return false;
            const int kvcol = col("kv_dtype");
            std::unique_ptr<Table> fp8t;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double b, L, lat;
                if (!num(cells, "batch_size", i, b) || !num(cells, "kv_len", i, L) || !num(cells, "latency_us", i, lat)) continue;
                if (b < 1 || L < 1 || lat <= 0 || lat > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "values must be positive, latency at most 1e9 us"});
                    continue;
                }
                const bool fp8 = kvcol >= 0 && size_t(kvcol) < cells.size() && cells[size_t(kvcol)].substr(0, 3) == "fp8";
                const double kvb = fp8 ? 1.0 : 2.0;
                kernels::Cost c = t->kind == Kind::mha_decode
                                      ? kernels::mha_decode(b, L, t->key[0], t->key[1], t->key[2], kvb)
                                      : kernels::mla_decode(b, L, t->key[0], t->key[1], t->key[2], kvb);
                const double roof = std::max(c.flops / (ref->tflops_bf16 * 1e12), c.bytes / (ref->hbm_GBps * 1e9));
                const double u = std::min(1.0, roof / (lat * 1e-6));
                if (fp8) {
                    if (!fp8t) { fp8t = std::make_unique<Table>(*t); fp8t->fp8_kv = true; fp8t->lines.clear(); fp8t->x1s.clear(); fp8t->rows = 0; }
                    fp8t->add(b, L, u);
                } else {
                    t->add(b, L, u);
                }
            }
            if (errors.size() != errors_before) return false;
            if (!fp8t && !t->rows) return no_rows();
            if (fp8t) { fp8t->finish(); add_table(fp8t.release()); }
            if (t->rows) { t->finish(); add_table(t.release()); }
            return true;
        }
        case Kind::mha_prefill:
        case Kind::mla_prefill: {
            if (!need({"seq_len", "latency_us"})) return false;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double L, lat;
                if (!num(cells, "seq_len", i, L) || !num(cells, "latency_us", i, lat)) continue;
                if (L < 1 || lat <= 0 || lat > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "values must be positive, latency at most 1e9 us"});
                    continue;
                }
                // One causal sequence of length L.
                kernels::Cost c = t->kind == Kind::mha_prefill
                                      ? kernels::mha_prefill(L, L / 2.0, t->key[0], t->key[1], t->key[2], 2.0)
                                      : kernels::mla_prefill(L, L / 2.0, t->key[0], t->key[1] + t->key[2], t->key[1]);
                // FlashAttention streams Q, K, V under its matmuls: the point's efficiency is a compute efficiency
                const double roof = c.flops / (ref->tflops_bf16 * 1e12);
                t->add(1, L, std::min(1.0, roof / (lat * 1e-6)), roof, lat * 1e-6);
            }
            if (errors.size() != errors_before) return false;
            if (!t->rows) return no_rows();
            t->finish();
            add_table(t.release());
            return true;
        }
    }
    return true;
}

namespace {
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
double shape_distance(const Tables::Table* t, const ShapeQuery& q) {
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
}  // namespace

namespace {
// The grouped-GEMM table a query reads, and where on it: `gpus` is the line (EP size) and `scale` turns the query's
// tokens per GPU into the table's.
struct GroupedPick {
    const Tables::Table* table = nullptr;
    double dist = 0, gpus = 1, scale = 1;
    bool other_layout = false;
};
}  // namespace

static GroupedPick pick_grouped_scan(const std::vector<const Tables::Table*>* want_list,
                                const std::vector<const Tables::Table*>* other_list, int E, int top_k, int hidden,
                                int inter, int ep) {
    const int q[4] = {E, top_k, hidden, inter};
    GroupedPick p;
    double best_d = 1e300;
    const ShapeQuery sq(q, 4);
    for (int pass = 0; pass < 2 && !p.table; ++pass) {  // the other layout's table if this one is missing
        const auto* list = pass == 0 ? want_list : other_list;
        if (!list) break;
        for (const Tables::Table* t : *list) {
            double d = shape_distance(t, sq);
            if (d < best_d) { best_d = d; p.table = t; p.other_layout = pass == 1; }
            if (d == 0) break;
        }
    }
    if (!p.table) return p;
    p.dist = best_d;
    p.gpus = ep;
    // Another shape: match its tokens per expert and local experts, the two things its efficiency depends on.
    if (best_d > 0) {
        const double local = double(E) / ep;
        p.gpus = std::max(1.0, p.table->key[0] / std::max(1.0, local));
        p.scale = double(top_k) / local * (p.table->key[0] / p.gpus) / p.table->key[1];
    }
    return p;
}

// The pick depends only on the table set and the query's shape, not on its tokens: expert_ops() asks for it once per
// point of the monotone envelope (and grouped_gemm_grid once more), so the last few picks are kept per thread.
static GroupedPick pick_grouped(std::uint64_t gen, const std::vector<const Tables::Table*>* want_list,
                                const std::vector<const Tables::Table*>* other_list, int E, int top_k, int hidden,
                                int inter, int ep) {
    struct Slot {
        std::uint64_t gen;
        const void *want, *other;
        int E, top_k, hidden, inter, ep;
        GroupedPick pick;
    };
    thread_local Slot cache[4] = {};
    thread_local unsigned next = 0;
    for (const Slot& sl : cache)
        if (sl.gen == gen && sl.want == want_list && sl.other == other_list && sl.E == E && sl.top_k == top_k &&
            sl.hidden == hidden && sl.inter == inter && sl.ep == ep)
            return sl.pick;
    const GroupedPick p = pick_grouped_scan(want_list, other_list, E, top_k, hidden, inter, ep);
    cache[next++ & 3u] = {gen, want_list, other_list, E, top_k, hidden, inter, ep, p};
    return p;
}

TableHit Tables::grouped_gemm(std::string_view family, bool masked, int E, int top_k, int hidden, int inter, int ep,
                              double tokens_per_gpu) const {
    const Kind want = masked ? Kind::grouped_masked : Kind::grouped_contiguous;
    const Kind other = masked ? Kind::grouped_contiguous : Kind::grouped_masked;
    const GroupedPick p = pick_grouped(gen_, bucket(int(want), family), bucket(int(other), family), E, top_k, hidden, inter, ep);
    TableHit h;
    if (!p.table) return h;
    bool exact;
    h.found = true;
    h.util = p.table->at(p.gpus, tokens_per_gpu * p.scale, exact);
    h.source = (p.dist > 0 || p.other_layout) ? Source::transferred : exact ? Source::measured : Source::interpolated;
    h.table = p.table->path.c_str();
    return h;
}

std::vector<double> Tables::grouped_gemm_grid(std::string_view family, bool masked, int E, int top_k, int hidden,
                                              int inter, int ep) const {
    const Kind want = masked ? Kind::grouped_masked : Kind::grouped_contiguous;
    const Kind other = masked ? Kind::grouped_contiguous : Kind::grouped_masked;
    const GroupedPick p = pick_grouped(gen_, bucket(int(want), family), bucket(int(other), family), E, top_k, hidden, inter, ep);
    std::vector<double> out;
    if (!p.table || p.table->x1s.empty() || !(p.scale > 0)) return out;
    const auto& xs = p.table->x1s;
    // the lines Table::at() reads: the exact one, the edge one outside the grid, or the two around it
    const size_t hi = size_t(std::lower_bound(xs.begin(), xs.end(), p.gpus) - xs.begin());
    std::vector<size_t> lines;
    if (hi < xs.size() && std::fabs(xs[hi] - p.gpus) <= 1e-9 * p.gpus) lines = {hi};
    else if (hi == 0) lines = {0};
    else if (hi == xs.size()) lines = {xs.size() - 1};
    else lines = {hi - 1, hi};
    for (size_t l : lines)
        for (const Point& pt : p.table->lines[l]) out.push_back(pt.x / p.scale);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {
template <class Pred>
const Tables::Table* nearest(const std::vector<const Tables::Table*>* tables_p, Pred pred, const int* q, int n, double& dist) {
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
// A decode-attention table (3-int key) with the query's KV-cache dtype, else the nearest of any dtype, one step
// further away (so never `measured`).
const Tables::Table* nearest_kv(std::uint64_t gen, const std::vector<const Tables::Table*>* tables, bool fp8_kv, const int* q,
                                double& dist) {
    // The pick depends on (table set, list, KV format, shape) only, not on the batch or the KV length: kept in a small
    // per-thread cache keyed on all of them (a decode estimate asks once or twice per phase, a sweep the same shapes).
    struct Slot {
        std::uint64_t gen;
        const void* list;
        bool fp8;
        int q[3];
        const Tables::Table* best;
        double dist;
    };
    thread_local Slot cache[8] = {};
    for (const Slot& s : cache)
        if (s.gen == gen && s.list == tables && s.fp8 == fp8_kv && s.q[0] == q[0] && s.q[1] == q[1] && s.q[2] == q[2]) {
            dist = s.dist;
            return s.best;
        }
    const Tables::Table* t = nearest(tables, [&](const Tables::Table* x) { return x->fp8_kv == fp8_kv; }, q, 3, dist);
    if (!t) t = nearest(tables, [](const Tables::Table*) { return true; }, q, 3, dist), dist += 1;
    thread_local int next = 0;
    cache[next] = {gen, tables, fp8_kv, {q[0], q[1], q[2]}, t, dist};
    next = (next + 1) % 8;
    return t;
}
// A prefill-attention table (3-int key, any KV format): the nearest shape, kept per thread like nearest_kv's pick
// (it depends on the table set, the list and the shape alone; every prefill estimate asks once per layer kind).
const Tables::Table* nearest_prefill(std::uint64_t gen, const std::vector<const Tables::Table*>* tables, const int* q,
                                     double& dist) {
    struct Slot {
        std::uint64_t gen;
        const void* list;
        int q[3];
        const Tables::Table* best;
        double dist;
    };
    thread_local Slot cache[4] = {};
    for (const Slot& s : cache)
        if (s.gen == gen && s.list == tables && s.q[0] == q[0] && s.q[1] == q[1] && s.q[2] == q[2]) {
            dist = s.dist;
            return s.best;
        }
    const Tables::Table* t = nearest(tables, [](const Tables::Table*) { return true; }, q, 3, dist);
    thread_local unsigned next = 0;
    cache[next++ & 3u] = {gen, tables, {q[0], q[1], q[2]}, t, dist};
    return t;
}
TableHit hit_from(const Tables::Table* t, double dist, double q1, double q2, double ovh = 0) {
    TableHit h;
    if (!t) return h;
    bool exact;
    h.found = true;
    h.util = t->at(q1, q2, exact, ovh);
    h.source = dist > 0 ? Source::transferred : exact ? Source::measured : Source::interpolated;
    h.table = t->path.c_str();
    return h;
}
}  // namespace

namespace {
// kernels::deepgemm_tiles(m, n, 1, sms), kept per thread: the pick depends on m only through BM (m <= 64) and the
// m-block count ceil(m / BM), so the GEMMs of a sweep or plan over the batch share a few picks per shape (the pick
// tries 15 BN values; it was most of a transferred GEMM lookup's time).
kernels::DeepGemmTiles dense_tiles(double m, double n, double sms) {
    const double bm = m <= 64 ? 64 : 128;
    const double mb = std::ceil(std::max(m, 0.0) / bm);
    struct Slot {
        double bm, mb, n, sms;
        kernels::DeepGemmTiles tiles;
        bool used;
    };
    thread_local Slot cache[256] = {};
    std::uint64_t h[3];
    std::memcpy(&h[0], &mb, 8);
    std::memcpy(&h[1], &n, 8);
    std::memcpy(&h[2], &sms, 8);
    std::uint64_t hs = (h[0] * 0x9E3779B97F4A7C15ull) ^ (h[1] * 0xC2B2AE3D27D4EB4Full) ^ (h[2] * 0x165667B19E3779F9ull) ^
                       (bm == 64 ? 0x27D4EB2F165667C5ull : 0);
    hs ^= hs >> 31;
    hs *= 0xBF58476D1CE4E5B9ull;
    Slot& sl = cache[hs >> 56];
    // bitwise compares: the same doubles (NaN never reaches here: m, n, sms are checked positive by the caller)
    if (sl.used && sl.bm == bm && sl.mb == mb && sl.n == n && sl.sms == sms) return sl.tiles;
    sl = {bm, mb, n, sms, kernels::deepgemm_tiles(m, n, 1, sms), true};
    return sl.tiles;
}
}  // namespace

// The per-thread pick of a GEMM shape (gemm_pick, gemm): the table it reads depends only on (table set, family, k, n,
// in_bytes), not on m, and is kept in a small per-thread cache (the nearest-shape scan over a family's tables was a
// third of an estimate's time), with the line it interpolates and that line's efficiencies at the overhead.
Tables::GemmPick& Tables::gemm_slot(std::string_view family, int k, int n, int in_bytes) const {
    const int q[2] = {k, n};
    const auto* list = bucket(int(Kind::gemm), family);
    struct Slot {
        std::uint64_t gen = 0;
        const void* list = nullptr;
        int k = 0, n = 0, in_bytes = 0;
        bool have_utils = false;
        GemmPick pick;
    };
    // 32 sets of 4, the least recently used of a set replaced: shapes whose hashes collide (the hash takes the list's
    // address, which moves from build to build) do not evict each other.
    thread_local Slot cache[32][4];
    thread_local std::uint64_t clock = 0;
    thread_local std::uint64_t used[32][4] = {};
    std::uint64_t hs = std::uint64_t(std::uint32_t(k)) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(std::uint32_t(n)) * 0xC2B2AE3D27D4EB4Full ^
                      std::uint64_t(std::uint32_t(in_bytes)) << 17 ^ std::uint64_t(reinterpret_cast<std::uintptr_t>(list));
    hs ^= hs >> 29;
    hs *= 0xBF58476D1CE4E5B9ull;
    hs ^= hs >> 32;
    const std::size_t set = std::size_t(hs >> 59);
    ++clock;
    int way = -1, victim = 0;
    for (int i = 0; i < 4; ++i) {
        const Slot& sl = cache[set][i];
        if (sl.gen == gen_ && sl.list == list && sl.k == k && sl.n == n && sl.in_bytes == in_bytes) {
            way = i;
            break;
        }
        if (used[set][i] < used[set][victim]) victim = i;
    }
    Slot& slot = cache[set][way >= 0 ? way : victim];
    used[set][way >= 0 ? way : victim] = clock;
    GemmPick& p = slot.pick;
    if (way < 0) {
        bool dtype_known = false;  // the family has tables of the query's input width: only those compete
        if (list && in_bytes > 0)
            for (const Table* t : *list) dtype_known = dtype_known || t->key[2] == in_bytes;
        double best_d;
        p.best = nearest(list, [&](const Table* t) { return !dtype_known || t->key[2] == in_bytes; }, q, 2, best_d);
        p.dist = best_d;
        slot.gen = gen_;
        slot.list = list;
        slot.k = k;
        slot.n = n;
        slot.in_bytes = in_bytes;
        slot.have_utils = false;
    }
    // InferSim's and BLIS's GEMM tables time each call from Python: short kernels carry a per-call overhead
    // (calibrated) that a kernel inside a CUDA graph does not pay; the kernel floor is added back by the estimator.
    // AIConfigurator's tables were timed inside CUDA graphs already.
    const double ovh = p.best && !p.best->graph_timed ? calibration.gemm_table_overhead_us * 1e-6 : 0.0;
    if (!(slot.have_utils && p.ovh == ovh)) {
        // what at(1, m) reads, whatever m: the line at 1 (the GEMM tables have that one line) and its points' utils
        p.line = -1;
        p.utils.clear();
        if (p.best) {
            const auto& xs = p.best->x1s;
            const std::size_t hi = std::size_t(std::lower_bound(xs.begin(), xs.end(), 1.0) - xs.begin());
            if (hi < xs.size() && std::fabs(xs[hi] - 1.0) <= 1e-9 * 1.0) {
                p.line = int(hi);
                for (const Point& pt : p.best->lines[hi]) p.utils.push_back(util_of(pt, ovh));
            }
        }
        p.ovh = ovh;
        slot.have_utils = true;
        // the memory-bound transfer ratio, as gemm_at computes it for any m > 0 (kernels::gemm_tile_efficiency_by)
        p.mem_k = 0;
        p.mem_ratio = 0;
        const FamilyRef* ref = p.best ? p.best->ref : nullptr;
        if (ref && p.dist != 0 && k > 0 && n > 0 && p.best->key[0] > 0 && p.best->key[1] > 0 && ref->sm_count > 0) {
            const double f = calibration.gemm_tile_fixed_iters, kit = std::ceil(k / 128.0),
                         kit0 = std::ceil(double(p.best->key[0]) / 128.0);
            p.mem_ratio = kit / (kit + f) / (kit0 / (kit0 + f));
            p.mem_k = k;
        }
    }
    return p;
}

void Tables::gemm_pick(std::string_view family, int k, int n, int in_bytes, GemmPick& out) const {
    const GemmPick& p = gemm_slot(family, k, n, in_bytes);
    out.best = p.best;
    out.dist = p.dist;
    out.ovh = p.ovh;
    out.line = p.line;
    out.utils.assign(p.utils.begin(), p.utils.end());
    out.mem_k = p.mem_k;
    out.mem_ratio = p.mem_ratio;
}

TableHit Tables::gemm(std::string_view family, double m, int k, int n, int in_bytes) const {
    return gemm_at(gemm_slot(family, k, n, in_bytes), m, k, n);
}

TableHit Tables::gemm_at(const GemmPick& pick, double m, int k, int n) const {
    const Table* best = pick.best;
    const double best_d = pick.dist;
    TableHit h;
    if (best && pick.line >= 0) {
        // hit_from(best, best_d, 1, m, ovh), its interpolation reading the kept utils
        const std::vector<Point>& pts = best->lines[std::size_t(pick.line)];
        const double* u = pick.utils.data();
        bool exact;
        h.found = true;
        h.util = interp_by(pts, m, exact, [u, &pts](const Point& p) { return u[&p - pts.data()]; });
        h.source = best_d > 0 ? Source::transferred : exact ? Source::measured : Source::interpolated;
        h.table = best->path.c_str();
    } else {
        h = hit_from(best, best_d, 1, m, pick.ovh);
    }
    const FamilyRef* ref = best ? best->ref : nullptr;
    if (!h.found || best_d == 0 || !ref) return h;
    // Another shape: move the measured efficiency through DeepGEMM's tiling (kernels::gemm_tile_efficiency), the
    // target's tiles against the measured shape's at the same m, on the side of the roofline the target sits on
    // (the table GPU's).
    const double in_b = best->key[2] > 0 ? best->key[2] : 1;
    const kernels::Cost c = kernels::gemm(m, k, n, in_b, in_b);
    const bool compute = c.flops / ((in_b == 1 ? ref->tflops_fp8 : ref->tflops_bf16) * 1e12) >= c.bytes / (ref->hbm_GBps * 1e9);
    const double f = calibration.gemm_tile_fixed_iters;
    // (memory-bound, the ratio does not depend on m: gemm_slot kept it)
    const double ratio = !compute && m > 0 && n > 0 && pick.mem_k == k && k > 0
                             ? pick.mem_ratio
                             : kernels::gemm_tile_efficiency_by(m, n, k, f, ref->sm_count, compute, dense_tiles) /
                                   kernels::gemm_tile_efficiency_by(m, best->key[1], best->key[0], f, ref->sm_count, compute, dense_tiles);
    h.util = std::clamp(h.util * ratio, 1e-9, 1.0);
    return h;
}

CommHit Tables::collective(std::string_view family, std::string_view op, std::string_view impl, int gpus,
                           double bytes) const {
    CommHit h;
    const auto* list = bucket(int(Kind::comm), family);
    if (!list || gpus < 2 || !(bytes > 0)) return h;
    const Table* t = nullptr;
    for (const Table* x : *list)
        if (x->variant.size() == op.size() + 1 + impl.size() && x->variant.compare(0, op.size(), op) == 0 &&
            x->variant[op.size()] == '/' && x->variant.compare(op.size() + 1, std::string::npos, impl) == 0) {
            t = x;
            break;
        }
    if (!t || t->x1s.empty()) return h;
    // log latency over log bytes along one GPU count; exact = on a measured message size
    auto along = [&](const std::vector<Point>& pts, bool& exact) {
        exact = false;
        if (bytes >= pts.back().x) {  // past the largest message: its bandwidth
            exact = bytes == pts.back().x;
            return std::log(pts.back().lat * bytes / pts.back().x);
        }
        return interp_by(pts, bytes, exact, [](const Point& p) { return std::log(p.lat); });
    };
    const double g = gpus;
    const auto hi = std::lower_bound(t->x1s.begin(), t->x1s.end(), g);
    if (hi == t->x1s.end() || (*hi != g && hi == t->x1s.begin())) return h;  // outside the measured GPU counts
    const size_t i = size_t(hi - t->x1s.begin());
    bool exact = false;
    double log_lat;
    if (*hi == g) {
        log_lat = along(t->lines[i], exact);
    } else {
        bool e0, e1;
        const double l0 = along(t->lines[i - 1], e0), l1 = along(t->lines[i], e1);
        const double w = (std::log(g) - std::log(t->x1s[i - 1])) / (std::log(t->x1s[i]) - std::log(t->x1s[i - 1]));
        log_lat = l0 + w * (l1 - l0);
    }
    h.found = true;
    h.latency_us = std::exp(log_lat) * 1e6;
    h.source = exact ? Source::measured : Source::interpolated;
    h.table = t->path.c_str();
    return h;
}

TableHit Tables::mha_decode(std::string_view family, int heads, int kv_heads, int head_dim, double batch, double kv_len,
                            bool fp8_kv) const {
    const int q[3] = {heads, kv_heads, head_dim};
    double d;
    const Table* t = nearest_kv(gen_, bucket(int(Kind::mha_decode), family), fp8_kv, q, d);
    return hit_from(t, d, batch, kv_len);
}

namespace {
// Prefill attention through FlashAttention's tile schedule (see tables.h). Each point of a one-sequence table is
// latency = overhead + roof / (rate x tile_eff(1 sequence, table heads, L)): the overhead (the benchmark's per-call
// cost, which a kernel inside a forward pass does not pay; the estimator adds the kernel floor back) is the
// intercept of a weighted least-squares line through the table's points, kept within [0, half the shortest
// latency]; rate is then each point's efficiency per useful tile.
TableHit prefill_hit(std::uint64_t gen, const Tables::Table* t, double dist, double seq_len, double seqs, double window,
                     int heads, int sms, const Calibration& cal, double hd_factor) {
    TableHit h;
    if (!t || t->lines.empty() || t->lines[0].empty()) return h;
    const std::vector<Point>& pts = t->lines[0];
    const FamilyRef* ref = t->ref;
    const double ref_sms = ref ? ref->sm_count : 132;
    const double k = cal.attn_tile_fixed_iters;
    // The fit and each point's rate depend on the table and k alone: kept per thread for the last few tables.
    struct Slot {
        std::uint64_t gen = 0;  // the table set's generation: a Table freed and another allocated at its address
        const Tables::Table* t = nullptr;
        double k = 0, ref_sms = 0;
        std::vector<double> rates;  // rate of each point of pts
    };
    thread_local Slot cache[8];
    thread_local unsigned next = 0;
    Slot* slot = nullptr;
    for (Slot& sl : cache)
        if (sl.gen == gen && sl.t == t && sl.k == k && sl.ref_sms == ref_sms && sl.rates.size() == pts.size()) slot = &sl;
    if (!slot) {
        slot = &cache[next++ & 7u];
        auto own_eff = [&](double L) { return kernels::flash_tile_efficiency(1, t->key[0], L, 0, k, ref_sms); };
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, shortest = 1e300;
        for (const Point& p : pts) {
            const double x = p.roof / own_eff(p.x), y = p.lat, w = 1.0 / (y * y);
            sw += w; sx += w * x; sy += w * y; sxx += w * x * x; sxy += w * x * y;
            shortest = std::min(shortest, y);
        }
        const double den = sw * sxx - sx * sx;
        double ovh = pts.size() >= 2 && den > 0 ? (sy - (sw * sxy - sx * sy) / den * sx) / sw : 0;
        ovh = std::clamp(ovh, 0.0, 0.5 * shortest);
        slot->gen = gen;
        slot->t = t;
        slot->k = k;
        slot->ref_sms = ref_sms;
        slot->rates.clear();
        for (const Point& p : pts) slot->rates.push_back(std::min(1.0, p.roof / std::max(p.lat - ovh, p.roof) / own_eff(p.x)));
    }
    const std::vector<double>& rates = slot->rates;
    auto rate = [&](const Point& p) { return rates[std::size_t(&p - pts.data())]; };
    bool exact;
    const double r = interp_by(pts, seq_len, exact, rate);
    const double eff = kernels::flash_tile_efficiency(seqs, heads, seq_len, window, k, sms > 0 ? sms : ref_sms);
    h.found = true;
    h.util = std::clamp(r * eff * hd_factor, 1e-9, 1.0);
    h.compute_only = true;
    const bool own_tiles = seqs == 1 && (window <= 0 || window >= seq_len) && (sms <= 0 || sms == int(ref_sms));
    h.source = dist > 0 ? Source::transferred : exact && own_tiles ? Source::measured : Source::interpolated;
    h.table = t->path.c_str();
    return h;
}
}  // namespace

TableHit Tables::mha_prefill(std::string_view family, int heads, int kv_heads, int head_dim, double seq_len, double seqs,
                             double window, int sms) const {
    const int q[3] = {heads, kv_heads, head_dim};
    double d;
    const Table* t = nearest_prefill(gen_, bucket(int(Kind::mha_prefill), family), q, d);
    const FamilyRef* ref = family_ref(family);
    const double hd = t && ref ? kernels::head_dim_factor(head_dim, t->key[2], ref->tflops_bf16, ref->sfu_tflops,
                                                          calibration.attn_softmax_exposed)
                               : 1.0;
    return prefill_hit(gen_, t, d, seq_len, seqs, window, heads, sms, calibration, hd);
}

TableHit Tables::mla_decode(std::string_view family, int heads, int kv_lora, int rope, double batch, double kv_len,
                            bool fp8_kv) const {
    const int q[3] = {heads, kv_lora, rope};
    double d;
    const Table* t = nearest_kv(gen_, bucket(int(Kind::mla_decode), family), fp8_kv, q, d);
    TableHit h = hit_from(t, d, batch, kv_len);
    const FamilyRef* ref = t ? t->ref : nullptr;
    if (!h.found || d == 0 || !ref) return h;
    // Another head count. The MLA tables (FlashInfer, 128 heads) sit just under the ridge at every point (compute
    // time 0.82 of memory time with a BF16 cache), so one roofline fraction cannot say which side limits the kernel.
    // Split it: the memory side streams at the best fraction this GPU's decode-attention tables reach (FlashInfer
    // MHA decode, memory-bound everywhere: 0.96 of HBM on H800); whatever time that leaves unexplained is the
    // compute side's. Few heads (16 per GPU under TP8) then run memory-bound at the streaming rate, where moving
    // the near-ridge fraction through the roofline read FlashMLA's 3000 GB/s as 2200.
    const double um = stream_util_[family_index(t->family)];  // ref != nullptr: a known family
    if (um <= 0) return h;
    const kernels::Cost ct = kernels::mla_decode(batch, kv_len, t->key[0], t->key[1], t->key[2], t->fp8_kv ? 1.0 : 2.0);
    const kernels::Cost cq = kernels::mla_decode(batch, kv_len, heads, kv_lora, rope, fp8_kv ? 1.0 : 2.0);
    const double P = ref->tflops_bf16 * 1e12, B = ref->hbm_GBps * 1e9;
    const double t_point = std::max(ct.flops / P, ct.bytes / B) / h.util;
    if (ct.bytes / B / um >= t_point) return h;  // the memory side explains the point: keep the roofline transfer
    const double uc = ct.flops / P / t_point;    // the compute efficiency the point implies
    const double tq = std::max(cq.flops / P / uc, cq.bytes / B / um);
    h.util = std::clamp(std::max(cq.flops / P, cq.bytes / B) / tq, 1e-9, 1.0);
    return h;
}

TableHit Tables::mla_prefill(std::string_view family, int heads, int qk_nope, int rope, double seq_len, double seqs,
                             double window, int sms) const {
    const int q[3] = {heads, qk_nope, rope};
    double d;
    const Table* t = nearest_prefill(gen_, bucket(int(Kind::mla_prefill), family), q, d);
    return prefill_hit(gen_, t, d, seq_len, seqs, window, heads, sms, calibration, 1.0);
}

#define MOE_CAL_FIELDS(X)                                                                                     \
    X(gemm_compute_eff) X(grouped_compute_eff) X(attn_prefill_compute_eff) X(attn_decode_bw_eff) X(hbm_bw_eff)   \
    X(kernel_floor_us) X(misc_passes) X(nvlink_ll_eff) X(rdma_ll_eff) X(ll_latency_us) X(nvlink_normal_eff)      \
    X(rdma_normal_eff) X(normal_latency_us) X(allreduce_eff) X(allreduce_latency_us) X(allgather_eff)            \
    X(prefill_overhead_ms) X(decode_overhead_ms) X(reserve_GB) X(cublas_workspace_MB) X(nccl_buffer_MB)          \
    X(grouped_load_factor) X(gemm_table_overhead_us) X(attn_tile_fixed_iters) X(attn_softmax_exposed) X(gemm_tile_fixed_iters) \
    X(dequant_flops_per_weight) X(mesh_latency_us) X(mesh_link_eff) X(mesh_write_eff)

bool parse_calibration(const nlohmann::json& j, Calibration& c, Issues& errors) {
    if (!j.is_object()) {
        errors.push_back({"calibration", "must be a JSON object"});
        return false;
    }
    const size_t before = errors.size();
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (k.empty() || k[0] == '_') continue;  // "_comment" keys
        bool known = false;
#define X(name) known = known || k == #name;
        MOE_CAL_FIELDS(X)
#undef X
        if (!known) errors.push_back({"calibration." + k, "unknown constant"});
    }
    // Each constant is {"value": v, "source": "..."} or a bare number.
    auto read = [&](const char* name, double& out) {
        auto it = j.find(name);
        if (it == j.end()) return;
        const nlohmann::json& v = it->is_object() && it->contains("value") ? (*it)["value"] : *it;
        if (!detail::is_number(v) || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > 1e6) {
            errors.push_back({std::string("calibration.") + name, "must be a finite number >= 0"});
            return;
        }
        out = v.get<double>();
    };
#define X(name) read(#name, c.name);
    MOE_CAL_FIELDS(X)
#undef X
    return errors.size() == before;
}

nlohmann::json calibration_to_json(const Calibration& c) {
    nlohmann::json j;
#define X(name) j[#name] = c.name;
    MOE_CAL_FIELDS(X)
#undef X
    return j;
}

const Tables& builtin_tables() {
    static const Tables tables = [] {
        Tables t;
        Issues errors;
        for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
            std::string_view p(kEmbeddedFiles[i].path);
            if (p.substr(0, 11) != "bench_data/" || p.size() < 4 || p.substr(p.size() - 4) != ".csv") continue;
            t.load_csv(p, std::string_view(kEmbeddedFiles[i].data, kEmbeddedFiles[i].size), errors);
        }
        for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
            if (std::string_view(kEmbeddedFiles[i].path) != "presets/calibration.json") continue;
            auto j = nlohmann::json::parse(kEmbeddedFiles[i].data, kEmbeddedFiles[i].data + kEmbeddedFiles[i].size, nullptr, false);
            parse_calibration(j, t.calibration, errors);
        }
        return t;
    }();
    return tables;
}

}  // namespace moe
