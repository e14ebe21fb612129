// DSA's indexer as SGLang runs it (python/sglang/srt/layers/attention/nsa/nsa_indexer.py): the key and the per-head
// weights are two linears (wk, weights_proj), ten elementwise kernels prepare the query and key before the scoring
// (k_norm, rope, the two copies of the rope parts back, two Hadamard rotations, two FP8 quantisations, the weights'
// scaling, the key's cache store: attn.indexer_prep), and the top-k selection is a kernel of its own
// (attn.indexer_topk). Worked by hand from GLM-5's config (presets/models/glm-5.json: hidden 6144, index_n_heads 32,
// index_head_dim 128, qk_rope_head_dim 64, index_topk 2048) and the shipped kernel floor (presets/calibration.json,
// kernel_floor_us 3.0).
#include "test_helpers.h"

using moe_test::find_op;
using moe_test::run;

TEST_CASE("DSA indexer: the key and weights linears, ten preparation kernels and the top-k (GLM-5 on B200)") {
    const double floor_us = moe::builtin_tables().calibration.kernel_floor_us;
    REQUIRE(floor_us == doctest::Approx(3.0));
    // decode, 4 sequences: every preparation kernel is at the floor, so the ten take 10 x 3 us = 30 us per layer
    moe::Estimate d = run(R"({"model":"glm-5","hardware":"b200","parallel":{"tp":8},
        "workload":{"phase":"decode","batch":4,"context_len":1536}})");
    const moe::OpRecord* prep = find_op(d, "attn.indexer_prep", moe::Phase::decode, "MoE layers");
    REQUIRE(prep);
    CHECK(prep->time_us == doctest::Approx(30.0));
    CHECK(prep->count == 75);  // GLM-5's 78 layers: 3 dense, 75 MoE
    // its bytes: 4 tokens x (4d + 8 (H+1) r + 4 (H+1) d + 3 (H+1) d + 4 (H+1) + 8H + d + 4)
    //          = 4 x (512 + 16,896 + 16,896 + 12,672 + 132 + 256 + 132) = 4 x 47,496 = 189,984 B
    CHECK(prep->weight_bytes + prep->activation_bytes == doctest::Approx(189984.0));
    const moe::OpRecord* topk = find_op(d, "attn.indexer_topk", moe::Phase::decode, "MoE layers");
    REQUIRE(topk);
    CHECK(topk->activation_bytes == doctest::Approx(4 * 2048 * 4.0));  // the selected indices, int32
    CHECK(topk->time_us == doctest::Approx(floor_us));
    // the key (6144 -> 128) and the weights (6144 -> 32) are separate GEMMs, replicated on every TP rank
    const moe::OpRecord* wk = find_op(d, "attn.indexer_k_proj", moe::Phase::decode, "MoE layers");
    const moe::OpRecord* wp = find_op(d, "attn.indexer_weights_proj", moe::Phase::decode, "MoE layers");
    REQUIRE(wk);
    REQUIRE(wp);
    CHECK(wk->flops == doctest::Approx(2.0 * 4 * 6144 * 128));
    CHECK(wp->flops == doctest::Approx(2.0 * 4 * 6144 * 32));
    // prefill of 8,192 tokens: 8,192 x 47,496 B = 389.1 MB per layer, past the floor (B200: 8 TB/s at 0.9 -> 54 us)
    moe::Estimate p = run(R"({"model":"glm-5","hardware":"b200","parallel":{"tp":8},
        "workload":{"phase":"prefill","batch":1,"prompt_len":8192}})");
    const moe::OpRecord* pp = find_op(p, "attn.indexer_prep", moe::Phase::prefill, "MoE layers");
    REQUIRE(pp);
    CHECK(pp->activation_bytes == doctest::Approx(8192 * 47496.0));
    CHECK(pp->time_us > 10.0 * floor_us);
    CHECK(pp->time_us == doctest::Approx(8192 * 47496.0 / (8000e9 * 0.9) * 1e6).epsilon(0.02));
    // a model without DSA has none of them
    moe::Estimate v3 = run(R"({"model":"deepseek-v3","hardware":"b200","parallel":{"tp":8},
        "workload":{"phase":"decode","batch":4,"context_len":1536}})");
    CHECK(find_op(v3, "attn.indexer_prep", moe::Phase::decode, "MoE layers") == nullptr);
    CHECK(find_op(v3, "attn.indexer_topk", moe::Phase::decode, "MoE layers") == nullptr);
}
