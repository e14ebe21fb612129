// Seed 003 (MoE on Apple silicon with Metal, design estimates) on the M2 Max preset: the model's side of each figure
// docs/seeds.md sets beside the seed's, worked by hand (expert op times, streamed bytes, the expert footprint).
#include <cmath>

#include "test_helpers.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::seed003_tok_s;

TEST_CASE("seed 003's figures, the model's side worked: experts by hand, streamed bytes by the popularity law") {
    // The numbers docs/seeds.md sets beside seed 003's table (design estimates, not measurements). One expert of
    // the setup: 3 x 2048 x 8192 int4 weights with a bf16 scale per 128 = 50,331,648 x (0.5 + 2/128) = 25,952,256 B.
    const double expert_B = 3.0 * 2048 * 8192 * (0.5 + 2.0 / 128);
    CHECK(expert_B == 25952256);
    auto experts_us = [](const moe::Estimate& e) { return find_op(e, "moe.routed_experts", Phase::decode)->time_us; };
    // Grouped, resident (seed 45 tok/s): compute-bound, 6 x 32 x 2048 x 8192 x 2 = 6.442 GFLOP a layer at
    // 13.6 TFLOPS x grouped_compute_eff 0.585 = 809.7 us (x 16 layers 12.96 ms, the seed's expert GEMM 12.5 ms).
    moe::Estimate g;
    const double grouped = seed003_tok_s(8, "{}", &g);
    CHECK(experts_us(g) == doctest::Approx(6.0 * 32 * 2048 * 8192 * 2 / (13.6e12 * 0.585) * 1e6).epsilon(1e-6));
    CHECK(grouped == doctest::Approx(46.78).epsilon(1e-3));  // a 21.377 ms step
    // The labels docs/seeds.md quotes: the grouped experts' compute at 0.585 (809.7 us) outlasts their memory time
    // (8 experts x 25,952,256 B = 207.6 MB at 400 GB/s x 0.9 = 576.7 us): compute-bound. Per token, 64 expert reads
    // (4,623.9 us of memory against the same 809.7 us of compute): memory-bound.
    CHECK(find_op(g, "moe.routed_experts", Phase::decode)->bound == moe::Bound::compute);
    // router (seed 0.8 ms), grouping (1.2) and combine (0.7): each a layer's pass under the 3 us kernel floor
    // (kernel_floor_us; the permute moves 64 pairs x 2048 x 2 B in and out, 524,288 B, 1.5 us at 360 GB/s): 16 x 3 us
    for (const char* n : {"moe.router", "moe.permute", "moe.unpermute"}) CHECK(find_op(g, n, Phase::decode)->time_us == doctest::Approx(3.0));
    CHECK(find_op(g, "moe.permute", Phase::decode)->activation_bytes == doctest::Approx(64.0 * 2048 * 2 * 2));
    // Per-token, resident (seed 12): each of the 64 token-expert pairs reads its expert, 64 x 25,952,256 B a layer
    // (+ 3.7 MB of activations) at 400 GB/s x 0.9 = 4,623.9 us (x 16 = 74.0 ms of an 82.3 ms step).
    moe::Estimate pt;
    const double per_token = seed003_tok_s(8, R"({"expert_layout":"per_token"})", &pt);
    const moe::OpRecord* pt_op = find_op(pt, "moe.routed_experts", Phase::decode);
    CHECK(pt_op->weight_bytes == doctest::Approx(64 * expert_B).epsilon(1e-12));
    CHECK(experts_us(pt) == doctest::Approx((64 * expert_B + pt_op->activation_bytes) / (400e9 * 0.9) * 1e6).epsilon(1e-6));
    CHECK(experts_us(pt) == doctest::Approx(4623.9).epsilon(1e-4));
    CHECK(pt_op->bound == moe::Bound::memory);
    CHECK(per_token == doctest::Approx(12.15).epsilon(1e-3));
    // Streamed from the CPU side (host link 200 GB/s), no cache: per pair 16 x 64 x 25,952,256 = 26.58 GB a step;
    // grouped, each selected expert once: 16 x 8 (1 - 0.75^32) x 25,952,256 = 3.32 GB a step.
    moe::Estimate sp, sg;
    CHECK(seed003_tok_s(8, R"({"expert_layout":"per_token","expert_offload":{"tier":"host"}})", &sp) == doctest::Approx(4.647).epsilon(1e-3));
    CHECK(seed003_tok_s(8, R"({"expert_offload":{"tier":"host"}})", &sg) == doctest::Approx(26.33).epsilon(1e-3));
    CHECK(sp.decode.offload_bytes == doctest::Approx(16.0 * 64 * expert_B).epsilon(1e-9));
    CHECK(sg.decode.offload_bytes == doctest::Approx(16.0 * 8 * (1 - std::pow(0.75, 32)) * expert_B).epsilon(1e-9));
    // A cache of the 8 hottest of 64 experts, skew 1.5, prefetch: token picks follow pi_i = 2 w_i / sum w with
    // w_i = i^-1.5 (no expert reaches one pick per token: pi_1 = 0.80); each uncached expert is streamed when one of
    // the 32 tokens picks it: sum over i = 9..64 of (1 - (1 - pi_i)^32) experts a layer.
    moe::Estimate e64;
    const double t64 = seed003_tok_s(64, R"({"expert_offload":{"tier":"host","prefetch":true,"skew":1.5,"cached_experts_per_layer":8}})", &e64);
    double wsum = 0, streamed = 0;
    for (int i = 1; i <= 64; ++i) wsum += std::pow(i, -1.5);
    for (int i = 9; i <= 64; ++i) streamed += 1 - std::pow(1 - 2 * std::pow(i, -1.5) / wsum, 32);
    MESSAGE("64 experts: " << streamed << " experts streamed a layer, " << t64 << " tok/s");
    CHECK(2 / wsum < 1);
    CHECK(e64.decode.offload_bytes == doctest::Approx(16 * streamed * expert_B).epsilon(1e-6));
    CHECK(t64 == doctest::Approx(17.96).epsilon(1e-3));
    for (int E : {16, 32})  // the same law at 16 and 32 experts (seed 48, 38): 37.34, 24.50 tok/s
        CHECK(seed003_tok_s(E, R"({"expert_offload":{"tier":"host","prefetch":true,"skew":1.5,"cached_experts_per_layer":8}})") ==
              doctest::Approx(E == 16 ? 37.34 : 24.50).epsilon(1e-3));
}

TEST_CASE("seed 003's expert memory footprint, by hand (8 experts, 2048 -> 8192, 4-bit)") {
    // Seed 003 'Memory Footprint': "FP4: 8 experts x 2048x8192 x 0.5 bytes = 64 MB", and 32 / 64 / 128 / 256 /
    // 512 MB for 4 / 8 / 16 / 32 / 64 experts. That counts one 2048 x 8192 matrix per expert and no scales; an
    // expert has three (gate, up, down) and the int4 format one bf16 scale per 128 weights: a layer holds
    // 8 x 3 x 2048 x 8192 x (0.5 + 2/128) = 207,618,048 B (3.09x the seed's 67,108,864), 16 layers 3,321,888,768 B.
    moe::Estimate e8, e64;
    seed003_tok_s(8, "{}", &e8);
    seed003_tok_s(64, "{}", &e64);
    const double per_layer = 8.0 * 3 * 2048 * 8192 * (0.5 + 2.0 / 128);
    CHECK(per_layer == 207618048);
    CHECK(e8.memory.weights_experts_bytes == doctest::Approx(16 * per_layer).epsilon(1e-12));
    CHECK(per_layer / (8.0 * 2048 * 8192 * 0.5) == doctest::Approx(3.09375));
    // the seed's scaling: 64 experts hold 8x the bytes of 8 (512 MB vs 64 MB)
    CHECK(e64.memory.weights_experts_bytes / e8.memory.weights_experts_bytes == doctest::Approx(8.0).epsilon(1e-12));
}

TEST_CASE("seed 003's runtime memory (batch 32, seq 512) beside the model's seed 002 accounting, by hand") {
    // Seed 003, "Memory Usage": a 32 x 512 = 16,384-token forward of its 8-expert 2048 -> 8192 top-2 layer holds
    // activations 32 x 512 x 2048 x 2 B = 64 MiB, dispatch indices 32 x 512 x 2 x 8 B = 0.5 MiB and expert outputs
    // 32 x 512 x 2 x 8192 x 2 B = 512 MiB. The model sizes the same forward by seed 002 §4-§5 (the run below: one
    // prefill forward of 16,384 tokens, 32 prompts of 512, on the M2 Max).
    const double C = 32.0 * 512;
    nlohmann::json model = {{"architectures", {"MixtralForCausalLM"}}, {"model_type", "mixtral"}, {"hidden_size", 2048},
                            {"intermediate_size", 8192}, {"num_hidden_layers", 16}, {"num_attention_heads", 16},
                            {"num_key_value_heads", 8}, {"head_dim", 128}, {"num_local_experts", 8},
                            {"num_experts_per_tok", 2}, {"vocab_size", 32000}, {"torch_dtype", "float16"}};
    nlohmann::json s = {{"model", model}, {"hardware", "m2-max"},
                        {"workload", {{"phase", "prefill"}, {"prefill_tokens", 16384}, {"prompt_len", 512}}},
                        {"precision", {{"weights", "fp16"}, {"experts", "int4"}}}};
    const moe::Estimate e = moe_test::run(s.dump());
    // Activations: the residual stream is two bf16 tensors a token (hidden and residual: 2 x the seed's 64 MiB), plus
    // the attention's q at its 16 heads and k, v at its 8 KV heads ((16 + 2 x 8) x 128 x 2 B) and the fp32 logits of
    // each prompt's last token; the seed counts the one hidden tensor.
    const double seed_act = C * 2048 * 2;
    CHECK(seed_act == 64.0 * 1024 * 1024);
    CHECK(e.memory.activation_prefill_bytes == doctest::Approx(2 * seed_act + C * (16 + 2 * 8) * 128 * 2 + 32.0 * 32000 * 4).epsilon(1e-12));
    CHECK(e.memory.activation_prefill_bytes == doctest::Approx(272531456.0).epsilon(1e-12));
    // Expert outputs: the model's grouped-GEMM workspace holds the gate / up output of every token-expert pair in fp32
    // (2 bytes more than the seed's bf16) sized for the busiest expert (grouped_load_factor 1.3 over the mean):
    // 512 MiB x 2 x 1.3 = 1,395,864,371.2 B, plus cuBLAS's 64 MB. The dispatch indices (0.5 MiB) are not counted.
    const double seed_out = C * 2 * 8192 * 2;
    CHECK(seed_out == 512.0 * 1024 * 1024);
    CHECK(e.memory.workspace_bytes == doctest::Approx(std::ceil(seed_out * 2 * 1.3 + 64e6)).epsilon(1e-12));
}
