// The last three configs that shipped refused (issue 29, "Every config that ships"): Kimi-K3's Kimi Delta Attention
// and its other keys, MiMo-V2-Flash's hybrid attention, Llama-3.3-Nemotron-Super-49B's NAS block_configs. Parameters
// against the published figures with the arithmetic beside them, the KV cache and recurrent state by hand, a decode
// step's new projections by hand, and the errors that name their key. Configs: presets/models/kimi-k3.json,
// mimo-v2-flash.json, llama-3.3-nemotron-super-49b.json (verbatim from AIConfigurator's model_configs).
// Published figures:
//   Kimi-K3: "2.8 trillion total parameters, 104 billion activated" (MoonshotAI/Kimi-K3 README; Kimi K3 Technical
//     Report, arXiv 2607.24653); its vision tower (MoonViT-V2) is not counted here.
//   MiMo-V2-Flash: "309B total parameters and 15B active parameters" (XiaomiMiMo/MiMo-V2-Flash model card).
//   Llama-3.3-Nemotron-Super-49B-v1: 49.9 B parameters (nvidia/Llama-3_3-Nemotron-Super-49B-v1 model card,
//     "Model size: 49.9B").
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
// The first decode record `name` of the group labelled exactly `label`.
const moe::OpRecord* op_in(const moe::Estimate& e, const char* name, const std::string& label) {
    for (const moe::OpRecord& o : e.ops)
        if (o.phase == moe::Phase::decode && e.decode.groups[std::size_t(o.group)].label == label && std::string(o.name) == name)
            return &o;
    return nullptr;
}
}  // namespace

TEST_CASE("Kimi-K3: 69 KDA + 24 MLA layers, latent experts, attention residuals; parameters against the card") {
    const ModelSpec& m = preset_model("kimi-k3");
    CHECK(m.num_layers == 93);
    CHECK(m.kda);
    CHECK(m.kda_full_rank_gate);
    CHECK(m.n_linear_layers == 69);        // kda_layers (1-based)
    CHECK(m.n_attention_layers() == 24);   // full_attn_layers: MLA
    CHECK(m.layers[0].mixer == moe::Mixer::gated_deltanet);   // layer 1 is KDA
    CHECK(m.layers[92].mixer == moe::Mixer::attention);       // layer 93 is full attention
    CHECK(m.mla_output_gate);
    CHECK(m.num_experts == 896);
    CHECK(m.top_k == 16);                  // num_experts_per_token
    CHECK(m.moe_latent == 3584);           // routed_expert_hidden_size
    CHECK(m.shared_intermediate == 6144);  // 2 shared experts of 3072
    CHECK(m.attn_res_block == 12);
    // Per layer, hidden 7168:
    //   MLA (96 heads): q_a 7168 x 1536 + norm 1536 + q_b 1536 x 96 x 192 + kv_a 7168 x 576 + norm 512
    //     + kv_b 512 x 96 x 256 + o 12,288 x 7168 + g_proj 7168 x 12,288 = 232,196,096;
    //   KDA (96 heads of 128, P = 12,288): q, k, v 3 x 7168 x P = 264,241,152; forget gate 7168 x 128 + 128 x P =
    //     2,490,368; b_proj 7168 x 96 = 688,128; full-rank g_proj 7168 x P = 88,080,384; convs 3 x P x 4 = 147,456;
    //     A_log 96, dt_bias 12,288, o_norm 128; o_proj 88,080,384: 443,740,384;
    //   routed expert 3 x 3584 x 3072 = 33,030,144 (x 896 = 29,594,009,024); shared 3 x 7168 x 6144 = 132,120,576;
    //     latent down and up 2 x 7168 x 3584 + its norm 3584 = 51,383,808; router 896 x 7168 = 6,422,528;
    //   dense layer 0: 3 x 7168 x 33,792 = 726,663,168; norms 2 x 7168 + attention residuals 4 x 7168 = 43,008.
    // 24 MLA (5,572,706,304) + 69 KDA (30,618,086,496) + 92 MoE FFNs (92 x 29,783,935,936 = 2,740,122,106,112)
    // + dense FFN + 93 x 43,008 (3,999,744) + embedding and LM head 2 x 163,840 x 7168 (2,348,810,240)
    // + final norm and residual mix 3 x 7168 = 2,779,484,393,568.
    CHECK(m.total_params == doctest::Approx(2779484393568.0));
    // Active: 16 experts (528,482,304) in place of 896: 92 x 718,409,216 = 66,093,647,872 for the MoE FFNs ->
    // 105,363,935,328 (with the input embedding; 104,189,530,208 without).
    CHECK(m.active_params == doctest::Approx(105363935328.0));
    CHECK(m.total_params / 2.8e12 == doctest::Approx(1.0).epsilon(0.01));
    CHECK(m.active_compute_params / 104e9 == doctest::Approx(1.0).epsilon(0.005));
}

TEST_CASE("Kimi-K3: KDA keeps a fixed state per request, MLA the latent cache; the decode step's KDA projections") {
    const ModelSpec& m = preset_model("kimi-k3");
    // per KDA layer: state 96 heads x 128 x 128 x 4 B (fp32) = 6,291,456 + conv state 3 x (3 x 12,288) x 2 B =
    // 221,184; x 69 layers = 449,372,160 B per request at tp 1
    CHECK(m.linear_state_bytes_per_request(1, 1.0) == doctest::Approx(449372160.0));
    // the 24 MLA layers: (512 + 64) x 2 B = 1152 B per token each -> 27,648
    CHECK(m.kv_bytes_per_request(1.0, 96, 2.0, 1.0) == doctest::Approx(27648.0));
    const moe::Estimate e = run(R"({"model":"kimi-k3","hardware":"b200","parallel":{"tp":8,"ep":8},
                                    "workload":{"phase":"decode","batch":8,"context_len":8192}})");
    REQUIRE(e.errors.empty());
    // tp 8: 12 KDA heads per GPU (K = V = 1536). One GEMM: q, k, v (3 x 1536), beta 12, the full-rank output gate 1536
    // and the forget gate's replicated first factor 128 -> N = 6,284: 2 x 8 x 7168 x 6284 = 720,699,392 FLOPs; then
    // f_b 128 -> 1536: 2 x 8 x 128 x 1536 = 3,145,728.
    const moe::OpRecord* in = op_in(e, "attn.kda_in_proj", "MoE layers (Kimi Delta Attention)");
    const moe::OpRecord* fb = op_in(e, "attn.kda_gate_b_proj", "MoE layers (Kimi Delta Attention)");
    REQUIRE(in != nullptr);
    REQUIRE(fb != nullptr);
    CHECK(in->count == 68);  // + the dense layer 0, also KDA
    CHECK(in->flops == doctest::Approx(720699392.0));
    CHECK(fb->flops == doctest::Approx(3145728.0));
    // the MLA layers' output gate: 7168 -> 12 heads x 128: 2 x 8 x 7168 x 1536 = 176,160,768
    const moe::OpRecord* g = op_in(e, "attn.g_proj", "MoE layers");
    REQUIRE(g != nullptr);
    CHECK(g->count == 24);
    CHECK(g->flops == doctest::Approx(176160768.0));
    // attention residuals: layer.misc reads attn_res_reads + 2 more hidden-size vectors per token than plain layers
    CHECK(m.attn_res_reads == doctest::Approx(2.0 * (12.0 * (2 + 3 + 4 + 5 + 6 + 7 + 8) + 9.0 * 9) / 93.0));
}

TEST_CASE("MiMo-V2-Flash: sliding and full layers of their own heads and widths; parameters against the card") {
    const ModelSpec& m = preset_model("mimo-v2-flash");
    CHECK(m.num_layers == 48);
    CHECK(m.n_window_layers == 39);  // hybrid_layer_pattern 1
    CHECK(m.layers[0].window == 0);
    CHECK(m.layers[1].window == 128);
    CHECK(m.layers[1].kv_heads == 8);
    CHECK(m.layers[0].kv_heads == 4);
    CHECK(m.layers[1].sinks);
    CHECK_FALSE(m.layers[0].sinks);
    // hidden 4096, 64 heads, K 192 / V 128: full layer q 4096 x 12,288 + k 4096 x 4 x 192 + v 4096 x 4 x 128
    // + o 8192 x 4096 = 89,128,960; sliding layer 8 KV heads: 94,371,840 + 64 sink biases = 94,371,904.
    // Experts 3 x 4096 x 2048 = 25,165,824 (x 256 on 47 layers), routers 256 x 4096, dense layer 0 3 x 4096 x 16,384,
    // norms 2 x 4096 per layer, embedding and LM head 2 x 152,576 x 4096, final norm:
    // 9 x 89,128,960 + 39 x 94,371,904 + 201,326,592 + 47 x 6,443,499,520 + 393,216 + 1,249,898,496 = 308,778,768,832.
    CHECK(m.total_params == doctest::Approx(308778768832.0));
    // active: 8 experts (201,326,592) per MoE layer: 15,445,924,288 (14,821,167,104 without the input embedding)
    CHECK(m.active_params == doctest::Approx(15445924288.0));
    CHECK(m.total_params / 309e9 == doctest::Approx(1.0).epsilon(0.001));
    CHECK(m.active_compute_params / 15e9 == doctest::Approx(1.0).epsilon(0.02));
}

TEST_CASE("MiMo-V2-Flash KV cache and decode step by hand") {
    const ModelSpec& m = preset_model("mimo-v2-flash");
    // tp 1, bf16, 32,768 tokens: 9 full layers x 32,768 x 4 heads x (192 + 128) x 2 B = 754,974,720; 39 sliding
    // layers x 128 x 8 x 320 x 2 = 25,559,040 -> 780,533,760.
    CHECK(m.kv_bytes_per_request(32768, 4, 2.0, 1.0) == doctest::Approx(780533760.0));
    // tp 8: one KV head per GPU in both kinds (the full layers' 4 replicated): 9 x 32,768 x 640 + 39 x 128 x 640
    CHECK(m.kv_bytes_per_request(32768, 1, 2.0, 1.0, 8.0) == doctest::Approx(191938560.0));
    const moe::Estimate e = run(R"({"model":"mimo-v2-flash","hardware":"h100-sxm","precision":{"kv_cache":"bf16"},
                                    "workload":{"phase":"decode","batch":8,"context_len":32768}})");
    REQUIRE(e.errors.empty());
    // sliding layer: qkv_proj N = 64 x 192 + 8 x (192 + 128) = 14,848: 2 x 8 x 4096 x 14,848 = 973,078,528; o_proj
    // from 64 x 128: 2 x 8 x 8192 x 4096 = 536,870,912; attention over 128 keys, QK 192 + PV 128 per head and key:
    // 2 x 8 x 64 x 128 x 320 = 41,943,040 FLOPs, K and V read 8 x 128 x 8 x 320 x 2 = 5,242,880 B + q and o 327,680.
    const std::string swa = "MoE layers (window 128) (8 KV heads)";
    const moe::OpRecord* q = op_in(e, "attn.qkv_proj", swa);
    const moe::OpRecord* o = op_in(e, "attn.o_proj", swa);
    const moe::OpRecord* c = op_in(e, "attn.core", swa);
    REQUIRE(q != nullptr);
    REQUIRE(o != nullptr);
    REQUIRE(c != nullptr);
    CHECK(q->count == 39);
    CHECK(q->flops == doctest::Approx(973078528.0));
    CHECK(o->flops == doctest::Approx(536870912.0));
    CHECK(c->flops == doctest::Approx(41943040.0));
    CHECK(c->activation_bytes == doctest::Approx(5242880.0 + 327680.0));
    // full layer: N = 12,288 + 4 x 320 = 13,568: 889,192,448 FLOPs; every one of the 32,768 keys
    const moe::OpRecord* fq = op_in(e, "attn.qkv_proj", "MoE layers (4 KV heads)");
    const moe::OpRecord* fc = op_in(e, "attn.core", "MoE layers (4 KV heads)");
    REQUIRE(fq != nullptr);
    REQUIRE(fc != nullptr);
    CHECK(fq->count == 8);
    CHECK(fq->flops == doctest::Approx(889192448.0));
    CHECK(fc->flops == doctest::Approx(2.0 * 8 * 64 * 32768 * 320));
}

TEST_CASE("Llama-3.3-Nemotron-Super-49B: NAS blocks priced layer by layer; parameters against the card") {
    const ModelSpec& m = preset_model("llama-3.3-nemotron-super-49b");
    CHECK(m.per_layer_blocks);
    CHECK(m.num_layers == 80);
    CHECK(m.n_mixerless_layers == 31);  // attention no_op
    CHECK(m.n_attention_layers() == 49);
    CHECK(m.num_kv_heads == 8);         // n_heads_in_group 8 of 64 heads
    CHECK(m.intermediate == 28672);     // the widest FFN (ffn_mult 5.25)
    // ffn_mult -> int(2 x mult x 8192 / 3) up to a multiple of 256: 2.625 -> 14,336; 5.25 -> 28,672;
    // 3.28125 -> 17,920; 1.3125 -> 7,168; 1.0 -> 5,461 -> 5,632; 0.5 -> 2,730 -> 2,816.
    int widths[6] = {0, 0, 0, 0, 0, 0};
    for (const moe::LayerDesc& l : m.layers) {
        const int w[6] = {14336, 28672, 17920, 7168, 5632, 2816};
        for (int i = 0; i < 6; ++i) widths[i] += l.ffn_inter == w[i];
    }
    CHECK(widths[0] == 6);
    CHECK(widths[1] == 49);
    CHECK(widths[2] == 1);
    CHECK(widths[3] == 10);
    CHECK(widths[4] == 8);
    CHECK(widths[5] == 6);
    // attention 8192 x 8192 (q) + 2 x 8192 x 1024 (k, v) + 8192 x 8192 (o) = 150,994,944 on 49 layers;
    // FFNs 3 x 8192 x width: 6 x 352,321,536 + 49 x 704,643,072 + 440,401,920 + 10 x 176,160,768 + 8 x 138,412,032
    // + 6 x 69,206,016 = 40,365,981,696; norms: one per present block, (49 + 80) x 8192 = 1,056,768; embedding and
    // LM head 2 x 128,256 x 8192 = 2,101,346,304; final norm 8192:
    // 7,398,752,256 + 40,365,981,696 + 1,056,768 + 2,101,346,304 + 8192 = 49,867,145,216.
    double ffn = 6 * 352321536.0 + 49 * 704643072.0 + 440401920.0 + 10 * 176160768.0 + 8 * 138412032.0 + 6 * 69206016.0;
    const double total = 49 * 150994944.0 + ffn + 129 * 8192.0 + 2 * 128256.0 * 8192 + 8192;
    CHECK(m.total_params == doctest::Approx(total));
    CHECK(m.total_params == doctest::Approx(49867145216.0));
    CHECK(m.total_params / 49.9e9 == doctest::Approx(1.0).epsilon(0.001));
    // KV: only the 49 attention layers, 2 x 8 x 128 x 2 B each -> 200,704 B per token at tp 1
    CHECK(m.kv_bytes_per_request(1.0, 8, 2.0, 1.0) == doctest::Approx(200704.0));
    // weights at tp 1, bf16: every matrix in 2 B, the norms in 4 B
    const moe::Estimate e = run(R"({"model":"llama-3.3-nemotron-super-49b","hardware":"h100-sxm",
                                    "workload":{"phase":"decode","batch":8,"context_len":4096}})");
    REQUIRE(e.errors.empty());
    CHECK(e.memory.weights_bytes == doctest::Approx(2.0 * (total - 129 * 8192.0 - 8192) + 4.0 * (129 * 8192.0 + 8192)));
    // the 2,816-wide FFN layers: gate and up 2 x 8 x 8192 x 5632 FLOPs; no attention record in that group
    const moe::OpRecord* up = op_in(e, "ffn.gate_up_proj", "dense layers (no attention) (FFN 2816)");
    REQUIRE(up != nullptr);
    CHECK(up->count == 6);
    CHECK(up->flops == doctest::Approx(2.0 * 8 * 8192 * 5632));
    CHECK(op_in(e, "attn.qkv_proj", "dense layers (no attention) (FFN 2816)") == nullptr);
}

TEST_CASE("Errors name their key: NAS blocks, KDA layer lists, MiMo head counts") {
    moe::Issues errs;
    {
        json c = embedded_json("presets/models/llama-3.3-nemotron-super-49b.json");
        c["block_configs"][3]["attention"]["num_sink_tokens"] = 4;
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].path == "model.block_configs[3].attention.num_sink_tokens");
        CHECK(errs[0].message.find("not modelled") != std::string::npos);
    }
    {
        errs.clear();
        json c = embedded_json("presets/models/llama-3.3-nemotron-super-49b.json");
        c["block_configs"][0]["attention"]["n_heads_in_group"] = 7;
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE_FALSE(errs.empty());
        CHECK(errs[0].path == "model.block_configs[0].attention.n_heads_in_group");
    }
    {
        errs.clear();
        json c = embedded_json("presets/models/llama-3.3-nemotron-super-49b.json");
        c["block_configs"][5]["ffn"]["replace_with_linear"] = true;
        c["block_configs"][5]["attention"]["replace_with_linear"] = true;
        c["block_configs"][5]["attention"]["n_heads_in_group"] = nullptr;
        const ModelSpec m = moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        CHECK(errs.empty());
        CHECK(m.n_proj_layers == 1);
        // layer 5 had attention (150,994,944) and a 28,672 FFN (704,643,072): now two 8192 x 8192 maps
        CHECK(m.total_params == doctest::Approx(49867145216.0 - 150994944.0 - 704643072.0 + 2 * 67108864.0));
    }
    {
        errs.clear();
        json c = embedded_json("presets/models/kimi-k3.json");
        c["text_config"]["linear_attn_config"]["kda_layers"][0] = 0;  // the lists are 1-based
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE_FALSE(errs.empty());
        CHECK(errs[0].path == "model.text_config.linear_attn_config.kda_layers[0]");
    }
    {
        errs.clear();
        json c = embedded_json("presets/models/mimo-v2-flash.json");
        c["swa_num_key_value_heads"] = 7;
        moe::parse_hf_config(c, "model", errs);
        INFO(messages(errs));
        REQUIRE_FALSE(errs.empty());
        CHECK(errs[0].path == "model.swa_num_key_value_heads");
    }
}
