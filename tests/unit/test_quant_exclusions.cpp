// Quantisation exclusions (issue 29; core/scenario/quant_exclusions.cpp): the modules a quantised checkpoint leaves in
// its 16-bit dtype, read from ModelOpt's exclude_modules / ignore, compressed-tensors' ignore (`re:` patterns) and
// transformers' modules_to_not_convert, priced per component (attention, dense FFN + shared experts, routed experts,
// MTP module). Worked against shipped checkpoints: the presets kimi-k2.6-nvfp4 (= nvidia/Kimi-K2.6-NVFP4 config.json),
// gemma-4-31b-it-nvfp4 (= nvidia/Gemma-4-31B-IT-NVFP4), kimi-k2.5 (= moonshotai/Kimi-K2.5) and gpt-oss-120b, and the
// exclusion lists of nvidia/GLM-5.1-NVFP4 and nvidia/DeepSeek-V3.1-NVFP4 (hf_quant_config.json, AIConfigurator
// model_configs @095f58a5, tests/data/model_configs/) put on the architectures they quantise (the glm-5 and deepseek-v3
// presets' config.json).
#include <nlohmann/json.hpp>

#include "core/base/embedded.h"

#include "test_helpers.h"

using moe::Dtype;
using moe::ModelSpec;
using moe_test::find_op;
using moe_test::run;
using nlohmann::json;

namespace {
using moe_test::embedded_json;
// A ModelOpt hf_quant_config.json (NVFP4 weights, FP8 KV) with `exclude` as its exclude_modules, given to `cfg` as its
// quantization_config, as tests/cli/model_configs_test.py does with the shipped files.
json with_modelopt(json cfg, const json& exclude) {
    cfg["quantization_config"] = {{"producer", {{"name", "modelopt"}, {"version", "0.37.0"}}},
                                  {"quantization", {{"quant_algo", "NVFP4"}, {"kv_cache_quant_algo", "FP8"},
                                                    {"group_size", 16}, {"exclude_modules", exclude}}}};
    return cfg;
}
}  // namespace

TEST_CASE("Kimi-K2.6-NVFP4: the shipped ignore list prices attention, the dense layer and shared experts in BF16") {
    // nvidia/Kimi-K2.6-NVFP4 config.json's quantization_config.ignore: language_model.lm_head,
    // language_model.model.layers.0* (the one dense layer, first_k_dense_replace 1), layers.N.self_attn* and
    // layers.N.mlp.shared_experts* for N = 1..60, mm_projector*, vision_tower*. Routed experts: NVFP4.
    const ModelSpec& m = moe_test::preset_model("kimi-k2.6-nvfp4");
    CHECK(m.quant_excluded.attention == doctest::Approx(1.0));
    CHECK(m.quant_excluded.ffn == doctest::Approx(1.0));
    CHECK(m.quant_excluded.experts == doctest::Approx(0.0));
    CHECK(m.weight_dtype == Dtype::bf16);
    CHECK(m.ffn_dtype == Dtype::bf16);
    CHECK(m.expert_dtype == Dtype::nvfp4);
    const moe::Estimate e = run(R"({"model":"kimi-k2.6-nvfp4","hardware":"b200","workload":{"phase":"decode","batch":1}})");
    // By hand, one GPU (TP 1, EP 1), hidden 7168, 64 heads, q_lora 1536, kv_lora 512, rope 64, nope 128, v 128:
    // MLA q_a 7168 x 1536 = 11,010,048, q_b 1536 x 64 x 192 = 18,874,368, kv_a 7168 x 576 = 4,128,768,
    // kv_b 512 x 64 x 256 = 8,388,608, o 64 x 128 x 7168 = 58,720,256: 101,122,048 per layer x 61 layers x 2 B.
    CHECK(e.memory.weights_attention_bytes == doctest::Approx(61.0 * 101122048.0 * 2.0));  // 12,336,889,856
    // layer 0's MLP 3 x 7168 x 18432 in BF16; 60 shared experts 3 x 7168 x 2048 in BF16
    CHECK(e.memory.weights_dense_ffn_bytes == doctest::Approx(3.0 * 7168 * 18432 * 2.0));          // 792,723,456
    CHECK(e.memory.weights_shared_bytes == doctest::Approx(60.0 * 3 * 7168 * 2048 * 2.0));         // 5,284,823,040
    // 60 MoE layers x 384 experts x 3 x 7168 x 2048 in NVFP4: half a byte + one FP8 scale per 16
    CHECK(e.memory.weights_experts_bytes == doctest::Approx(60.0 * 384 * 3 * 7168 * 2048 * (0.5 + 1.0 / 16)));
}

TEST_CASE("The NVFP4 checkpoints the serving runs served: attention in BF16, the experts (and Kimi's shared ones) NVFP4") {
    // nvidia/Kimi-K2.5-NVFP4 config.json's ignore: language_model.lm_head, layers.N.self_attn* for N = 0..60 (no MLP
    // entry, unlike K2.6): attention BF16 as K2.6's (61 x 101,122,048 x 2 B), the dense layer 0 and the 60 shared
    // experts NVFP4 (half a byte + an FP8 scale per 16 weights).
    const moe::Estimate k = run(R"({"model":"kimi-k2.5-nvfp4","hardware":"b200","workload":{"phase":"decode","batch":1}})");
    CHECK(k.memory.weights_attention_bytes == doctest::Approx(61.0 * 101122048.0 * 2.0));          // 12,336,889,856
    CHECK(k.memory.weights_dense_ffn_bytes == doctest::Approx(3.0 * 7168 * 18432 * (0.5 + 1.0 / 16)));  // 222,953,472
    CHECK(k.memory.weights_shared_bytes == doctest::Approx(60.0 * 3 * 7168 * 2048 * (0.5 + 1.0 / 16)));   // 1,486,356,480
    // nvidia/MiniMax-M2.5-NVFP4: layers.N.self_attn* and block_sparse_moe.gate for N = 0..61, lm_head. Attention by
    // hand: hidden 3072, 48 heads and 8 KV heads of 128: q 3072 x 6144 + k, v 3072 x 1024 + o 6144 x 3072 =
    // 44,040,192 a layer x 62 layers x 2 B.
    const ModelSpec& mm = moe_test::preset_model("minimax-m2.5-nvfp4");
    CHECK(mm.weight_dtype == Dtype::bf16);
    CHECK(mm.expert_dtype == Dtype::nvfp4);
    const moe::Estimate m = run(R"({"model":"minimax-m2.5-nvfp4","hardware":"b200","workload":{"phase":"decode","batch":1}})");
    CHECK(m.memory.weights_attention_bytes == doctest::Approx(62.0 * 44040192.0 * 2.0));  // 5,460,983,808
    // nvidia/Qwen3.5-397B-A17B-NVFP4: all 60 layers' attention (15 self_attn, 45 linear_attn) and shared experts
    // excluded; nvidia/GLM-5-NVFP4 (hf_quant_config.json as quantization_config): attention, indexer, MTP layer.
    for (const char* id : {"qwen3.5-397b-a17b-nvfp4", "glm-5-nvfp4"}) {
        CAPTURE(id);
        const ModelSpec& q = moe_test::preset_model(id);
        CHECK(q.quant_excluded.attention == doctest::Approx(1.0));
        CHECK(q.quant_excluded.experts == doctest::Approx(0.0));
        CHECK(q.expert_dtype == Dtype::nvfp4);
    }
    CHECK(moe_test::preset_model("qwen3.5-397b-a17b-nvfp4").quant_excluded.ffn == doctest::Approx(1.0));
    CHECK(moe_test::preset_model("glm-5-nvfp4").quant_excluded.ffn == doctest::Approx(0.0));
}

TEST_CASE("GLM-5.1-NVFP4's exclusion list: whole first layers, attention, shared experts and the MTP layer by pattern") {
    // nvidia/GLM-5.1-NVFP4 hf_quant_config.json quantization.exclude_modules: lm_head, model.layers.0*,
    // model.layers.1.*, model.layers.2.* (the three dense layers, first_k_dense_replace 3), model.layers.N.self_attn*
    // and model.layers.N.mlp.shared_experts* for N = 3..77, model.layers.78* (the MTP layer, num_hidden_layers 78).
    json ex = json::array({"lm_head", "model.layers.0*", "model.layers.1.*", "model.layers.2.*", "model.layers.78*"});
    for (int i = 3; i < 78; ++i) {
        ex.push_back("model.layers." + std::to_string(i) + ".mlp.shared_experts*");
        ex.push_back("model.layers." + std::to_string(i) + ".self_attn*");
    }
    moe::Issues errs;
    const ModelSpec m = moe_test::parse_config(with_modelopt(embedded_json("presets/models/glm-5.json"), ex), errs);
    REQUIRE(errs.empty());
    CHECK(m.quant_excluded.patterns == 155);  // the shipped file's 155 entries
    CHECK(m.quant_excluded.attention == doctest::Approx(1.0));
    CHECK(m.quant_excluded.ffn == doctest::Approx(1.0));
    CHECK(m.quant_excluded.experts == doctest::Approx(0.0));
    CHECK(m.quant_excluded.mtp);
    CHECK(m.weight_dtype == Dtype::bf16);
    CHECK(m.ffn_dtype == Dtype::bf16);
    CHECK(m.expert_dtype == Dtype::nvfp4);
    // Without layers 0-2 in the list (GLM-5-NVFP4 names only attention), the dense layers' MLPs stay NVFP4 and the
    // shared experts too: the FFN component is quantised.
    json attn_only = json::array({"lm_head"});
    for (int i = 0; i < 78; ++i) attn_only.push_back("model.layers." + std::to_string(i) + ".self_attn*");
    const ModelSpec g5 = moe_test::parse_config(with_modelopt(embedded_json("presets/models/glm-5.json"), attn_only), errs);
    REQUIRE(errs.empty());
    CHECK(g5.weight_dtype == Dtype::bf16);
    CHECK(g5.ffn_dtype == Dtype::nvfp4);
    CHECK_FALSE(g5.quant_excluded.mtp);
}

TEST_CASE("DeepSeek-V3.1-NVFP4: MLA's projections but not o_proj excluded; the component takes its larger part's format") {
    // nvidia/DeepSeek-V3.1-NVFP4's list names q_a_proj, q_b_proj, kv_a_proj_with_mqa and kv_b_proj of every layer
    // (o_proj stays NVFP4) and model.layers.61* (the MTP layer). DeepSeek-V3's shapes: q_a 7168 x 1536 = 11,010,048,
    // q_b 1536 x 128 x 192 = 37,748,736, kv_a 7168 x 576 = 4,128,768, kv_b 512 x 128 x 256 = 16,777,216 excluded,
    // o_proj 16384 x 7168 = 117,440,512 not: 69,664,768 / 187,105,280 = 37.2% of the attention weights.
    json ex = json::array({"lm_head", "model.layers.61*"});
    for (int i = 0; i < 61; ++i)
        for (const char* p : {"kv_a_proj_with_mqa", "kv_b_proj", "q_a_proj", "q_b_proj"})
            ex.push_back("model.layers." + std::to_string(i) + ".self_attn." + p);
    moe::Issues errs;
    const ModelSpec m = moe_test::parse_config(with_modelopt(embedded_json("presets/models/deepseek-v3.json"), ex), errs);
    REQUIRE(errs.empty());
    CHECK(m.quant_excluded.attention == doctest::Approx(69664768.0 / 187105280.0));
    CHECK(m.weight_dtype == Dtype::nvfp4);  // the larger part (o_proj) is NVFP4
    CHECK(m.quant_excluded.mtp);
    CHECK(m.expert_dtype == Dtype::nvfp4);
}

TEST_CASE("Dense NVFP4 checkpoint: Gemma-4-31B's MLPs take the checkpoint's format, its excluded attention BF16") {
    // nvidia/Gemma-4-31B-IT-NVFP4 (preset gemma-4-31b-it-nvfp4): ignore lists model.language_model.layers.N.self_attn*
    // for all 60 layers, lm_head and the vision tower; the MLPs (gate, up, down 5376 x 21504) are NVFP4.
    const ModelSpec& m = moe_test::preset_model("gemma-4-31b-it-nvfp4");
    CHECK(m.weight_dtype == Dtype::bf16);
    CHECK(m.ffn_dtype == Dtype::nvfp4);
    CHECK(m.expert_dtype == Dtype::nvfp4);  // a dense model reports its MLP's format as the experts'
    const moe::Estimate e = run(R"({"model":"gemma-4-31b-it-nvfp4","hardware":"b200","workload":{"batch":8}})");
    CHECK(e.memory.weights_dense_ffn_bytes == doctest::Approx(60.0 * 3 * 5376 * 21504 * (0.5 + 1.0 / 16)));  // 11.7 GB
    const moe::OpRecord* up = find_op(e, "ffn.gate_up_proj", moe::Phase::decode, "dense");
    const moe::OpRecord* qkv = find_op(e, "attn.qkv_proj", moe::Phase::decode, "dense");
    REQUIRE(up);
    REQUIRE(qkv);
    CHECK(up->compute_dtype == Dtype::nvfp4);  // B200: FP4 tensor cores
    CHECK(up->weight_bytes == doctest::Approx(2.0 * 5376 * 21504 * (0.5 + 1.0 / 16)));
    CHECK(qkv->compute_dtype == Dtype::bf16);
    // precision.shared_experts still overrides the checkpoint
    const moe::Estimate b = run(
        R"({"model":"gemma-4-31b-it-nvfp4","hardware":"b200","workload":{"batch":8},"precision":{"shared_experts":"bf16"}})");
    CHECK(b.memory.weights_dense_ffn_bytes == doctest::Approx(60.0 * 3 * 5376 * 21504 * 2.0));
}

TEST_CASE("compressed-tensors re: patterns and transformers' bare names") {
    // moonshotai/Kimi-K2.5 (preset kimi-k2.5): ignore re:.*self_attn.*, re:.*shared_experts.*,
    // re:.*mlp\.(gate|up|gate_up|down)_proj.* and lm_head; routed experts INT4 (group 32).
    const ModelSpec& k = moe_test::preset_model("kimi-k2.5");
    CHECK(k.weight_dtype == Dtype::bf16);
    CHECK(k.ffn_dtype == Dtype::bf16);
    CHECK(k.expert_dtype == Dtype::int4);
    // openai/gpt-oss-120b: modules_to_not_convert model.layers.*.self_attn, model.layers.*.mlp.router, embed, lm_head
    const ModelSpec& g = moe_test::preset_model("gpt-oss-120b");
    CHECK(g.weight_dtype == Dtype::bf16);
    CHECK(g.expert_dtype == Dtype::mxfp4);
    // A bare name matches the last parts of a module name only: `gate` is the router, not gate_proj.
    moe::Issues errs;
    json cfg = with_modelopt(embedded_json("presets/models/qwen3-8b.json"), json::array({"gate", "lm_head"}));
    const ModelSpec q = moe_test::parse_config(cfg, errs);
    REQUIRE(errs.empty());
    CHECK(q.quant_excluded.ffn == doctest::Approx(0.0));
    CHECK(q.ffn_dtype == Dtype::nvfp4);
    // Regular-expression syntax beyond .*, ., \. and (a|b) is refused, naming the list.
    cfg = embedded_json("presets/models/qwen3-8b.json");
    cfg["quantization_config"] = {{"quant_method", "compressed-tensors"}, {"ignore", json::array({"re:.*layers\\.[0-3]\\.mlp.*"})},
                                  {"config_groups", {{"group_0", {{"weights", {{"num_bits", 8}, {"type", "float"}}}}}}}};
    (void)moe_test::parse_config(cfg, errs);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "model.quantization_config");
    CHECK(errs[0].message.find("regular-expression") != std::string::npos);
}
