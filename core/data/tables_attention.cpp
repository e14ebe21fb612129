// tables_attention.cpp — attention lookups: MHA/GQA and MLA, decode (by KV format) and prefill (through FlashAttention's tile
// schedule).
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
// A decode-attention table (3-int key) with the query's KV-cache dtype, else the nearest of any dtype, one step
// further away (so never `measured`).
const Tables::Table* nearest_kv(std::uint64_t gen, const std::vector<const Tables::Table*>* tables, bool fp8_kv, const int* q,
                                double& dist) {
    // The pick depends on (table set, list, KV format, shape) only, not on the batch or the KV length: kept in a small
    // per-thread cache keyed on all of them (a decode estimate asks once or twice per phase, a sweep the same shapes).
    struct Query {
        std::uint64_t gen;
        const void* list;
        bool fp8;
        int q[3];
        bool operator==(const Query& o) const {
            return gen == o.gen && list == o.list && fp8 == o.fp8 && q[0] == o.q[0] && q[1] == o.q[1] && q[2] == o.q[2];
        }
    };
    struct Pick {
        const Tables::Table* best;
        double dist;
    };
    thread_local SetCache<Query, Pick, 1, 8> picks;
    const Query key{gen, tables, fp8_kv, {q[0], q[1], q[2]}};
    if (const Pick* p = picks.find(key)) {
        dist = p->dist;
        return p->best;
    }
    const Tables::Table* t = nearest(tables, [&](const Tables::Table* x) { return x->fp8_kv == fp8_kv; }, q, 3, dist);
    if (!t) t = nearest(tables, [](const Tables::Table*) { return true; }, q, 3, dist), dist += 1;
    picks.insert(key) = {t, dist};
    return t;
}
// A prefill-attention table (3-int key, any KV format): the nearest shape, kept per thread like nearest_kv's pick
// (it depends on the table set, the list and the shape alone; every prefill estimate asks once per layer kind).
const Tables::Table* nearest_prefill(std::uint64_t gen, const std::vector<const Tables::Table*>* tables, const int* q,
                                     double& dist) {
    struct Query {
        std::uint64_t gen;
        const void* list;
        int q[3];
        bool operator==(const Query& o) const {
            return gen == o.gen && list == o.list && q[0] == o.q[0] && q[1] == o.q[1] && q[2] == o.q[2];
        }
    };
    struct Pick {
        const Tables::Table* best;
        double dist;
    };
    thread_local SetCache<Query, Pick, 1, 4> picks;
    const Query key{gen, tables, {q[0], q[1], q[2]}};
    if (const Pick* p = picks.find(key)) {
        dist = p->dist;
        return p->best;
    }
    const Tables::Table* t = nearest(tables, [](const Tables::Table*) { return true; }, q, 3, dist);
    picks.insert(key) = {t, dist};
    return t;
}
}  // namespace

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
    struct Query {
        std::uint64_t gen = 0;  // the table set's generation: a Table freed and another allocated at its address
        const Tables::Table* t = nullptr;
        double k = 0, ref_sms = 0;
        std::size_t points = 0;
        bool operator==(const Query& o) const {
            return gen == o.gen && t == o.t && k == o.k && ref_sms == o.ref_sms && points == o.points;
        }
    };
    thread_local SetCache<Query, std::vector<double>, 1, 8> fits;  // the rate of each point of pts
    const Query key{gen, t, k, ref_sms, pts.size()};
    std::vector<double>* slot = fits.find(key);
    if (!slot) {
        slot = &fits.insert(key);
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
        slot->clear();
        for (const Point& p : pts) slot->push_back(std::min(1.0, p.roof / std::max(p.lat - ovh, p.roof) / own_eff(p.x)));
    }
    const std::vector<double>& rates = *slot;
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

}  // namespace moe
