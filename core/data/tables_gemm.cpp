// tables_gemm.cpp — GEMM lookups: grouped GEMMs (masked and contiguous expert layouts) and dense GEMMs, with the nearest measured
// shape transferred through DeepGEMM's tile schedule.
#include "core/data/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/kernels.h"
#include "core/data/tables_store.h"
#include "core/base/set_cache.h"

namespace moe {
using namespace tables_detail;

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
    struct Query {
        std::uint64_t gen;
        const void *want, *other;
        int E, top_k, hidden, inter, ep;
        bool operator==(const Query& o) const {
            return gen == o.gen && want == o.want && other == o.other && E == o.E && top_k == o.top_k &&
                   hidden == o.hidden && inter == o.inter && ep == o.ep;
        }
    };
    thread_local SetCache<Query, GroupedPick, 1, 4> picks;
    const Query q{gen, want_list, other_list, E, top_k, hidden, inter, ep};
    if (const GroupedPick* p = picks.find(q)) return *p;
    const GroupedPick p = pick_grouped_scan(want_list, other_list, E, top_k, hidden, inter, ep);
    picks.insert(q) = p;
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
// kernels::deepgemm_tiles(m, n, 1, sms), kept per thread: the pick depends on m only through BM (m <= 64) and the
// m-block count ceil(m / BM), so the GEMMs of a sweep or plan over the batch share a few picks per shape (the pick
// tries 15 BN values; it was most of a transferred GEMM lookup's time).
kernels::DeepGemmTiles dense_tiles(double m, double n, double sms) {
    const double bm = m <= 64 ? 64 : 128;
    const double mb = std::ceil(std::max(m, 0.0) / bm);
    // bitwise compares: the same doubles (NaN never reaches here: m, n, sms are checked positive by the caller)
    struct Query {
        double bm, mb, n, sms;
        bool operator==(const Query& o) const { return bm == o.bm && mb == o.mb && n == o.n && sms == o.sms; }
    };
    thread_local SetCache<Query, kernels::DeepGemmTiles, 256, 1> tiles;
    std::uint64_t h[3];
    std::memcpy(&h[0], &mb, 8);
    std::memcpy(&h[1], &n, 8);
    std::memcpy(&h[2], &sms, 8);
    std::uint64_t hs = (h[0] * 0x9E3779B97F4A7C15ull) ^ (h[1] * 0xC2B2AE3D27D4EB4Full) ^ (h[2] * 0x165667B19E3779F9ull) ^
                       (bm == 64 ? 0x27D4EB2F165667C5ull : 0);
    hs ^= hs >> 31;
    hs *= 0xBF58476D1CE4E5B9ull;
    const Query q{bm, mb, n, sms};
    if (const kernels::DeepGemmTiles* t = tiles.find(q, hs)) return *t;
    return tiles.insert(q, hs) = kernels::deepgemm_tiles(m, n, 1, sms);
}
}  // namespace

namespace {
// The corners of the rectangle of measured shapes around (k, n) among `best`'s kin (the same format and engine, one
// file's shapes), with bilinear weights in k and n; false when the kin are not a full k x n grid, (k, n) lies outside
// their axes or a corner was not measured. Why bilinear in linear k and n: a GEMM's time at fixed m is a fixed part plus bytes and FLOPs, each a
// sum of terms in k, n and k x n (weights k n, activations m k and m n, FLOPs 2 m k n), so it is exact for a
// roofline with a fixed overhead whichever side binds; only the tile quantisation between the corners is smoothed.
bool grid_corners(const std::vector<const Tables::Table*>* list, const Tables::Table* best, int k, int n,
                  Tables::GemmPick& p) {
    if (!list || !best) return false;
    // the kin's shapes, each once (the loader keeps one table per shape of a file)
    struct Shape {
        int k, n;
        const Tables::Table* t;
        bool operator<(const Shape& o) const { return k != o.k ? k < o.k : n < o.n; }
    };
    std::vector<Shape> shapes;
    for (const Tables::Table* t : *list)
        if (t->key[2] == best->key[2] && t->key[3] == best->key[3] && t->family == best->family && t->path == best->path)
            shapes.push_back({t->key[0], t->key[1], t});
    std::sort(shapes.begin(), shapes.end());
    shapes.erase(std::unique(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) { return !(a < b) && !(b < a); }),
                 shapes.end());
    // a full grid only (every k with every n: AIConfigurator's tables); a list of the shapes some models need
    // (InferSim's, BLIS's) keeps the nearest shape through the tile model, which the DeepGEMM rows calibrate
    std::vector<int> ks, ns;
    for (const Shape& sh : shapes) ks.push_back(sh.k), ns.push_back(sh.n);
    for (auto* v : {&ks, &ns}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    if (shapes.size() != ks.size() * ns.size()) return false;
    // the nearest measured axis values at or below / at or above the query
    const auto below = [](const std::vector<int>& v, int x) { auto it = std::upper_bound(v.begin(), v.end(), x); return it == v.begin() ? 0 : *(it - 1); };
    const auto above = [](const std::vector<int>& v, int x) { auto it = std::lower_bound(v.begin(), v.end(), x); return it == v.end() ? 0 : *it; };
    const int k0 = below(ks, k), k1 = above(ks, k), n0 = below(ns, n), n1 = above(ns, n);
    if (k0 == 0 || k1 == 0 || n0 == 0 || n1 == 0) return false;
    const int cks[2] = {k0, k1}, cns[2] = {n0, n1};
    const double wk = k1 > k0 ? double(k - k0) / double(k1 - k0) : 0.0, wn = n1 > n0 ? double(n - n0) / double(n1 - n0) : 0.0;
    for (int i = 0; i < 4; ++i) {  // a full grid holds every corner
        const Shape want{cks[i / 2], cns[i % 2], nullptr};
        p.corner[i] = std::lower_bound(shapes.begin(), shapes.end(), want)->t;
        p.corner_w[i] = (i / 2 ? wk : 1.0 - wk) * (i % 2 ? wn : 1.0 - wn);
    }
    return true;
}
}  // namespace

// The per-thread pick of a GEMM shape (gemm_pick, gemm): the table it reads depends only on (table set, family, k, n,
// format, engine), not on m, and is kept in a small per-thread cache (the nearest-shape scan over a family's tables was a
// third of an estimate's time), with the line it interpolates and that line's efficiencies at the overhead.
Tables::GemmPick& Tables::gemm_slot(std::string_view family, int k, int n, int format, int engine) const {
    const int q[2] = {k, n};
    const auto* list = bucket(int(Kind::gemm), family);
    struct Query {
        std::uint64_t gen = 0;
        const void* list = nullptr;
        int k = 0, n = 0, format = 0, engine = 0;
        bool operator==(const Query& o) const {
            return gen == o.gen && list == o.list && k == o.k && n == o.n && format == o.format && engine == o.engine;
        }
    };
    struct Slot {
        bool have_utils = false;
        GemmPick pick;
    };
    // 32 sets of 4: shapes whose hashes collide (the hash takes the list's address, which moves from build to build)
    // do not evict each other.
    thread_local SetCache<Query, Slot, 32, 4> picks;
    std::uint64_t hs = std::uint64_t(std::uint32_t(k)) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(std::uint32_t(n)) * 0xC2B2AE3D27D4EB4Full ^
                      std::uint64_t(std::uint32_t(format * 8 + engine)) << 17 ^ std::uint64_t(reinterpret_cast<std::uintptr_t>(list));
    hs ^= hs >> 29;
    hs *= 0xBF58476D1CE4E5B9ull;
    hs ^= hs >> 32;
    const Query key{gen_, list, k, n, format, engine};
    Slot* found = picks.find(key, hs);
    Slot& slot = found ? *found : picks.insert(key, hs);
    GemmPick& p = slot.pick;
    if (!found) {
        // The format's tables of the wanted engine, else of any engine; else a related format's (FP8 per tensor
        // and block-scaled for each other, NVFP4 from FP8); else (format 0, or none related) any table.
        static constexpr int related[5][3] = {{0, 0, 0}, {1, 3, 0}, {2, 0, 0}, {3, 1, 0}, {4, 1, 3}};
        double best_d = 1e300;
        p.best = nullptr;
        for (int i = 0; i < 3 && !p.best && format >= 1 && format <= 4; ++i) {
            const int f = related[format][i];
            if (f == 0) break;
            // the wanted engine's table of the format, else SGLang's (vLLM's block FP8 and TRT-LLM's per-tensor FP8
            // rows are left out of the distilled files: bench_data/README.md), else any engine's
            const int sglang = int(GemmEngine::sglang);
            bool have_f = false, have_fe = false, have_fs = false;
            if (list)
                for (const Table* t : *list) {
                    have_f = have_f || t->key[2] == f;
                    have_fe = have_fe || (t->key[2] == f && t->key[3] == engine);
                    have_fs = have_fs || (t->key[2] == f && t->key[3] == sglang);
                }
            if (!have_f) continue;
            const int want = have_fe ? engine : have_fs ? sglang : -1;
            p.best = nearest(list, [&](const Table* t) { return t->key[2] == f && (want < 0 || t->key[3] == want); }, q, 2, best_d);
        }
        if (!p.best) p.best = nearest(list, [](const Table*) { return true; }, q, 2, best_d);
        p.dist = best_d;
        for (int i = 0; i < 4; ++i) p.corner[i] = nullptr, p.corner_w[i] = 0;
        if (p.best && best_d > 0) grid_corners(list, p.best, k, n, p);  // fills the corners only when it finds all four
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

void Tables::gemm_pick(std::string_view family, int k, int n, GemmKernel kernel, GemmPick& out) const {
    const GemmPick& p = gemm_slot(family, k, n, int(kernel.format), int(kernel.engine));
    out.best = p.best;
    out.dist = p.dist;
    out.ovh = p.ovh;
    out.line = p.line;
    out.utils.assign(p.utils.begin(), p.utils.end());
    out.mem_k = p.mem_k;
    out.mem_ratio = p.mem_ratio;
    for (int i = 0; i < 4; ++i) out.corner[i] = p.corner[i], out.corner_w[i] = p.corner_w[i];
}

TableHit Tables::gemm(std::string_view family, double m, int k, int n, int in_bytes) const {
    const int format = in_bytes == 2 ? int(GemmFormat::bf16) : in_bytes == 1 ? int(GemmFormat::fp8_block) : 0;
    return gemm_at(gemm_slot(family, k, n, format, 0), m, k, n);
}

TableHit Tables::gemm(std::string_view family, double m, int k, int n, GemmKernel kernel) const {
    return gemm_at(gemm_slot(family, k, n, int(kernel.format), int(kernel.engine)), m, k, n);
}

TableHit Tables::gemm_at(const GemmPick& pick, double m, int k, int n) const {
    const Table* best = pick.best;
    const double best_d = pick.dist;
    TableHit h;
    if (const FamilyRef* ref = best && pick.corner[0] ? best->ref : nullptr; ref && ref->hbm_GBps > 0) {
        // inside the grid and memory-bound on the table's GPU (a decode GEMM): each corner's measured latency at m (its
        // efficiency x its roofline there), interpolated bilinearly in k and n, over this shape's roofline there
        // (grid_corners). A compute-bound shape keeps the nearest one transferred through DeepGEMM's tiles below:
        // there the SM waves of the tile grid, which a bilinear reading smooths over, set the time (DeepGEMM's
        // m 4,096 x n 2,112 on H800, read bilinearly between InferSim's n 1,536 and 4,096: 1,367 TFLOPS against
        // 1,127 measured).
        const GemmFormat f = GemmFormat(best->key[2]);
        const double in_b = gemm_format_bytes(f), peak = format_peak_tflops(*ref, f) * 1e12, bw = ref->hbm_GBps * 1e9;
        auto roof = [&](double kk, double nn) {
            const kernels::Cost c = kernels::gemm(m, kk, nn, in_b, in_b);
            return std::max(c.flops / peak, c.bytes / bw);
        };
        const kernels::Cost q = kernels::gemm(m, k, n, in_b, in_b);
        if (peak > 0 && q.flops / peak < q.bytes / bw) {
            double lat = 0;
            for (int i = 0; i < 4; ++i) {
                if (!(pick.corner_w[i] > 0)) continue;
                const Table* t = pick.corner[i];
                bool exact;
                const double u = std::max(t->at(1, m, exact, pick.ovh), 1e-9);
                lat += pick.corner_w[i] * roof(t->key[0], t->key[1]) / u;
            }
            h.found = true;
            h.util = lat > 0 ? std::clamp(q.bytes / bw / lat, 1e-9, 1.0) : 1e-9;
            h.source = Source::interpolated;
            h.table = best->path.c_str();
            return h;
        }
    }
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
    const GemmFormat bf = GemmFormat(best->key[2]);
    const double in_b = gemm_format_bytes(bf);
    const kernels::Cost c = kernels::gemm(m, k, n, in_b, in_b);
    const bool compute = c.flops / (format_peak_tflops(*ref, bf) * 1e12) >= c.bytes / (ref->hbm_GBps * 1e9);
    const double f = calibration.gemm_tile_fixed_iters;
    // (memory-bound, the ratio does not depend on m: gemm_slot kept it)
    const double ratio = !compute && m > 0 && n > 0 && pick.mem_k == k && k > 0
                             ? pick.mem_ratio
                             : kernels::gemm_tile_efficiency_by(m, n, k, f, ref->sm_count, compute, dense_tiles) /
                                   kernels::gemm_tile_efficiency_by(m, best->key[1], best->key[0], f, ref->sm_count, compute, dense_tiles);
    h.util = std::clamp(h.util * ratio, 1e-9, 1.0);
    return h;
}

}  // namespace moe
