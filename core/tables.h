// tables.h — measured kernel-efficiency tables (bench_data/ CSVs), checked when loaded, looked up with
// interpolation between grid points; every lookup says where its number came from.
//
//   moe::Tables t;  moe::Issues errs;
//   t.load_csv("bench_data/gemm/h800/data.csv", text, errs);   // columns read by header name
//   const moe::Tables& builtin = moe::builtin_tables();         // every embedded bench_data file
//   moe::TableHit h = builtin.gemm("h800", m, k, n);            // h.mfu, h.source, h.table
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "types.h"

namespace moe {

// Result of a lookup: an efficiency measured on GPU family `family` (not necessarily the target's).
struct TableHit {
    bool found = false;
    double mfu = 0;          // achieved FLOP/s / the table's reference peak (see `peak_dtype`)
    Dtype peak_dtype = Dtype::bf16;  // which peak the table's mfu is relative to (DeepGEMM tables: fp8)
    Source source = Source::analytical;  // measured (on a grid point) or interpolated
    const char* table = "";  // the file it came from
};

class Tables {
public:
    // path: "bench_data/<kind>/<phase?>/<family>/<file>.csv". Unknown kinds are ignored (kept for provenance).
    bool load_csv(std::string_view path, std::string_view text, Issues& errors);
    std::size_t table_count() const { return tables_.size(); }
    std::size_t row_count() const;

    // Dense GEMM (M x K) * (K x N): exact (K, N) shape, interpolated in log M.
    TableHit gemm(std::string_view family, double m, int k, int n) const;
    // Grouped GEMM (routed experts), by model shape and GPUs in EP; interpolated in log tokens and log GPUs.
    // phase decode = masked layout (batch per GPU), prefill = contiguous layout (tokens per GPU).
    TableHit grouped_gemm(std::string_view family, Phase phase, int num_experts, int top_k, int hidden,
                          int moe_intermediate, int ep, double tokens_per_gpu) const;
    // Attention core. MHA/GQA decode: heads per rank, kv heads per rank, head dim, batch, kv length.
    TableHit mha_decode(std::string_view family, int heads, int kv_heads, int head_dim, int tp, double batch,
                        double kv_len, Dtype kv) const;
    TableHit mha_prefill(std::string_view family, int heads, int kv_heads, int head_dim, double seq_len) const;
    TableHit mla_decode(std::string_view family, int heads, int kv_lora, int rope, double batch, double kv_len) const;
    TableHit mla_prefill(std::string_view family, int heads, int qk_nope, int rope, double seq_len) const;

    struct Table;  // opaque
    ~Tables();
    Tables();
    Tables(const Tables&);
    Tables& operator=(const Tables&);

private:
    std::vector<Table*> tables_;
    const Table* find(std::string_view kind, std::string_view family, std::string_view key) const;
};

const Tables& builtin_tables();

}  // namespace moe
