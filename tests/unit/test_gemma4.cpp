// Gemma-4 (issue 29): the global-attention layers (global_head_dim, num_global_key_value_heads, attention_k_eq_v) and
// the MoE block beside the dense MLP (enable_moe_block, num_experts, top_k_experts). Parameters against the model
// cards with the arithmetic beside them, the KV cache of sliding and global layers, a decode step's projections and
// attention worked by hand, and the refusals that remain. Configs: presets/models/gemma-4-26b-a4b.json (=
// google/gemma-4-26B-A4B config.json) and gemma-4-31b-it-nvfp4.json (= nvidia/Gemma-4-31B-IT-NVFP4); layer structure
// from Hugging Face transformers' models/gemma4 (docs/attention.md).
#include <nlohmann/json.hpp>

#include "core/base/embedded.h"

#include "test_helpers.h"

using moe::ModelSpec;
using moe_test::find_op;
using moe_test::run;
using nlohmann::json;

namespace {
using moe_test::preset_model;
using moe_test::embedded_json;
using moe_test::messages;
}  // namespace

TEST_CASE("Gemma-4 26B-A4B: global layers, the MoE block beside the MLP, parameters against the card") {
    const ModelSpec& m = preset_model("gemma-4-26b-a4b");
    CHECK(m.num_layers == 30);
    CHECK(m.n_global_layers == 5);   // layer_types: full_attention at 5, 11, 17, 23, 29
    CHECK(m.n_window_layers == 25);  // sliding_window 1024
    CHECK(m.n_moe_layers == 30);
    CHECK(m.top_k == 8);             // top_k_experts
    CHECK(m.shared_intermediate == 2112);  // the dense MLP beside the experts, costed as a shared expert
    // hidden 2816, 16 heads; sliding layers head_dim 256 with 8 KV heads:
    //   q 2816 x 4096 + k, v 2 x 2816 x 2048 + o 4096 x 2816 = 34,603,008;
    // global layers global_head_dim 512 with 2 KV heads and K = V (no v_proj):
    //   q 2816 x 8192 + k 2816 x 1024 + o 8192 x 2816 = 49,020,928;
    // MLP 3 x 2816 x 2112 = 17,842,176; an expert 3 x 2816 x 704 = 5,947,392 (x 128 = 761,266,176); router
    // 2816 x 128 + a scale of 2816 + one per expert 128 = 363,392; norms 7 x 2816 = 19,712.
    // Sliding layer 814,094,464, global layer 828,512,384; tied embedding 262,144 x 2816 = 738,197,504, final norm 2816:
    // 25 x 814,094,464 + 5 x 828,512,384 + 738,200,320 = 25,233,123,840.
    CHECK(m.total_params == doctest::Approx(25233123840.0));
    // Active: 8 experts (47,579,136) in place of 128: sliding 100,407,424, global 114,825,344 per layer;
    // 25 x 100,407,424 + 5 x 114,825,344 + 738,200,320 = 3,822,512,640.
    CHECK(m.active_params == doctest::Approx(3822512640.0));
    // The card (google/gemma-4-26B-A4B-it): "25.2B total parameters, 3.8B active" (its vision encoder, ~550M, apart).
    // The per-head q / k norms (256 or 512 each) are not counted, as for every model here.
    CHECK(m.total_params / 25.2e9 == doctest::Approx(1.0).epsilon(0.002));
    CHECK(m.active_params / 3.8e9 == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("Gemma-4 31B: dense, 10 global layers of 512-wide heads, parameters against the card") {
    const ModelSpec& m = preset_model("gemma-4-31b-it-nvfp4");
    CHECK_FALSE(m.is_moe());
    CHECK(m.n_global_layers == 10);
    // hidden 5376, 32 heads; sliding: 16 KV heads of 256: q 5376 x 8192 = 44,040,192, k and v 2 x 5376 x 4096 =
    // 44,040,192, o 44,040,192: 132,120,576; global: 4 KV heads of 512, K = V: q 88,080,384 + k 11,010,048 +
    // o 88,080,384 = 187,170,816; MLP 3 x 5376 x 21504 = 346,816,512; 4 norms 21,504.
    // 50 x 478,958,592 + 10 x 534,008,832 + embedding 262,144 x 5376 (1,409,286,144) + 5376 = 30,697,309,440.
    CHECK(m.total_params == doctest::Approx(30697309440.0));
    CHECK(m.active_params == doctest::Approx(m.total_params));
    CHECK(m.total_params / 30.7e9 == doctest::Approx(1.0).epsilon(0.001));  // card: 30.7B
}

TEST_CASE("Gemma-4 KV cache: sliding layers hold 1024 tokens, global layers every token at their own width") {
    const ModelSpec& m = preset_model("gemma-4-26b-a4b");
    // tp 1, bf16, 131,072 tokens: 25 sliding layers x 1024 x (2 x 8 x 256 x 2 = 8192 B) = 209,715,200;
    // 5 global layers x 131,072 x (K and V: 2 x 2 x 512 x 2 = 4096 B) = 2,684,354,560 -> 2,894,069,760.
    CHECK(m.kv_bytes_per_request(131072, 8, 2.0, 1.0) == doctest::Approx(2894069760.0));
    // tp 8: one sliding KV head per GPU (1024 B per token), the 2 global heads replicated to one (2048 B):
    // 25 x 1024 x 1024 + 5 x 131,072 x 2048 = 26,214,400 + 1,342,177,280 = 1,368,391,680.
    CHECK(m.kv_bytes_per_request(131072, 1, 2.0, 1.0) == doctest::Approx(1368391680.0));
    // per token at tp 1: 25 x 8192 + 5 x 4096 = 225,280 B
    const moe::Estimate e = run(R"({"model":"gemma-4-26b-a4b","hardware":"h100-sxm","workload":{"phase":"decode","batch":8,"context_len":131072}})");
    CHECK(e.memory.kv_bytes_per_token == doctest::Approx(225280.0));
}

TEST_CASE("Gemma-4 26B-A4B decode step: global and sliding projections and attention by hand") {
    const moe::Estimate e = run(R"({"model":"gemma-4-26b-a4b","hardware":"h100-sxm","workload":{"phase":"decode","batch":8,"context_len":131072}})");
    // global layer: qkv_proj N = (16 + 1 x 2) x 512 = 9,216 (K = V: one KV projection): 2 x 8 x 2816 x 9216 =
    // 415,236,096 FLOPs; attention over all 131,072 keys: 4 x 8 x 16 x 512 x 131,072 = 34,359,738,368; KV read
    // 8 x 131,072 x 4096 = 4,294,967,296 B + q and o 8 x 16 x 512 x 4 = 262,144.
    const moe::OpRecord* gq = find_op(e, "attn.qkv_proj", moe::Phase::decode, "MoE layers");
    const moe::OpRecord* gc = find_op(e, "attn.core", moe::Phase::decode, "MoE layers");
    REQUIRE(gq != nullptr);
    REQUIRE(gc != nullptr);
    // find_op returns the first group whose label starts with the prefix: the sliding layers come first (layer 0)
    const moe::OpRecord* sq = gq;
    const moe::OpRecord* sc = gc;
    for (const moe::OpRecord& o : e.ops)
        if (o.phase == moe::Phase::decode && e.decode.groups[size_t(o.group)].label == "MoE layers") {
            if (std::string(o.name) == "attn.qkv_proj") gq = &o;
            if (std::string(o.name) == "attn.core") gc = &o;
        }
    CHECK(gq->count == 5);
    CHECK(gq->flops == doctest::Approx(415236096.0));
    CHECK(gc->flops == doctest::Approx(34359738368.0));
    CHECK(gc->activation_bytes == doctest::Approx(4295229440.0));
    // sliding layer: N = (16 + 2 x 8) x 256 = 8,192: 369,098,752 FLOPs; attention over 1024 keys: 4 x 8 x 16 x 256 x 1024
    // = 134,217,728 FLOPs.
    CHECK(sq->count == 25);
    CHECK(sq->flops == doctest::Approx(369098752.0));
    CHECK(sc->flops == doctest::Approx(134217728.0));
    // the dense MLP beside the experts: up (gate and up) 2 x 8 x 2816 x 4224 = 190,316,544 FLOPs
    const moe::OpRecord* mlp = find_op(e, "moe.shared_up", moe::Phase::decode, "MoE layers");
    REQUIRE(mlp != nullptr);
    CHECK(mlp->flops == doctest::Approx(190316544.0));
}

TEST_CASE("Gemma-4 refusals and errors name their key") {
    json cfg = embedded_json("presets/models/gemma-4-26b-a4b.json");
    moe::Issues errs;
    {
        json c = cfg;
        c["text_config"]["num_kv_shared_layers"] = 10;  // Gemma-3n / E2B-style KV sharing
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].message.find("num_kv_shared_layers") != std::string::npos);
        CHECK(errs[0].message.find("not modelled") != std::string::npos);
    }
    {
        errs.clear();
        json c = cfg;
        c["text_config"]["hidden_size_per_layer_input"] = 256;
        moe::parse_hf_config(c, "model", errs);
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].message.find("not modelled") != std::string::npos);
    }
    {
        errs.clear();
        json c = cfg;
        c["text_config"]["num_global_key_value_heads"] = 3;
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE(!errs.empty());
        CHECK(errs[0].path == "model.text_config.num_global_key_value_heads");
    }
    {
        errs.clear();
        json c = cfg;
        c["text_config"].erase("num_experts");
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE(!errs.empty());
        CHECK(errs[0].path == "model.text_config.num_experts");
    }
}
