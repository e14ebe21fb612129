// fuzz_csv.cpp — libFuzzer target: the bench_data CSV loader (moe::Tables::load_csv) and lookups in what it loads.
//
// Input: the first line is the file's path (which picks the table kind, phase, GPU family and, for attention, the
// shape from the file name), the rest is the CSV text, e.g.
//   bench_data/mha/decode/h800/32-8-128.csv
//   dtype,kv_dtype,batch_size,kv_len,latency_us,mfu
//   bf16,bf16,1,1024,20.91,0.014
// Every error must name the file (and the line, for a bad row). Whatever loads is looked up at grid points, between
// them and far outside them: a hit's utilisation is in (0, 1]. Then estimate() runs on those tables alone (with the
// built-in calibration) for a GPU of the file's family, checked by fuzz::check_estimate.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

namespace {

void check_hit(const moe::TableHit& h, const char* what) {
    if (!h.found) return;
    if (!std::isfinite(h.util) || !(h.util > 0) || h.util > 1)
        fuzz::fail(std::string(what) + ": utilisation " + std::to_string(h.util) + " outside (0, 1]");
    if (h.table == nullptr || h.table[0] == '\0') fuzz::fail(std::string(what) + ": a hit that names no table");
}

void check_comm(const moe::CommHit& h) {
    if (!h.found) return;
    if (!std::isfinite(h.latency_us) || !(h.latency_us > 0)) fuzz::fail("collective: latency " + std::to_string(h.latency_us));
    if (h.table == nullptr || h.table[0] == '\0') fuzz::fail("collective: a hit that names no table");
}

const char* const kFamilies[] = {"h800", "h20", "h100", "h200", "b200", "gb200"};
const double kTokens[] = {0, 1, 3, 64, 1000, 8192, 1e5, 1e9, 1e15};
const int kShapes[] = {0, 1, 7, 128, 2048, 7168, 1 << 20};

// A scenario on a GPU whose tables are `family`.
const char* scenario_for(const char* family) {
    if (std::string_view(family) == "h20")
        return R"({"model":"qwen3-30b-a3b","hardware":"h20","parallel":{"dp":4,"ep":4},"runtime":{"two_batch_overlap":true}})";
    if (std::string_view(family) == "h100") return R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4}})";
    if (std::string_view(family) == "h200") return R"({"model":"llama-3.1-70b","hardware":"h200","parallel":{"tp":8}})";
    if (std::string_view(family) == "b200")
        return R"({"model":"qwen3-30b-a3b","hardware":"b200","parallel":{"tp":2,"dp":4,"ep":8},"runtime":{"a2a_backend":"allgather"}})";
    if (std::string_view(family) == "gb200")
        return R"({"model":"qwen3-30b-a3b","hardware":{"base":"b200","tables":"gb200","gpus_per_node":4},"parallel":{"tp":4}})";
    return R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32},"workload":{"batch":17}})";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nl = input.find('\n');
    if (nl == std::string_view::npos) return 0;
    const std::string_view path = input.substr(0, nl), text = input.substr(nl + 1);

    moe::Tables t;
    t.calibration = moe::builtin_tables().calibration;
    moe::Issues errs;
    const bool ok = t.load_csv(path, text, errs);
    fuzz::check_issues(errs, "load_csv");
    if (!ok && errs.empty()) fuzz::fail("load_csv failed without an error");
    for (const moe::Issue& i : errs)
        if (i.path.empty() && !path.empty()) fuzz::fail("load_csv: an error that names no file: " + i.message);
    if (t.table_count() == 0) return 0;

    for (const char* fam : kFamilies) {
        if (!t.has_family(fam)) continue;
        for (int k : kShapes)
            for (double m : kTokens) {
                check_hit(t.gemm(fam, m, k, k == 0 ? 1 : 2 * k), "gemm");
                check_hit(t.gemm(fam, m, k, k == 0 ? 1 : 2 * k, 1 + k % 2), "gemm by dtype");
                for (const char* op : {"all_reduce", "all_gather", "reduce_scatter"})
                    for (const char* impl : {"sglang", "sglang_eager", "nccl"}) check_comm(t.collective(fam, op, impl, k % 9, m));
                check_hit(t.grouped_gemm(fam, true, 256, 8, 7168, k > 0 ? k : 1, 32, m), "grouped_gemm masked");
                check_hit(t.grouped_gemm(fam, false, k > 8 ? k : 8, 8, 2048, 768, k > 0 ? k : 1, m), "grouped_gemm");
                check_hit(t.mha_decode(fam, k, k > 0 ? k / 2 : 0, 128, m, m * 3 + 1, k % 2 == 0), "mha_decode");
                check_hit(t.mha_prefill(fam, 32, 8, k, m), "mha_prefill");
                check_hit(t.mla_decode(fam, k, 512, 64, m, 4096), "mla_decode");
                check_hit(t.mla_prefill(fam, 128, k, 64, m), "mla_prefill");
            }
        moe::ParseResult r = moe::parse_scenario(scenario_for(fam), moe::builtin_catalog());
        if (!r.ok()) fuzz::fail("a fixed scenario does not parse");
        for (const char* phase : {"prefill", "decode"}) {
            moe::Issues e2;
            moe::set_path(r.scenario, "workload.phase", phase, moe::builtin_catalog(), e2);
            moe::Estimate e = moe::estimate(r.scenario, t);
            fuzz::check_estimate(e, "estimate on fuzzed tables");
            if (!e.ok) fuzz::fail("a valid scenario fails on fuzzed tables: " + e.errors[0].text());
        }
    }
    return 0;
}
