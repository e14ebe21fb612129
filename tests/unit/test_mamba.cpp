// Mamba-2 hybrids (issue 29: Nemotron-H, Nemotron-3): the block pattern read from the configs, parameter counts
// against the model cards, the per-request recurrent state counted by hand, a decode step whose Mamba-2 part grows
// with the batch and not with the context, and the refusals that remain (each naming its key).
#include <nlohmann/json.hpp>

#include "test_helpers.h"

using moe::ModelSpec;
using nlohmann::json;

namespace {
using moe_test::preset_model;
using moe_test::parse_config;
// A small Nemotron-H config: 2 Mamba-2, 1 attention, 1 MoE block.
json tiny_hybrid() {
    return {{"model_type", "nemotron_h"}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"num_key_value_heads", 2},
            {"head_dim", 128}, {"vocab_size", 1000}, {"intermediate_size", 512}, {"moe_intermediate_size", 256},
            {"moe_shared_expert_intermediate_size", 512}, {"n_routed_experts", 16}, {"n_shared_experts", 1},
            {"num_experts_per_tok", 2}, {"hybrid_override_pattern", "M*ME"}, {"mamba_num_heads", 16},
            {"mamba_head_dim", 64}, {"ssm_state_size", 64}, {"n_groups", 4}, {"conv_kernel", 4}};
}
}  // namespace

TEST_CASE("Nemotron-H block patterns: one block per layer, parameters against the model cards") {
    // NVIDIA-Nemotron-3-Nano-30B-A3B: "MEMEM*EMEMEM*E..." = 23 Mamba-2, 6 attention and 23 MoE blocks (the card:
    // "23 Mamba-2 and MoE layers, along with 6 Attention layers").
    const ModelSpec& nano = preset_model("nemotron-3-nano-30b-a3b");
    CHECK(nano.num_layers == 52);
    CHECK(nano.n_mamba_layers == 23);
    CHECK(nano.n_attention_layers() == 6);
    CHECK(nano.n_moe_layers == 23);
    CHECK(nano.n_dense_layers == 0);
    CHECK(nano.ffn_matrices == 2);  // relu2 MLPs: up_proj and down_proj
    CHECK(nano.shared_intermediate == 3712);
    // One Mamba-2 mixer, by hand from the config (hidden 2688, 64 heads x 64 = d_inner 4096, 8 groups x state 128):
    //   in_proj 2688 x (2 x 4096 + 2 x 8 x 128 + 64) = 2688 x 10304 = 27,697,152
    //   conv1d (4096 + 2048 = 6144 channels) x kernel 4 + bias 6144 = 30,720
    //   A_log, D, dt_bias: 3 x 64 = 192; gated RMSNorm over d_inner: 4096; out_proj 4096 x 2688 = 11,010,048
    CHECK(nano.mamba_params() == 27697152.0 + 30720 + 192 + 4096 + 11010048);
    // Its card (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16, and NVIDIA's Nemotron 3 Nano report): 31.6B total,
    // about 3.2B active, 3.6B with the embeddings. We count 31.58B, 3.58B active with both embedding matrices and
    // 3.23B without the input embedding (the LM head counted, as the card's 3.2B does).
    INFO("nano: ", nano.total_params / 1e9, "B total, ", nano.active_params / 1e9, "B active");
    CHECK(nano.total_params == doctest::Approx(31.6e9).epsilon(0.002));
    CHECK(nano.active_params == doctest::Approx(3.6e9).epsilon(0.015));
    CHECK(nano.active_compute_params == doctest::Approx(3.2e9).epsilon(0.015));
    // Nemotron-H-56B-Base: 54 Mamba-2, 54 MLP and 10 attention blocks (NVIDIA ADLR's Nemotron-H page). Only the
    // rounded "56B" is published: we count 56.3B, within 1%.
    const ModelSpec& h56 = preset_model("nemotron-h-56b");
    CHECK(h56.num_layers == 118);
    CHECK(h56.n_mamba_layers == 54);
    CHECK(h56.n_dense_layers == 54);
    CHECK(h56.n_attention_layers() == 10);
    CHECK_FALSE(h56.is_moe());
    CHECK(h56.head_dim == 128);  // attention_head_dim
    INFO("h56: ", h56.total_params / 1e9, "B total");
    CHECK(h56.total_params == doctest::Approx(56e9).epsilon(0.01));
}

TEST_CASE("a Mamba-2 layer keeps a fixed state per request, counted with the KV cache; only attention KV grows") {
    // Nemotron-3-Nano at TP 1, per Mamba-2 layer:
    //   SSM state 64 heads x 64 head dim x 128 state x 4 B (mamba_ssm_cache_dtype float32) = 2,097,152 B
    //   conv state (4 - 1) x (4096 + 2 x 8 x 128 = 6144 channels) x 2 B (bf16)             =    36,864 B
    //   23 layers x 2,134,016 B = 49,082,368 B per request, whatever its length.
    // KV per token: 6 attention layers x (K + V) x 2 KV heads x 128 x 2 B = 6,144 B.
    moe::Estimate e = moe_test::run(R"({"model":"nemotron-3-nano-30b-a3b","hardware":"h200","parallel":{"tp":1},
                                        "workload":{"batch":8,"prompt_len":4096,"output_len":1024,"context_len":4096}})");
    CHECK(e.memory.linear_state_bytes_per_request == 49082368);
    CHECK(e.memory.linear_state_bytes == 8.0 * 49082368);
    CHECK(e.memory.kv_bytes_per_token == 6144);
    // relu2 experts are priced analytically, and the warning says why (the measured MoE tables hold SwiGLU kernels)
    bool said = false;
    for (const std::string& w : e.warnings) said = said || w.find("ungated") != std::string::npos;
    CHECK(said);
    CHECK(e.memory.kv_cache_bytes == doctest::Approx(8.0 * (4096.0 * 6144 + 49082368)).epsilon(1e-12));
    // 16x the context: the KV grows 16x, the state not at all.
    moe::Estimate l = moe_test::run(R"({"model":"nemotron-3-nano-30b-a3b","hardware":"h200","parallel":{"tp":1},
                                        "workload":{"batch":8,"prompt_len":65536,"output_len":1024,"context_len":65536}})");
    CHECK(l.memory.linear_state_bytes_per_request == 49082368);
    CHECK(l.memory.kv_cache_bytes == doctest::Approx(8.0 * (65536.0 * 6144 + 49082368)).epsilon(1e-12));
    CHECK(l.memory.max_batch < e.memory.max_batch);
    // TP 2 halves the heads (32) and the groups (4): 23 x (32 x 64 x 128 x 4 + 3 x (2048 + 1024) x 2) B.
    moe::Estimate t2 = moe_test::run(R"({"model":"nemotron-3-nano-30b-a3b","hardware":"h200","parallel":{"tp":2}})");
    CHECK(t2.memory.linear_state_bytes_per_request == 23.0 * (32 * 64 * 128 * 4 + 3 * (2048 + 1024) * 2));
}

TEST_CASE("a Mamba-2 decode step grows with the batch, not with the context; prefill runs the chunked scan") {
    auto scan = [](int batch, int ctx, moe::Phase ph) {
        moe::Estimate e = moe_test::run(R"({"model":"nemotron-3-nano-30b-a3b","hardware":"h200","parallel":{"tp":1},
            "runtime":{"two_batch_overlap":false},"workload":{"phase":"both","batch":)" + std::to_string(batch) +
                                         R"(,"prefill_tokens":4096,"prompt_len":)" + std::to_string(ctx) + R"(,"context_len":)" + std::to_string(ctx) + "}}");
        const moe::OpRecord* s = moe_test::find_op(e, "attn.mamba_scan", ph, "Mamba-2 layers");
        const moe::OpRecord* a = moe_test::find_op(e, "attn.core", ph, "attention layers");
        REQUIRE(s != nullptr);
        REQUIRE(a != nullptr);
        for (const char* op : {"attn.mamba_in_proj", "attn.mamba_conv", "attn.mamba_out_proj"})
            CHECK_MESSAGE(moe_test::find_op(e, op, ph, "Mamba-2 layers") != nullptr, op);
        CHECK(s->source == moe::Source::analytical);
        return std::pair<moe::OpRecord, moe::OpRecord>(*s, *a);
    };
    const auto [s8, a8] = scan(8, 4096, moe::Phase::decode);
    const auto [s64, a64] = scan(64, 4096, moe::Phase::decode);
    const auto [s64_long, a64_long] = scan(64, 65536, moe::Phase::decode);
    // Decode reads and writes each request's fp32 state once: at least 2 x 64 x 64 x 128 x 4 B per request.
    CHECK(s64.activation_bytes >= 64 * 2.0 * 64 * 64 * 128 * 4);
    CHECK(s64.bound == moe::Bound::memory);
    CHECK(s64.time_us > 4.0 * s8.time_us);
    CHECK(s64_long.time_us == s64.time_us);   // the Mamba-2 part does not see the context
    CHECK(a64_long.time_us > 4.0 * a64.time_us);  // the attention layers' does
    // Prefill: the chunked SSD scan, by hand for the 4096-token chunk (chunk_size Q 128, 64 heads x P 64, N 128,
    // 8 groups): per token 64 x (2 x 128 x 64 + 4 x 128 x 64) + 8 x 2 x 128 x 128 = 3,407,872 FLOPs.
    const auto [p4k, pa4k] = scan(8, 4096, moe::Phase::prefill);
    CHECK(p4k.flops == 4096.0 * 3407872);
    CHECK(p4k.source == moe::Source::analytical);
}

TEST_CASE("Nemotron-H configs: what is read and what is refused, naming the key") {
    moe::Issues errs;
    ModelSpec m = parse_config(tiny_hybrid(), errs);
    REQUIRE(errs.empty());
    CHECK(m.num_layers == 4);  // from the pattern (Nemotron-3-Ultra gives no num_hidden_layers)
    CHECK(m.layers[0].mixer == moe::Mixer::mamba2);
    CHECK_FALSE(m.layers[0].ffn);
    CHECK(m.layers[1].mixer == moe::Mixer::attention);
    CHECK(m.layers[3].mixer == moe::Mixer::none);
    CHECK(m.layers[3].moe);
    CHECK(m.ssm_state_dtype == moe::Dtype::fp32);
    // layers_block_type is the same list spelled out
    json j = tiny_hybrid();
    j.erase("hybrid_override_pattern");
    j["layers_block_type"] = {"mamba", "attention", "mamba", "moe"};
    ModelSpec m2 = parse_config(j, errs);
    REQUIRE(errs.empty());
    CHECK(m2.total_params == m.total_params);
    // An unknown block, a count that disagrees, groups that do not divide the heads: each names its key.
    j = tiny_hybrid();
    j["hybrid_override_pattern"] = "M*XE";
    parse_config(j, errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.hybrid_override_pattern[2]");
    j = tiny_hybrid();
    j["num_hidden_layers"] = 5;
    parse_config(j, errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.num_hidden_layers");
    j = tiny_hybrid();
    j["n_groups"] = 3;
    parse_config(j, errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.n_groups");
    j = tiny_hybrid();
    j["mamba_ssm_cache_dtype"] = "int8";
    parse_config(j, errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.mamba_ssm_cache_dtype");
    // a latent MoE is read (tests/unit/test_latent_moe.cpp): its experts work at moe_latent_size
    j = tiny_hybrid();
    j["moe_latent_size"] = 512;
    ModelSpec lat = parse_config(j, errs);
    REQUIRE(errs.empty());
    CHECK(lat.expert_width() == 512);
    CHECK(lat.total_params == m.total_params - 16 * 2.0 * (1024 - 512) * 256 + 2.0 * 1024 * 512);
    j = tiny_hybrid();
    j["n_routed_experts"] = 0;
    j.erase("num_experts_per_tok");
    parse_config(j, errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.hybrid_override_pattern");
    // TP must divide the Mamba-2 heads and groups: Nemotron-3-Nano's 8 groups refuse tp 16, naming parallel.tp.
    moe::ParseResult r = moe::parse_scenario(R"({"model":"nemotron-3-nano-30b-a3b","hardware":"h200","parallel":{"tp":16}})",
                                             moe::builtin_catalog());
    REQUIRE_FALSE(r.ok());
    bool named = false;
    for (const auto& e : r.errors) named = named || (e.path == "parallel.tp" && e.message.find("Mamba-2") != std::string::npos);
    CHECK(named);
}
