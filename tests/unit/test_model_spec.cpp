// ModelSpec: HF config parsing, key spellings, parameter counts, bad input.
#include "test_helpers.h"

using moe::ModelSpec;
using nlohmann::json;

namespace {
ModelSpec parse_spec(const json& j, moe::Issues& errs) { return moe::parse_hf_config(j, "model", errs); }
using moe_test::preset_model;
}  // namespace

TEST_CASE("every preset model, GPU and scenario parses") {
    const moe::Catalog& cat = moe::builtin_catalog();
    // DESIGN §4.1a: these ids are stable.
    for (const char* id : {"deepseek-v3", "deepseek-v2-lite", "kimi-k2", "qwen3-30b-a3b", "qwen3-235b-a22b", "qwen3-8b",
                           "mixtral-8x7b", "gpt-oss-120b", "llama-3.1-70b", "llama-4-scout"})
        CHECK_MESSAGE(cat.model(id) != nullptr, id);
    for (const char* id : {"h100-sxm", "h200", "h800", "h20", "b200", "a100-sxm-80g", "mi300x"})
        CHECK_MESSAGE(cat.gpu(id) != nullptr, id);
    REQUIRE(cat.scenarios().size() >= 6);
    // smoke: every preset scenario evaluates to finite numbers (STYLE 9)
    for (const moe::CatalogEntry& s : cat.scenarios()) {
        INFO(s.id);
        moe::ParseResult r = moe::scenario_from_json(s.json, cat);
        for (auto& e : r.errors) INFO(e.text());
        REQUIRE(r.ok());
        moe::Estimate e = moe::estimate(r.scenario, moe::builtin_tables());
        REQUIRE(e.ok);
        moe_test::check_all_finite(e);
    }
}

TEST_CASE("DeepSeek-V3: MLA, 256 experts top-8, 1 shared, first 3 layers dense, FP8 blocks") {
    const ModelSpec& m = preset_model("deepseek-v3");
    CHECK(m.attn == moe::AttnKind::mla);
    CHECK(m.num_experts == 256);
    CHECK(m.top_k == 8);
    CHECK(m.moe_intermediate == 2048);
    CHECK(m.shared_intermediate == 2048);
    CHECK(m.n_dense_layers == 3);  // first_k_dense_replace (InferSim costs these as MoE)
    CHECK(m.n_moe_layers == 58);
    CHECK(m.kv_lora_rank == 512);
    CHECK(m.qk_rope_head_dim == 64);
    CHECK(m.weight_dtype == moe::Dtype::fp8);
    CHECK(m.mtp_layers == 1);
}

TEST_CASE("DeepSeek-V3 parameters: 671B main model + the MTP module, to the checkpoint's stored count") {
    // Published: README "685B = 671B of Main Model weights + 14B of MTP Module weights"; README_WEIGHTS.md "MTP:
    // 11.5B unique parameters (excluding the shared 0.9B Embedding and 0.9B output Head)"; the safetensors metadata
    // of deepseek-ai/DeepSeek-V3: 684,531,386,000 stored parameters (weights, norms, biases and FP32 block scales).
    // By hand (config.json: h 7168, vocab 129,280, 3 dense + 58 MoE layers, q_lora 1536, kv_lora 512):
    //   MLA attention: q_a 1536 x 7168 + q_b 24576 x 1536 + kv_a 576 x 7168 + kv_b 32768 x 512 + o 7168 x 16384
    //     = 187,105,280, + q_a and kv_a norms 1536 + 512 = 187,107,328
    //   MoE layer: attention + 257 experts (256 routed + 1 shared) x 3 x 7168 x 2048 (44,040,192) + router 256 x 7168
    //     + two norms 2 x 7168 = 11,507,286,016 (the checkpoint adds e_score_correction_bias, 256, not counted here)
    //   dense layer: attention + 3 x 7168 x 18432 + 2 x 7168 = 583,483,392
    //   main: embedding + LM head 2 x 129,280 x 7168 + final norm 7168 + 3 dense + 58 MoE = 671,026,404,352
    //   MTP module: one MoE layer + eh_proj 2 x 7168 x 7168 (102,760,448) + enorm, hnorm, shared_head.norm 3 x 7168
    //     = 11,610,067,968 (before issue 30 the shared_head norm was missing: 7168 fewer)
    const ModelSpec& m = preset_model("deepseek-v3");
    const double h = 7168, V = 129280;
    const double attn = 1536 * h + 24576.0 * 1536 + 576 * h + 32768.0 * 512 + h * 16384 + 1536 + 512;
    CHECK(attn == 187107328);
    const double moe_layer = attn + 257 * 3 * h * 2048 + 256 * h + 2 * h;
    CHECK(moe_layer == 11507286016);
    const double dense_layer = attn + 3 * h * 18432 + 2 * h;
    CHECK(dense_layer == 583483392);
    CHECK(m.total_params == 2 * V * h + h + 3 * dense_layer + 58 * moe_layer);
    CHECK(m.total_params == 671026404352);
    CHECK(m.mtp_params == moe_layer + 2 * h * h + 3 * h);
    CHECK(m.mtp_params == 11610067968);
    // Against the published figures: 671.03B main (the report's 671B); 11.61B unique MTP parameters (README_WEIGHTS'
    // 11.5B, +1.0%); with the copies of the embedding and head stored in layer 61, 13.46B, which the README's
    // "685B - 671B = 14B" rounds from the two rounded totals.
    CHECK(moe_test::rel_err(m.total_params, 671e9) < 0.001);
    CHECK(moe_test::rel_err(m.mtp_params, 11.5e9) < 0.011);
    // The stored count, exactly: + the router's e_score_correction_bias (256 on each of 59 MoE layers), the copies of
    // the embedding and head in layer 61, and one FP32 scale per 128 x 128 block of every FP8 matrix:
    //   attention 12x56 + 192x12 + 5x56 + 256x4 + 56x128 = 11,448; expert 2 x 16x56 + 56x16 = 2,688; dense FFN
    //   2 x 144x56 + 56x144 = 24,192; scales = 3 x (11,448 + 24,192) + 59 x (11,448 + 257 x 2,688) = 41,540,496.
    const double scales = 3 * (11448 + 24192) + 59 * (11448 + 257 * 2688);
    CHECK(scales == 41540496);
    CHECK(m.total_params + m.mtp_params + 59 * 256 + 2 * V * h + scales == 684531386000.0);
}

TEST_CASE("Kimi-K2 (DeepSeek-V3 architecture) per DESIGN §6") {
    const ModelSpec& m = preset_model("kimi-k2");
    CHECK(m.num_layers == 61);
    CHECK(m.hidden == 7168);
    CHECK(m.num_heads == 64);
    CHECK(m.num_experts == 384);
    CHECK(m.top_k == 8);
    CHECK(m.moe_intermediate == 2048);
    CHECK(m.n_dense_layers == 1);
    CHECK(m.vocab == 163840);
}

TEST_CASE("gpt-oss-120b: alternating sliding window, MXFP4 experts, bf16 attention") {
    const ModelSpec& m = preset_model("gpt-oss-120b");
    CHECK(m.n_window_layers == 18);
    CHECK(m.layers[0].window == 128);
    CHECK(m.layers[1].window == 0);
    CHECK(m.expert_dtype == moe::Dtype::mxfp4);
    CHECK(m.weight_dtype == moe::Dtype::bf16);  // modules_to_not_convert: self_attn
    CHECK(m.head_dim == 64);
    CHECK(m.qkv_bias);
}

TEST_CASE("Llama 4 Scout: text_config nesting, shared expert, chunked attention on 3 of 4 layers") {
    const ModelSpec& m = preset_model("llama-4-scout");
    CHECK(m.hidden == 5120);
    CHECK(m.num_experts == 16);
    CHECK(m.top_k == 1);
    CHECK(m.shared_intermediate == 8192);
    CHECK(m.n_moe_layers == 48);
    CHECK(m.n_window_layers == 36);
    // compressed-tensors 8-bit float, whose ignore list keeps every language layer's self_attn in BF16
    CHECK(m.expert_dtype == moe::Dtype::fp8);
    CHECK(m.weight_dtype == moe::Dtype::bf16);
}

TEST_CASE("key spellings in the wild give the same model") {
    json base = {{"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 8}, {"num_key_value_heads", 2},
                 {"vocab_size", 1000}, {"intermediate_size", 4096}, {"moe_intermediate_size", 256}, {"num_experts_per_tok", 2}};
    for (const char* key : {"num_experts", "num_local_experts", "n_routed_experts", "num_routed_experts"}) {
        json j = base;
        j[key] = 16;
        moe::Issues errs;
        ModelSpec m = parse_spec(j, errs);
        CHECK_MESSAGE(errs.empty(), key);
        CHECK(m.num_experts == 16);
        CHECK(m.n_moe_layers == 4);
    }
    json shared = base;
    shared["num_experts"] = 16;
    shared["shared_expert_intermediate_size"] = 512;  // Qwen2-MoE / Qwen3-Next style (InferSim ignores it)
    moe::Issues errs;
    CHECK(parse_spec(shared, errs).shared_intermediate == 512);
    shared.erase("shared_expert_intermediate_size");
    shared["n_shared_experts"] = 2;
    CHECK(parse_spec(shared, errs).shared_intermediate == 2 * 256);
    json sparse = base;
    sparse["num_experts"] = 16;
    sparse["decoder_sparse_step"] = 2;  // Qwen: layers 1 and 3 are MoE
    sparse["mlp_only_layers"] = json::array({3});
    ModelSpec m = parse_spec(sparse, errs);
    CHECK(errs.empty());
    CHECK(m.n_moe_layers == 1);
    CHECK(m.layers[1].moe);
    json freq = base;
    freq["n_routed_experts"] = 16;
    freq["first_k_dense_replace"] = 1;
    freq["moe_layer_freq"] = 2;  // DeepSeek: after the first dense layer, every second
    m = parse_spec(freq, errs);
    CHECK(m.layers[1].moe);
    CHECK(!m.layers[2].moe);
    CHECK(m.layers[3].moe);
}

// Parameter totals from the model cards: within 2% (active within 5%).
TEST_CASE("parameter counts match the model cards") {
    struct Card { const char* id; double total, active; const char* source; };
    const Card cards[] = {
        {"deepseek-v3", 671e9, 37e9, "DeepSeek-V3 technical report (arXiv 2412.19437): 671B total, 37B activated"},
        {"qwen3-30b-a3b", 30.5e9, 3.3e9, "Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"},
        {"qwen3-235b-a22b", 235e9, 22e9, "Qwen3-235B-A22B model card: 235B total, 22B activated"},
        {"mixtral-8x7b", 46.7e9, 12.9e9, "Mixtral of Experts (arXiv 2401.04088): 46.7B total, 12.9B active"},
    };
    for (const Card& c : cards) {
        const ModelSpec& m = preset_model(c.id);
        INFO(c.id << ": " << m.total_params / 1e9 << "B / " << m.active_params / 1e9 << "B (" << c.source << ")");
        CHECK(moe_test::rel_err(m.total_params, c.total) < 0.02);
        CHECK(moe_test::rel_err(m.active_params, c.active) < 0.05);
    }
    // gpt-oss model card (OpenAI, 2025-08): 116.83B total, 5.13B active. OpenAI counts active parameters without the
    // input embedding lookup; that is our active_compute_params.
    const ModelSpec& g = preset_model("gpt-oss-120b");
    CHECK(moe_test::rel_err(g.total_params, 116.8e9) < 0.02);
    CHECK(moe_test::rel_err(g.active_compute_params, 5.1e9) < 0.05);
}

TEST_CASE("bad configs give an error naming the field, never a crash") {
    moe::Issues errs;
    json ok = {{"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 8}, {"vocab_size", 1000}, {"intermediate_size", 4096}};
    parse_spec(ok, errs);
    REQUIRE(errs.empty());
    auto expect = [&](json j, const char* field) {
        moe::Issues e;
        parse_spec(j, e);
        REQUIRE_MESSAGE(!e.empty(), j.dump());
        CHECK_MESSAGE(e[0].path == std::string("model.") + field, e[0].text());
    };
    json j = ok; j.erase("hidden_size"); expect(j, "hidden_size");
    j = ok; j["hidden_size"] = 0; expect(j, "hidden_size");
    j = ok; j["hidden_size"] = -5; expect(j, "hidden_size");
    j = ok; j["hidden_size"] = "big"; expect(j, "hidden_size");
    j = ok; j["hidden_size"] = 1e12; expect(j, "hidden_size");
    j = ok; j["hidden_size"] = 10.5; expect(j, "hidden_size");
    j = ok; j["num_key_value_heads"] = 3; expect(j, "num_key_value_heads");
    j = ok; j["num_experts"] = 8; expect(j, "num_experts_per_tok");
    j = ok; j["quantization_config"] = {{"quant_method", "magic"}}; expect(j, "quantization_config.quant_method");
    moe::Issues e;
    parse_spec(json::array(), e);
    CHECK(!e.empty());
    // NaN cannot be written in JSON; a parse of text with NaN is a parse error at the scenario level
    moe::ParseResult r = moe::parse_scenario(R"({"model": {"hidden_size": NaN}})", moe::builtin_catalog());
    CHECK(!r.ok());
}

// Issue 27: what a hostile config got through silently, each now an error naming its key. (Every config.json under
// /work/shared/anchors/*/ and presets/models parses as before: none of them does any of this.)
TEST_CASE("HF configs: unknown dtypes, zero or disagreeing expert counts, unknown layer types, heads that do not divide") {
    const json moe_ok = {{"model_type", "qwen3_moe"}, {"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 8},
                         {"vocab_size", 1000}, {"intermediate_size", 4096}, {"moe_intermediate_size", 512}, {"num_experts", 32},
                         {"num_experts_per_tok", 4}, {"torch_dtype", "bfloat16"}};
    moe::Issues errs;
    parse_spec(moe_ok, errs);
    REQUIRE(errs.empty());
    auto first_error = [&](const json& j) {
        moe::Issues e;
        parse_spec(j, e);
        return e.empty() ? std::string() : e[0].text();
    };
    json j = moe_ok;
    j["torch_dtype"] = "float128";  // was read as bf16
    CHECK(first_error(j) == "model.torch_dtype: unknown dtype \"float128\" (bfloat16, float16, float32, fp8, ...)");
    j = moe_ok; j.erase("torch_dtype"); j["dtype"] = 16;
    CHECK(first_error(j).rfind("model.dtype: must be a string", 0) == 0);
    j = moe_ok; j["torch_dtype"] = "float16";
    CHECK(first_error(j).empty());
    j = moe_ok; j["num_experts"] = 0;  // was a dense model
    CHECK(first_error(j).rfind("model.num_experts: is 0 in a mixture-of-experts config (num_experts_per_tok > 0)", 0) == 0);
    j = moe_ok; j["num_experts"] = 0; j.erase("num_experts_per_tok");
    CHECK(first_error(j).rfind("model.num_experts: is 0 in a mixture-of-experts config (model_type \"qwen3_moe\")", 0) == 0);
    j = moe_ok; j["n_routed_experts"] = 64;  // two spellings that disagree
    CHECK(first_error(j) == "model.num_experts: 32 disagrees with n_routed_experts = 64");
    j = moe_ok; j["n_routed_experts"] = 32;  // ... or agree (GLM-5.2's config)
    CHECK(first_error(j).empty());
    json dense = {{"model_type", "llama"}, {"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 8},
                  {"vocab_size", 1000}, {"intermediate_size", 4096}, {"num_experts", 0}};
    CHECK(first_error(dense).empty());  // a dense config may say it has no experts
    j = moe_ok; j["layer_types"] = {"full_attention", "sliding_attention", "mamba", "full_attention"}; j["sliding_window"] = 128;
    CHECK(first_error(j) == "model.layer_types[2]: unknown layer type \"mamba\" (full_attention, sliding_attention, "
                            "linear_attention, deepseek_sparse_attention)");
    j = moe_ok; j["layer_types"] = {"full_attention", 7, "full_attention", "full_attention"};
    CHECK(first_error(j).rfind("model.layer_types[1]: unknown layer type 7", 0) == 0);
    j = moe_ok; j["layer_types"] = "full_attention";
    CHECK(first_error(j) == "model.layer_types: must be a list of layer types");
    j = moe_ok; j["layer_types"] = {"full_attention", "deepseek_sparse_attention", "full_attention", "full_attention"};
    CHECK(first_error(j).empty());
    j = moe_ok; j["hidden_size"] = 1004;  // 1004 / 8 heads: no head_dim to say how wide a head is
    CHECK(first_error(j) == "model.hidden_size: 1004 is not divisible by 8 attention heads: give head_dim");
    j["head_dim"] = 128;  // with head_dim (Qwen3.5-27B: 5120 hidden, 24 heads of 256) it is fine
    CHECK(first_error(j).empty());
}

TEST_CASE("issue 29: moe_layer_freq lists, ModelOpt hf_quant_config, and layers we do not model refused by name") {
    const json base = {{"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 8}, {"vocab_size", 1000},
                       {"intermediate_size", 4096}, {"n_routed_experts", 16}, {"num_experts_per_tok", 2},
                       {"moe_intermediate_size", 256}};
    moe::Issues errs;
    // moe_layer_freq as one 0/1 per layer (MiniMax-M3, MiMo-V2-Flash)
    json listed = base;
    listed["moe_layer_freq"] = {0, 1, 0, 1};
    ModelSpec m = parse_spec(listed, errs);
    REQUIRE(errs.empty());
    CHECK(m.n_moe_layers == 2);
    CHECK_FALSE(m.layers[0].moe);
    CHECK(m.layers[3].moe);
    listed["moe_layer_freq"] = {0, 1, 1};
    parse_spec(listed, errs);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "model.moe_layer_freq");
    errs.clear();
    // ModelOpt's hf_quant_config.json given as quantization_config: NVFP4 everywhere ...
    json q = base;
    q["quantization_config"] = {{"producer", {{"name", "modelopt"}, {"version", "0.37"}}},
                                {"quantization", {{"quant_algo", "NVFP4"}, {"kv_cache_quant_algo", "FP8"}, {"group_size", 16}}}};
    m = parse_spec(q, errs);
    REQUIRE(errs.empty());
    CHECK(m.expert_dtype == moe::Dtype::nvfp4);
    CHECK(m.weight_dtype == moe::Dtype::nvfp4);
    // ... or MIXED_PRECISION: each module with its own (Qwen3.6-NVFP4: FP8 attention, NVFP4 experts; DeepSeek-V4-NVFP4:
    // only the experts, the rest stays 16-bit)
    q["quantization_config"]["quantization"] = {
        {"quant_algo", "MIXED_PRECISION"},
        {"quantized_layers", {{"model.layers.0.self_attn.q_proj", {{"quant_algo", "FP8"}}},
                              {"model.layers.0.mlp.experts.0.up_proj", {{"quant_algo", "NVFP4"}, {"group_size", 16}}}}}};
    m = parse_spec(q, errs);
    REQUIRE(errs.empty());
    CHECK(m.expert_dtype == moe::Dtype::nvfp4);
    CHECK(m.weight_dtype == moe::Dtype::fp8);
    q["quantization_config"]["quantization"]["quantized_layers"] = {{"layers.0.ffn.experts", {{"quant_algo", "NVFP4"}}}};
    m = parse_spec(q, errs);
    CHECK(m.expert_dtype == moe::Dtype::nvfp4);
    CHECK(m.weight_dtype == moe::Dtype::bf16);
    // Mamba-2 hybrids and their LatentMoE are modelled (tests/unit/test_mamba.cpp, test_latent_moe.cpp); an MTP block
    // list other than attention + MoE is refused naming that key and the mechanism.
    json nh = {{"model_type", "nemotron_h"}, {"hidden_size", 8192}, {"layers_block_type", {"mamba", "moe", "attention"}},
               {"moe_latent_size", 2048}, {"mtp_layers_block_type", {"mamba", "moe"}}};
    parse_spec(nh, errs);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "model");
    CHECK(errs[0].message.find("mtp_layers_block_type") == 0);
    CHECK(errs[0].message.find("not modelled") != std::string::npos);
}
