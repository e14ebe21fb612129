// MiniMax-M3's block-sparse attention (MiniMax Sparse Attention, issue 29): the config's sparse_attention_config read
// into sparse layers, parameters against the model card, the KV cache with the indexer's keys, a decode step at 1M
// tokens and a prefill worked by hand, the card's speedups over MiniMax-M2 at 1M, and the refusals (each naming its
// key). Numbers from presets/models/minimax-m3.json (= MiniMaxAI/MiniMax-M3 config.json) and docs/model.md,
// "Block-sparse attention".
#include <nlohmann/json.hpp>

#include "test_helpers.h"

using moe::ModelSpec;
using moe_test::find_op;
using moe_test::run;
using nlohmann::json;

namespace {
using moe_test::preset_model;
using moe_test::parse_config;
// A small MiniMax-M3-shaped config: 4 layers, the first dense and full attention, the rest MoE and sparse.
json tiny_m3() {
    return {{"model_type", "minimax_m3"}, {"hidden_size", 1024}, {"num_hidden_layers", 4}, {"num_attention_heads", 16},
            {"num_key_value_heads", 4},
            {"head_dim", 64}, {"vocab_size", 1000}, {"intermediate_size", 256}, {"moe_intermediate_size", 256},
            {"dense_intermediate_size", 2048}, {"shared_intermediate_size", 256}, {"n_shared_experts", 1},
            {"num_local_experts", 8}, {"num_experts_per_tok", 2}, {"moe_layer_freq", {0, 1, 1, 1}},
            {"sparse_attention_config",
             {{"use_sparse_attention", true}, {"sparse_attention_freq", {0, 1, 1, 1}}, {"sparse_block_size", 64},
              {"sparse_topk_blocks", 8}, {"sparse_local_block", 1}, {"sparse_init_block", 0},
              {"sparse_num_index_heads", 4}, {"sparse_index_dim", 64}, {"sparse_disable_index_value", {0, 1, 1, 1}}}}};
}
bool has_error(const moe::Issues& errs, const std::string& path) {
    for (const moe::Issue& e : errs)
        if (e.path == path) return true;
    return false;
}
// attn.core + attn.indexer time of one estimate's phase, all layers
double attention_us(const moe::Estimate& e, moe::Phase ph) {
    double us = 0;
    for (const moe::OpRecord& o : e.ops)
        if (o.phase == ph && (std::string(o.name) == "attn.core" || std::string(o.name) == "attn.indexer")) us += o.time_us * o.count;
    return us;
}
// One DP rank per GPU holding whole sequences (tp 1): every attention and index head on the GPU.
std::string m3_scenario(const char* model, const char* workload) {
    return std::string(R"({"model":")") + model + R"(","hardware":"b200","parallel":{"tp":1,"dp":8,"ep":8},
        "runtime":{"two_batch_overlap":false},"workload":)" + workload + "}";
}
const char* kDecode1M = R"({"phase":"decode","batch":1,"context_len":1048576})";
}  // namespace

TEST_CASE("MiniMax-M3: 57 block-sparse layers, parameters against the model card") {
    const ModelSpec& m = preset_model("minimax-m3");
    CHECK(m.block_sparse());
    CHECK_FALSE(m.dsa());
    CHECK(m.n_sparse_layers == 57);  // sparse_attention_freq: 0, 0, 0, then 1 on layers 3..59
    CHECK(m.n_moe_layers == 57);
    CHECK(m.sparse_keys() == 2048);  // 16 blocks x 128
    CHECK(m.intermediate == 12288);  // dense_intermediate_size (intermediate_size 3072 is the experts')
    CHECK(m.shared_intermediate == 3072);
    // By hand, hidden 6144: attention q 6144 x 8192 + k, v 2 x 6144 x 512 + o 8192 x 6144 = 106,954,752; the sparse
    // layers' indexer index_q 6144 x 512 + index_k 6144 x 128 + 2 norms x 128 = 3,932,416; an expert 3 x 6144 x 3072
    // = 56,623,104 (x 128 = 7,247,757,312), the shared one as much, router 128 x 6144 = 786,432, norms 12,288.
    // MoE layer: 106,954,752 + 3,932,416 + 7,247,757,312 + 56,623,104 + 786,432 + 12,288 = 7,416,066,304;
    // dense layer: 106,954,752 + 3 x 6144 x 12288 (226,492,416) + 12,288 = 333,459,456;
    // embedding and LM head 2 x 200,064 x 6144 = 2,458,386,432, final norm 6144.
    // Total = 2,458,392,576 + 3 x 333,459,456 + 57 x 7,416,066,304 = 426,174,550,272.
    CHECK(m.total_params == doctest::Approx(426174550272.0));
    // Active: MoE layer with 4 experts: 106,954,752 + 3,932,416 + 226,492,416 + 56,623,104 + 786,432 + 12,288
    // = 394,801,408; 2,458,392,576 + 1,000,378,368 + 57 x 394,801,408 = 25,962,451,200.
    CHECK(m.active_params == doctest::Approx(25962451200.0));
    // The card (huggingface.co/MiniMaxAI/MiniMax-M3): "~428B parameters and ~23B activated". Its total holds the
    // vision tower too (32 layers of width 1280, ~0.6B) which is not counted here: 426.2B is 0.4% under. Its active
    // count leaves out the embedding and the LM head: 25.96B - 2.46B = 23.50B.
    CHECK(m.total_params / 428e9 == doctest::Approx(1.0).epsilon(0.006));
    CHECK((m.active_params - 2.0 * 200064.0 * 6144.0) / 23e9 == doctest::Approx(1.0).epsilon(0.025));
}

TEST_CASE("MiniMax-M3 KV cache: K and V on every layer, the indexer's key on the sparse ones") {
    // Per token: 60 layers x K and V x 4 KV heads x 128 x 2 B = 122,880, plus 57 sparse layers x one index key of
    // 128 x 2 B (bf16, the model's dtype) = 14,592 -> 137,472 B (tp 1).
    const moe::Estimate e = run(m3_scenario("minimax-m3", kDecode1M));
    CHECK(e.memory.kv_bytes_per_token == doctest::Approx(137472.0));
    // tp 8: 4 KV heads are replicated to 1 per GPU (60 x 2 x 128 x 2 = 30,720); index_k is one head, on every GPU
    // (14,592): 45,312 B.
    const moe::Estimate t8 = run(R"({"model":"minimax-m3","hardware":"b200","parallel":{"tp":8},
        "workload":{"phase":"decode","batch":8,"context_len":65536}})");
    CHECK(t8.memory.kv_bytes_per_token == doctest::Approx(45312.0));
}

TEST_CASE("MiniMax-M3 decode at 1M tokens: the indexer reads every index key, attention the top 2048") {
    const moe::Estimate e = run(m3_scenario("minimax-m3", kDecode1M));
    const char* sparse = "MoE layers (block-sparse)";
    // qkv_proj also yields index_q (4 heads x 128) and index_k (128): N = (64 + 2 x 4) x 128 + 5 x 128 = 9,856;
    // FLOPs 2 x 1 x 6144 x 9856 = 121,110,528.
    const moe::OpRecord* qkv = find_op(e, "attn.qkv_proj", moe::Phase::decode, sparse);
    REQUIRE(qkv != nullptr);
    CHECK(qkv->count == 57);
    CHECK(qkv->flops == doctest::Approx(121110528.0));
    // Indexer: 2 x 4 heads x 128 x 1,048,576 keys = 1,073,741,824 FLOPs; bytes: the index keys 1,048,576 x 256 B =
    // 268,435,456, an FP32 score per head and block written and read 2 x 4 x 8,192 x 4 = 262,144, the index query
    // 4 x 128 x 2 = 1,024: 268,698,624.
    const moe::OpRecord* idx = find_op(e, "attn.indexer", moe::Phase::decode, sparse);
    REQUIRE(idx != nullptr);
    CHECK(idx->flops == doctest::Approx(1073741824.0));
    CHECK(idx->activation_bytes == doctest::Approx(268698624.0));
    // Attention over min(1,048,576, 16 x 128) = 2,048 keys: 4 x 64 heads x 128 x 2048 = 67,108,864 FLOPs; the selected
    // K and V 2048 x 2 x 4 x 128 x 2 B = 4,194,304 + the query and output 64 x 128 x 4 = 32,768: 4,227,072 B.
    const moe::OpRecord* core = find_op(e, "attn.core", moe::Phase::decode, sparse);
    REQUIRE(core != nullptr);
    CHECK(core->flops == doctest::Approx(67108864.0));
    CHECK(core->activation_bytes == doctest::Approx(4227072.0));
    // The first three layers attend to every key: 4 x 64 x 128 x 1,048,576 = 34,359,738,368 FLOPs, 2 GiB of KV read;
    // they have no indexer.
    const moe::OpRecord* full = find_op(e, "attn.core", moe::Phase::decode, "dense layers");
    REQUIRE(full != nullptr);
    CHECK(full->count == 3);
    CHECK(full->flops == doctest::Approx(34359738368.0));
    CHECK(find_op(e, "attn.indexer", moe::Phase::decode, "dense layers") == nullptr);
    // A sparse layer's attention side reads ~1/8 of what a full one does (272.9 MB against 2,147.5 MB).
    CHECK(idx->time_us + core->time_us < full->time_us / 5);
}

TEST_CASE("MiniMax-M3 prefill of an 8192-token prompt, worked by hand") {
    const moe::Estimate e = run(m3_scenario("minimax-m3", R"({"phase":"prefill","prefill_tokens":8192,"prompt_len":8192})"));
    const char* sparse = "MoE layers (block-sparse)";
    // A causal query at position p attends to min(p, 2048) keys: averaged over 8192 positions 2048 - 2048^2 / (2 x
    // 8192) = 1,792. FLOPs 4 x 8192 x 64 x 128 x 1792 = 481,036,337,152. (NeMo AutoModel's count of the selected
    // pairs, which takes the query's own block as partial, gives 14,290,944 / 8192 = 1,744.5 keys: the cap of
    // top-k x block keys overstates it by 2.7% here, by at most (block - 1) / 2 keys per query.)
    const moe::OpRecord* core = find_op(e, "attn.core", moe::Phase::prefill, sparse);
    REQUIRE(core != nullptr);
    CHECK(core->flops == doctest::Approx(481036337152.0));
    // Indexer: every query scores its p causal keys, 4,096 on average: 2 x 8192 x 4 x 128 x 4096 = 34,359,738,368
    // FLOPs; bytes: the index keys 8192 x 256 = 2,097,152, the block scores 2 x 8192 x 4 x 32 x 4 = 8,388,608, the
    // index queries 8192 x 4 x 128 x 2 = 8,388,608: 18,874,368.
    const moe::OpRecord* idx = find_op(e, "attn.indexer", moe::Phase::prefill, sparse);
    REQUIRE(idx != nullptr);
    CHECK(idx->flops == doctest::Approx(34359738368.0));
    CHECK(idx->activation_bytes == doctest::Approx(18874368.0));
    // A full-attention layer: 4 x 8192 x 64 x 128 x 4096 = 1,099,511,627,776.
    const moe::OpRecord* full = find_op(e, "attn.core", moe::Phase::prefill, "dense layers");
    REQUIRE(full != nullptr);
    CHECK(full->flops == doctest::Approx(1099511627776.0));
}

TEST_CASE("MiniMax-M3 against MiniMax-M2.5 at 1M tokens: the card's 9x prefill and 15x decode") {
    // The card: "M3 delivers 9x prefill and 15x decode speedups compared to M2 at 1M context". The model's attention
    // side (attn.core + attn.indexer over all layers), same GPU and parallelism, M2.5 (62 layers of GQA with 8 KV
    // heads) against M3: decode of one sequence at 1,048,576 tokens, and the last 16,384-token chunk of a
    // 1,048,576-token prompt. Nothing here was fitted to these ratios (14.2x and 8.9x today).
    const moe::Estimate m2d = run(m3_scenario("minimax-m2.5", kDecode1M));
    const moe::Estimate m3d = run(m3_scenario("minimax-m3", kDecode1M));
    const double decode = attention_us(m2d, moe::Phase::decode) / attention_us(m3d, moe::Phase::decode);
    const char* chunk = R"({"phase":"prefill","prefill_tokens":16384,"prompt_len":1048576})";
    const moe::Estimate m2p = run(m3_scenario("minimax-m2.5", chunk));
    const moe::Estimate m3p = run(m3_scenario("minimax-m3", chunk));
    const double prefill = attention_us(m2p, moe::Phase::prefill) / attention_us(m3p, moe::Phase::prefill);
    INFO("decode ", decode, "x, prefill ", prefill, "x");
    CHECK(decode == doctest::Approx(15.0).epsilon(0.15));
    CHECK(prefill == doctest::Approx(9.0).epsilon(0.15));
}

TEST_CASE("sparse_attention_config: the small case, use_sparse_attention false, and the refusals naming their key") {
    moe::Issues errs;
    ModelSpec m = parse_config(tiny_m3(), errs);
    REQUIRE(errs.empty());
    CHECK(m.n_sparse_layers == 3);
    CHECK_FALSE(m.layers[0].sparse);
    CHECK(m.layers[1].sparse);
    CHECK(m.layer_kinds.size() == 2);  // dense + full, MoE + sparse
    // Indexer per sparse layer: 1024 x 4 x 64 + 1024 x 64 + 2 x 64 = 327,808 parameters; switched off, they go.
    json off = tiny_m3();
    off["sparse_attention_config"]["use_sparse_attention"] = false;
    const ModelSpec f = parse_config(off, errs);
    REQUIRE(errs.empty());
    CHECK(f.n_sparse_layers == 0);
    CHECK_FALSE(f.block_sparse());
    CHECK(m.total_params - f.total_params == doctest::Approx(3 * 327808.0));

    json j = tiny_m3();
    j["sparse_attention_config"]["sparse_attention_freq"] = {0, 1, 1};
    parse_config(j, errs);
    CHECK(has_error(errs, "model.sparse_attention_config.sparse_attention_freq"));
    j = tiny_m3();
    j["sparse_attention_config"]["sparse_attention_freq"] = {0, 1, 2, 1};
    parse_config(j, errs);
    CHECK(has_error(errs, "model.sparse_attention_config.sparse_attention_freq[2]"));
    j = tiny_m3();
    j["sparse_attention_config"]["sparse_topk_blocks"] = 1;
    j["sparse_attention_config"]["sparse_init_block"] = 1;
    parse_config(j, errs);
    CHECK(has_error(errs, "model.sparse_attention_config.sparse_topk_blocks"));
    j = tiny_m3();
    j["sparse_attention_config"]["sparse_disable_index_value"] = {0, 1, 0, 1};
    parse_config(j, errs);
    REQUIRE(has_error(errs, "model.sparse_attention_config.sparse_disable_index_value[2]"));
    CHECK(errs[0].message.find("not modelled") != std::string::npos);
    j = tiny_m3();
    j["sparse_attention_config"].erase("sparse_index_dim");
    parse_config(j, errs);
    CHECK(has_error(errs, "model.sparse_attention_config.sparse_index_dim"));
    j = tiny_m3();
    j["sparse_attention_config"] = 3;
    parse_config(j, errs);
    CHECK(has_error(errs, "model.sparse_attention_config"));
}
