// test_tables_aic.cpp — the tables distilled from AIConfigurator (scripts/distill_aic.py): measured values read back
// through the lookups, with the AIC file and row they came from, and the TP all-reduce priced from them.
// AIC = ai-dynamo/aiconfigurator @ 095f58a5, files under shared/anchors/aic/perf/ (line numbers count the header as 1).
#include <string>

#include "core/base/json_util.h"
#include "core/data/kernels.h"
#include "test_helpers.h"

using moe::Phase;
using moe::Source;
using moe_test::run;

namespace {

// A GEMM table point back as a latency: util = roofline on the table GPU / latency (no per-call overhead is taken off
// the CUDA-graph-timed AIC tables).
double gemm_us(const moe::TableHit& h, double m, double k, double n, int in_bytes, double tflops, double hbm_GBps) {
    const moe::kernels::Cost c = moe::kernels::gemm(m, k, n, in_bytes, in_bytes);
    const double roof = std::max(c.flops / (tflops * 1e12), c.bytes / (hbm_GBps * 1e9));
    return roof / h.util * 1e6;
}

const moe::OpRecord* op_named(const moe::Estimate& e, const char* name, Phase ph) {
    for (const moe::OpRecord& o : e.ops)
        if (o.phase == ph && std::string(o.name) == name) return &o;
    return nullptr;
}

}  // namespace

TEST_CASE("AIC collectives: measured points read back, interpolated between them") {
    const moe::Tables& t = moe::builtin_tables();
    // h100_sxm/sglang-0.5.14/comm/custom_allreduce_perf.csv.gz line 106:
    // SGLang_CustomAllReduce_graph, bfloat16, 8 GPUs, 8192 elements (16384 B), 0.0037484800815582274 ms
    moe::CommHit a = t.collective("h100", "all_reduce", "sglang", 8, 16384);
    REQUIRE(a.found);
    CHECK(a.source == Source::measured);
    CHECK(a.latency_us == doctest::Approx(3.748).epsilon(1e-3));
    CHECK(std::string(a.table) == "bench_data/comm/h100/collectives.csv#all_reduce/sglang");
    // same file, line 128: 8 GPUs, 16777216 elements (33554432 B), 0.19803647994995116 ms
    CHECK(t.collective("h100", "all_reduce", "sglang", 8, 33554432).latency_us == doctest::Approx(198.0).epsilon(1e-3));
    // h100_sxm/nccl-2.29.2/comm/nccl_perf.csv.gz line 350: all_gather, half, 8 GPUs, 1048576 elements, 0.02218 ms
    CHECK(t.collective("h100", "all_gather", "nccl", 8, 2097152).latency_us == doctest::Approx(22.18).epsilon(1e-3));
    // h100_sxm/nccl-2.29.2/comm/nccl_perf.csv.gz line 469: all_reduce, half, 8 GPUs, 8192 elements, 0.01898 ms
    CHECK(t.collective("h100", "all_reduce", "nccl", 8, 16384).latency_us == doctest::Approx(18.98).epsilon(1e-3));

    // Between message sizes: log-log, inside the neighbours, `interpolated`.
    moe::CommHit lo = t.collective("h100", "all_reduce", "sglang", 8, 16384);
    moe::CommHit hi = t.collective("h100", "all_reduce", "sglang", 8, 32768);
    moe::CommHit mid = t.collective("h100", "all_reduce", "sglang", 8, 16384 * std::sqrt(2.0));
    CHECK(mid.source == Source::interpolated);
    CHECK(mid.latency_us == doctest::Approx(std::sqrt(lo.latency_us * hi.latency_us)).epsilon(1e-9));
    // Between GPU counts (6: between 4 and 8), inside the two.
    moe::CommHit g4 = t.collective("h100", "all_reduce", "nccl", 4, 1 << 24), g8 = t.collective("h100", "all_reduce", "nccl", 8, 1 << 24);
    moe::CommHit g6 = t.collective("h100", "all_reduce", "nccl", 6, 1 << 24);
    REQUIRE(g6.found);
    CHECK(g6.latency_us >= std::min(g4.latency_us, g8.latency_us));
    CHECK(g6.latency_us <= std::max(g4.latency_us, g8.latency_us));
    // Past the largest message (1 GiB of bf16): that point's bandwidth.
    moe::CommHit big = t.collective("h100", "all_reduce", "sglang", 8, 1073741824.0);
    CHECK(t.collective("h100", "all_reduce", "sglang", 8, 2147483648.0).latency_us == doctest::Approx(2 * big.latency_us));
    // Below the smallest: the smallest's latency (the floor).
    CHECK(t.collective("h100", "all_reduce", "sglang", 8, 16).latency_us ==
          doctest::Approx(t.collective("h100", "all_reduce", "sglang", 8, 256).latency_us));
    // The isolated spike at 512 elements (line 98 of the SGLang file: 0.0381 ms between 0.0033 and 0.0035) was
    // dropped by the distillation: the lookup interpolates its neighbours.
    CHECK(t.collective("h100", "all_reduce", "sglang", 8, 1024).latency_us < 5.0);
    // Not measured: 16 GPUs (beyond one H100 node), an unknown implementation, a family without collectives.
    CHECK(!t.collective("h100", "all_reduce", "sglang", 16, 16384).found);
    CHECK(!t.collective("h100", "all_reduce", "nope", 8, 16384).found);
    CHECK(!t.collective("h800", "all_reduce", "sglang", 8, 16384).found);
    // Every family's series exist: h200, b200, gb200 (GB200: 2 and 4 GPUs per node).
    CHECK(t.collective("h200", "all_reduce", "sglang", 8, 16384).found);
    CHECK(t.collective("b200", "all_reduce", "sglang", 8, 16384).found);
    CHECK(t.collective("gb200", "all_reduce", "sglang", 4, 16384).found);
    CHECK(!t.collective("gb200", "all_reduce", "sglang", 8, 16384).found);
}

TEST_CASE("AIC GEMM tables: B200 and H200 read their own measurements back") {
    const moe::Tables& t = moe::builtin_tables();
    // b200_sxm/sglang-0.5.14/gemm/gemm_perf.csv.gz line 64950: sglang_torch_linear, bfloat16, m=4096, n=7168, k=4096,
    // 0.15785245100657144 ms
    moe::TableHit b = t.gemm("b200", 4096, 4096, 7168, 2);
    REQUIRE(b.found);
    CHECK(b.source == Source::measured);
    CHECK(std::string(b.table) == "bench_data/gemm/b200/sglang_cuda_graph.csv");
    CHECK(gemm_us(b, 4096, 4096, 7168, 2, 2250, 8000) == doctest::Approx(157.9).epsilon(1e-3));
    // same file, line 11785: sglang_deepgemm_gemm_nt_f8f8bf16, fp8_block, m=64, n=2048, k=7168, 0.020358221398459542 ms
    moe::TableHit f = t.gemm("b200", 64, 7168, 2048, 1);
    REQUIRE(f.found);
    CHECK(f.source == Source::measured);
    CHECK(gemm_us(f, 64, 7168, 2048, 1, 4500, 8000) == doctest::Approx(20.36).epsilon(1e-3));
    // h200_sxm/sglang-0.5.14/gemm/gemm_perf.csv.gz line 43353: sglang_torch_linear, bfloat16, m=128, n=4096, k=7168,
    // 0.020921778347757127 ms
    moe::TableHit h = t.gemm("h200", 128, 7168, 4096, 2);
    REQUIRE(h.found);
    CHECK(h.source == Source::measured);
    CHECK(gemm_us(h, 128, 7168, 4096, 2, 989.5, 4800) == doctest::Approx(20.92).epsilon(1e-3));
    // Each engine's own kernels (bench_data/README.md, "gemm"): B200, m=64, n=2048, k=7168, from
    // b200_sxm/<engine>/gemm/gemm_perf.csv.gz: sglang-0.5.14 line 30675 sgl_kernel fp8_scaled_mm 0.01204 ms and line
    // 108820 flashinfer_cutedsl_nvfp4 0.01004 ms; trtllm-1.3.0rc20 line 82132 deepgemm fp8_block 0.01245 ms and line
    // 82059 torch_flow fp8 0.01904 ms (not kept); vllm-0.24.0 line 101635 CutlassFP8ScaledMMLinearKernel fp8 0.01198 ms.
    using moe::GemmEngine;
    using moe::GemmFormat;
    struct Want { GemmFormat f; GemmEngine e; double us; const char* table; };
    for (const Want& w : {Want{GemmFormat::fp8, GemmEngine::sglang, 12.04, "bench_data/gemm/b200/sglang_cuda_graph.csv"},
                          Want{GemmFormat::nvfp4, GemmEngine::sglang, 10.04, "bench_data/gemm/b200/sglang_cuda_graph.csv"},
                          Want{GemmFormat::fp8_block, GemmEngine::trtllm, 12.45, "bench_data/gemm/b200/trtllm_cuda_graph.csv"},
                          // TRT-LLM's per-tensor rows include a dynamic quantization (left out): SGLang's kernel
                          Want{GemmFormat::fp8, GemmEngine::trtllm, 12.04, "bench_data/gemm/b200/sglang_cuda_graph.csv"},
                          Want{GemmFormat::fp8, GemmEngine::vllm, 11.98, "bench_data/gemm/b200/vllm_cuda_graph.csv"}}) {
        moe::TableHit x = t.gemm("b200", 64, 7168, 2048, moe::GemmKernel{w.f, w.e});
        REQUIRE(x.found);
        CHECK(x.source == Source::measured);
        CHECK(std::string(x.table) == w.table);
        const moe::kernels::Cost c = moe::kernels::gemm(64, 7168, 2048, moe::gemm_format_bytes(w.f), moe::gemm_format_bytes(w.f));
        const double peak = (w.f == GemmFormat::nvfp4 ? 9000 : 4500) * 1e12;
        CHECK(std::max(c.flops / peak, c.bytes / 8000e9) / x.util * 1e6 == doctest::Approx(w.us).epsilon(2e-3));
    }
    // vLLM's and TRT-LLM's files hold no BF16 (cuBLAS in all three engines): SGLang's is read.
    CHECK(std::string(t.gemm("b200", 64, 7168, 2048, moe::GemmKernel{GemmFormat::bf16, GemmEngine::vllm}).table) ==
          "bench_data/gemm/b200/sglang_cuda_graph.csv");
    // H100 has no NVFP4 table: an NVFP4 query reads FP8's (per tensor first)
    CHECK(t.gemm("h100", 64, 7168, 2048, moe::GemmKernel{GemmFormat::nvfp4, GemmEngine::sglang}).found);
    // The input width picks the table: FP8 and BF16 of the same shape differ.
    CHECK(t.gemm("b200", 4096, 4096, 7168, 1).util != doctest::Approx(b.util));
    // Presets of those GPUs now use their own tables (no borrowing warning); a GEMM of theirs says where it came from.
    for (const char* hw : {"h200", "b200"}) {
        moe::Estimate e = run(std::string(R"({"model":"qwen3-8b","hardware":")") + hw + R"(","workload":{"phase":"decode","batch":64}})");
        for (const std::string& w : e.warnings) CHECK(w.find("no measured kernel tables") == std::string::npos);
        const moe::OpRecord* o = op_named(e, "attn.qkv_proj", Phase::decode);
        if (!o) o = op_named(e, "attn.o_proj", Phase::decode);
        REQUIRE(o);
        CHECK(std::string(o->table).find(std::string("bench_data/gemm/") + hw + "/") == 0);
        CHECK((o->source == Source::measured || o->source == Source::interpolated || o->source == Source::transferred));
    }
}

TEST_CASE("AIC GEMM grid: a memory-bound shape between measured shapes reads their latencies bilinearly") {
    // AIC measures every k x n of its axes (k 512 ... 16,384, n 512 ... 65,536), so a decode GEMM lies inside a rectangle of
    // measured ones. Llama-3.1-70B's gate/up at TP 2 on B200 under vLLM, FP8 per tensor, 16 tokens: k 8,192,
    // n 14,336. bench_data/gemm/b200/vllm_cuda_graph.csv (CutlassFP8ScaledMMLinearKernel, distilled from AIC
    // vllm-0.24.0) at m 16: line 322 (k 7,168, n 7,168) 15.52 us, line 332 (7,168, 16,384) 50.77 us, line 392
    // (16,384, 7,168) 28.94 us, line 402 (16,384, 16,384) 50.41 us. Weights: k (8,192 - 7,168) / 9,216 = 1/9,
    // n (14,336 - 7,168) / 9,216 = 7/9; latency (8/9)(2/9) 15.52 + (8/9)(7/9) 50.77 + (1/9)(2/9) 28.94 + (1/9)(7/9) 50.41
    // = 3.066 + 35.098 + 0.715 + 4.357 = 43.24 us. (The nearest measured shape alone, (7,168, 16,384), read 50.77 us
    // at its own efficiency, 0.29 of HBM where its neighbours reach 0.41-0.75: the kernel's slow tile choice at that
    // one shape set the whole layer.)
    const moe::Tables& t = moe::builtin_tables();
    const moe::GemmKernel vllm_fp8{moe::GemmFormat::fp8, moe::GemmEngine::vllm};
    const moe::TableHit h = t.gemm("b200", 16, 8192, 14336, vllm_fp8);
    REQUIRE(h.found);
    CHECK(h.source == Source::interpolated);
    CHECK(std::string(h.table) == "bench_data/gemm/b200/vllm_cuda_graph.csv");
    const double by_hand = (8.0 / 9) * (2.0 / 9) * 15.52 + (8.0 / 9) * (7.0 / 9) * 50.77 + (1.0 / 9) * (2.0 / 9) * 28.94 +
                           (1.0 / 9) * (7.0 / 9) * 50.41;
    CHECK(by_hand == doctest::Approx(43.24).epsilon(1e-3));
    CHECK(gemm_us(h, 16, 8192, 14336, 1, 4500, 8000) == doctest::Approx(by_hand).epsilon(1e-6));
    // a corner reads its own measurement back
    const moe::TableHit c = t.gemm("b200", 16, 7168, 16384, vllm_fp8);
    CHECK(c.source == Source::measured);
    CHECK(gemm_us(c, 16, 7168, 16384, 1, 4500, 8000) == doctest::Approx(50.77).epsilon(1e-3));
    // Compute-bound (4,096 tokens) the same shape keeps the nearest measured one through DeepGEMM's tiles: the SM
    // waves set the time there, which a bilinear reading would smooth over.
    CHECK(t.gemm("b200", 4096, 8192, 14336, vllm_fp8).source == Source::transferred);
    // InferSim's H800 table lists the shapes DeepSeek needs, not a grid: (7,168, 2,112) between its n 1,536 and 4,096
    // stays the nearest shape transferred (the DeepGEMM rows of docs/validation.md calibrate that path).
    CHECK(t.gemm("h800", 64, 7168, 2112, 1).source == Source::transferred);
}

TEST_CASE("AIC attention tables: H200 and B200 decode and prefill attention are their own") {
    const moe::Tables& t = moe::builtin_tables();
    // h200_sxm/sglang-0.5.14/attention/generation_attention_perf.csv.gz line 16014: fa3, batch 64, isl 1, 8 heads,
    // 1 KV head, head dim 128, bf16 KV, step 16383 (KV length 16384), 0.13237600326538085 ms
    moe::TableHit d = t.mha_decode("h200", 8, 1, 128, 64, 16384, false);
    REQUIRE(d.found);
    CHECK(d.source == Source::measured);
    CHECK(std::string(d.table) == "bench_data/mha/decode/h200/8-1-128.csv");
    const moe::kernels::Cost c = moe::kernels::mha_decode(64, 16384, 8, 1, 128, 2.0);
    const double roof = std::max(c.flops / 989.5e12, c.bytes / 4800e9);
    CHECK(roof / d.util * 1e6 == doctest::Approx(132.4).epsilon(1e-3));
    // Prefill on B200 comes from B200's own (trtllm_mha) table, not H100's FA3 through the roofline.
    moe::Estimate e = run(R"({"model":"llama-3.1-70b","hardware":"b200","parallel":{"tp":8},"workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192}})");
    const moe::OpRecord* core = op_named(e, "attn.core", Phase::prefill);
    REQUIRE(core);
    CHECK(std::string(core->table) == "bench_data/mha/prefill/b200/8-1-128.csv");
    CHECK(core->source == Source::measured);
}

TEST_CASE("TP all-reduce of a decode step on 8 H100s costs what the AIC table says, not the ring formula") {
    // Llama-3.1-70B (hidden 8192), TP8, decode batch 1: each all-reduce reduces 1 x 8192 bf16 = 16 KB.
    // Table: h100_sxm/sglang-0.5.14/comm/custom_allreduce_perf.csv.gz line 106, 3.748 us (SGLang custom all-reduce in a
    // CUDA graph). The ring formula said 2*7/8*16384 B / (450 GB/s x 0.7) + 10 us x log2 8 = 30.1 us.
    moe::Estimate e = run(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":8},"workload":{"phase":"decode","batch":1}})");
    const moe::OpRecord* ar = op_named(e, "comm.attn_allreduce", Phase::decode);
    REQUIRE(ar);
    CHECK(ar->source == Source::measured);
    CHECK(ar->time_us == doctest::Approx(3.748).epsilon(1e-3));
    CHECK(std::string(ar->table) == "bench_data/comm/h100/collectives.csv#all_reduce/sglang");
    // H800 has no collective tables (and another NVLink): the ring formula, `analytical`.
    moe::Estimate h800 = run(R"({"model":"llama-3.1-70b","hardware":"h800","parallel":{"tp":8},"workload":{"phase":"decode","batch":1}})");
    const moe::OpRecord* ring = op_named(h800, "comm.attn_allreduce", Phase::decode);
    REQUIRE(ring);
    CHECK(ring->source == Source::analytical);
    CHECK(ring->time_us > 25);
    // Prefill runs outside CUDA graphs in SGLang: the eager series. 2048 tokens x 8192 x 2 B = 32 MiB:
    // same file, SGLang_CustomAllReduce_eager, 8 GPUs, 16777216 elements.
    moe::Estimate p = run(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":8},"workload":{"phase":"prefill","prefill_tokens":2048,"prompt_len":2048}})");
    const moe::OpRecord* par = op_named(p, "comm.attn_allreduce", Phase::prefill);
    REQUIRE(par);
    CHECK(std::string(par->table) == "bench_data/comm/h100/collectives.csv#all_reduce/sglang_eager");
    CHECK(par->time_us == doctest::Approx(moe::builtin_tables().collective("h100", "all_reduce", "sglang_eager", 8, 33554432).latency_us));
    // Another NVLink bandwidth than the table GPU's: the table at scaled bytes, `transferred`; slower link, longer.
    moe::Estimate slow = run(R"({"model":"llama-3.1-70b","hardware":{"base":"h100-sxm","nvlink_bandwidth_GBps":225},"parallel":{"tp":8},"workload":{"phase":"prefill","prefill_tokens":2048,"prompt_len":2048}})");
    const moe::OpRecord* sar = op_named(slow, "comm.attn_allreduce", Phase::prefill);
    REQUIRE(sar);
    CHECK(sar->source == Source::transferred);
    CHECK(sar->time_us > 1.5 * par->time_us);
}

TEST_CASE("AIC table CSVs are checked when loaded") {
    moe::Tables t;
    moe::Issues errs;
    CHECK(t.load_csv("bench_data/comm/h100/x.csv", "latency_us,message_bytes,num_gpus,impl,op\n3,16384,8,sglang,all_reduce\n", errs));
    CHECK(errs.empty());
    CHECK(t.collective("h100", "all_reduce", "sglang", 8, 16384).latency_us == doctest::Approx(3));
    moe::Tables bad;
    CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,message_bytes,latency_us\nall_to_all,nccl,8,16,3\n", errs));
    CHECK(errs.back().path == "bench_data/comm/h100/x.csv:2");
    CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,message_bytes,latency_us\nall_reduce,nccl,1,16,3\n", errs));
    CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,message_bytes,latency_us\nall_reduce,,8,16,3\n", errs));
    CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,latency_us\nall_reduce,nccl,8,3\n", errs));
    CHECK(errs.back().message.find("message_bytes") != std::string::npos);
    CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,message_bytes,latency_us\n", errs));
    CHECK(!bad.load_csv("bench_data/gemm/b200/x.csv", "dtype,m,k,n,latency_us\nfp16,1,2,3,4\n", errs));
    CHECK(errs.back().message.find("dtype") != std::string::npos);
    // the wide form (one row per shape, a us_at_<m> column per M) loads the same points; mixing the forms, or a
    // column that names no M, does not load
    {
        moe::Tables w, l;
        std::vector<moe::Issue> we, le;
        CHECK(w.load_csv("bench_data/gemm/b200/w.csv", "dtype,k,n,us_at_16,us_at_32\nbf16,512,512,4.5,\nfp8,512,512,3,3.5\n", we));
        CHECK(l.load_csv("bench_data/gemm/b200/w.csv", "dtype,m,k,n,latency_us\nbf16,16,512,512,4.5\nfp8,16,512,512,3\nfp8,32,512,512,3.5\n", le));
        CHECK(we.empty());
        CHECK(le.empty());
        for (double m : {16.0, 24.0, 32.0}) {
            const moe::TableHit a = w.gemm("b200", m, 512, 512, 1), b = l.gemm("b200", m, 512, 512, 1);
            REQUIRE(a.found);
            CHECK(a.util == b.util);
            CHECK(a.source == b.source);
        }
        CHECK(!bad.load_csv("bench_data/gemm/b200/x.csv", "dtype,m,k,n,us_at_16\nbf16,16,512,512,4.5\n", errs));
        CHECK(!bad.load_csv("bench_data/gemm/b200/x.csv", "dtype,k,n,us_at_x\nbf16,512,512,4.5\n", errs));
        // the collectives and the MHA decode tables the same way (x: message bytes; KV length): each form loaded
        // clean, the same lookups from both
        auto both = [](const char* path, const char* wide, const char* lng, moe::Tables& tw, moe::Tables& tl) {
            std::vector<moe::Issue> ew, el;
            CHECK(tw.load_csv(path, wide, ew));
            CHECK(tl.load_csv(path, lng, el));
            CHECK(ew.empty());
            CHECK(el.empty());
        };
        moe::Tables cw, cl;
        both("bench_data/comm/h100/w.csv", "op,impl,num_gpus,us_at_1024,us_at_4096\nall_reduce,nccl,8,10,12\n",
             "op,impl,num_gpus,message_bytes,latency_us\nall_reduce,nccl,8,1024,10\nall_reduce,nccl,8,4096,12\n", cw, cl);
        for (double bytes : {1024.0, 2048.0, 4096.0})
            CHECK(cw.collective("h100", "all_reduce", "nccl", 8, bytes).latency_us ==
                  cl.collective("h100", "all_reduce", "nccl", 8, bytes).latency_us);
        CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,message_bytes,us_at_1024\nall_reduce,nccl,8,1024,10\n", errs));
        // a truncated wide line, and two columns naming the same size, do not load
        CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,us_at_1024,us_at_4096\nall_reduce,nccl,8,10\n", errs));
        CHECK(errs.back().message.find("cells") != std::string::npos);
        CHECK(!bad.load_csv("bench_data/comm/h100/x.csv", "op,impl,num_gpus,us_at_1024,us_at_1024.0\nall_reduce,nccl,8,10,11\n", errs));
        CHECK(errs.back().message.find("same") != std::string::npos);
        // a column name that is not UTF-8 is quoted safely (the fuzzer's finding of stop 44: tests/fuzz/fuzz_csv.cpp)
        CHECK(!bad.load_csv("bench_data/mha/decode/h100/32-8-128-tp2.csv",
                            "dtype,kv_dtype,batch_size,us_at_laten\xff\xff\xff\x1f" "c\nbf16,bf16,1,3\n", errs));
        CHECK(moe::detail::valid_utf8(errs.back().message));
        moe::Tables aw, al;
        both("bench_data/mha/decode/h200/8-1-128.csv", "kv_dtype,batch_size,us_at_1024,us_at_4096\nbf16,1,11,12\n",
             "kv_dtype,batch_size,kv_len,latency_us\nbf16,1,1024,11\nbf16,1,4096,12\n", aw, al);
        for (double L : {1024.0, 2048.0, 4096.0}) {
            const moe::TableHit a = aw.mha_decode("h200", 8, 1, 128, 1, L, false), b = al.mha_decode("h200", 8, 1, 128, 1, L, false);
            REQUIRE(a.found);
            CHECK(a.util == b.util);
        }
    }
    CHECK(!bad.load_csv("bench_data/gemm/b300/x.csv", "m,k,n,latency_us\n1,2,3,4\n", errs));
    CHECK(errs.back().message.find("gb200") != std::string::npos);  // the known families are listed
}
