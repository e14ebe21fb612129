// tables.cpp — the table set: its reference GPU families, generations, buckets by kind and family, the calibration constants
// (parse and print) and the built-in set (every embedded bench_data CSV plus presets/calibration.json).
#include "core/data/tables.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/kernels.h"
#include "core/data/tables_store.h"
#include "core/base/embedded.h"
#include "core/base/json_util.h"
#include "core/data/calibration.h"

namespace moe {
using namespace tables_detail;

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
    std::copy(std::begin(o.moe_kernels_), std::end(o.moe_kernels_), std::begin(moe_kernels_));
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
        for (int f = 0; f < kFamilySlots; ++f) std::swap(moe_kernels_[f], copy.moe_kernels_[f]);
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

#define MOE_CAL_FIELDS(X)                                                                                     \
    X(gemm_compute_eff) X(grouped_compute_eff) X(attn_prefill_compute_eff) X(attn_decode_bw_eff) X(hbm_bw_eff)   \
    X(kernel_floor_us) X(misc_passes) X(nvlink_ll_eff) X(rdma_ll_eff) X(ll_latency_us) X(nvlink_normal_eff)      \
    X(rdma_normal_eff) X(normal_latency_us) X(allreduce_eff) X(allreduce_latency_us) X(allgather_eff)            \
    X(prefill_overhead_ms) X(decode_overhead_ms) X(reserve_GB) X(cublas_workspace_MB) X(nccl_buffer_MB)          \
    X(grouped_load_factor) X(gemm_table_overhead_us) X(attn_tile_fixed_iters) X(attn_softmax_exposed) X(gemm_tile_fixed_iters) \
    X(dequant_flops_per_weight) X(mesh_latency_us) X(mesh_link_eff) X(mesh_write_eff) X(triton_moe_compute_eff)        \
    X(triton_moe_bw_eff) X(triton_moe_fixed_us) X(flashinfer_moe_compute_eff) X(flashinfer_moe_bw_eff)          \
    X(flashinfer_moe_fixed_us) X(sparse_attn_prefill_eff)

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
        for (const EmbeddedFile& f : embedded_files()) {
            std::string_view p(f.path);
            if (p.substr(0, 11) != "bench_data/" || p.size() < 4 || p.substr(p.size() - 4) != ".csv") continue;
            t.load_csv(p, std::string_view(f.data, f.size), errors);
        }
        for (const EmbeddedFile& f : embedded_files()) {
            if (std::string_view(f.path) != "presets/calibration.json") continue;
            auto j = nlohmann::json::parse(f.data, f.data + f.size, nullptr, false);
            parse_calibration(j, t.calibration, errors);
        }
        return t;
    }();
    return tables;
}

}  // namespace moe
