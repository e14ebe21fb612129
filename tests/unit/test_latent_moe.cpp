// LatentMoE (issue 29: Nemotron-3 Super / Ultra, moe_latent_size): parameters counted from the configs against
// NVIDIA's published totals, the latent projections as replicated GEMMs, the routed experts at the latent width, the
// all-to-all carrying latent-width tokens, and the weights in memory.
#include <nlohmann/json.hpp>

#include "test_helpers.h"

using moe::ModelSpec;
using nlohmann::json;

namespace {
using moe_test::preset_model;
json preset_json(const char* id) {
    for (const moe::CatalogEntry& e : moe::builtin_catalog().models())
        if (e.id == id) return e.json;
    FAIL("no preset " << id);
    return {};
}
double stored_bytes(moe::Dtype d) { return moe::dtype_bytes(d) + moe::dtype_scale_bytes_per_elem(d); }
}  // namespace

TEST_CASE("LatentMoE parameters: Nemotron-3 Super and Ultra against NVIDIA's totals") {
    const ModelSpec& super = preset_model("nemotron-3-super-120b-a12b");
    // The config: 88 blocks (40 Mamba-2, 8 attention, 40 MoE), 512 relu2 experts top-22 of width 2688 in a latent of
    // 1024 (hidden 4096), one shared expert of 5376 at hidden width.
    CHECK(super.num_layers == 88);
    CHECK(super.n_mamba_layers == 40);
    CHECK(super.n_attention_layers() == 8);
    CHECK(super.n_moe_layers == 40);
    CHECK(super.moe_latent == 1024);
    CHECK(super.expert_width() == 1024);
    // an expert is up_proj 1024 -> 2688 and down_proj 2688 -> 1024: 5,505,024 parameters (22,020,096 at hidden width)
    CHECK(super.expert_params() == 2.0 * 1024 * 2688);
    CHECK(super.shared_params() == 2.0 * 4096 * 5376);  // the shared expert stays at hidden width
    // fc1_latent_proj 4096 x 1024 and fc2_latent_proj 1024 x 4096 per MoE layer, no bias (mlp_bias false)
    CHECK(super.latent_proj_params() == 2.0 * 4096 * 1024);
    // NVIDIA's Nemotron 3 Super technical report (April 2026; its configuration table as quoted at
    // emergentmind.com/topics/nemotron-3-super): 120.6B total, 12.7B active, figures to 0.1B. We count 120.67B and
    // 12.77B (both embedding matrices, as the total); without the input embedding 12.23B, the name's "A12B" (to 0.5B).
    INFO("super: ", super.total_params / 1e9, "B total, ", super.active_params / 1e9, "B active, ",
         super.active_compute_params / 1e9, "B without the input embedding");
    CHECK(std::fabs(super.total_params - 120.6e9) <= 0.1e9);
    CHECK(std::fabs(super.active_params - 12.7e9) <= 0.1e9);
    CHECK(std::fabs(super.active_compute_params - 12e9) <= 0.5e9);

    const ModelSpec& ultra = preset_model("nemotron-3-ultra-550b-a55b");
    // layers_block_type (no num_hidden_layers): 108 blocks, 48 Mamba-2, 12 attention, 48 MoE; latent 2048 of 8192.
    CHECK(ultra.num_layers == 108);
    CHECK(ultra.n_mamba_layers == 48);
    CHECK(ultra.n_attention_layers() == 12);
    CHECK(ultra.n_moe_layers == 48);
    CHECK(ultra.expert_width() == 2048);
    CHECK(ultra.latent_proj_params() == 2.0 * 8192 * 2048);
    // Its model card (nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16): 550B total, 55B active, to the unit of 5B / 1B.
    // We count 549.31B and, without the input embedding (as Nano's 3.2B is counted), 54.99B.
    INFO("ultra: ", ultra.total_params / 1e9, "B total, ", ultra.active_compute_params / 1e9, "B active w/o input embedding, ",
         (ultra.total_params + ultra.mtp_params) / 1e9, "B with the MTP module");
    CHECK(std::fabs(ultra.total_params - 550e9) <= 5e9);
    CHECK(std::fabs(ultra.active_compute_params - 55e9) <= 0.5e9);
    // The Hub lists the BF16 checkpoint's safetensors at 561B parameters (every tensor, the MTP module's attention +
    // LatentMoE blocks and eh_proj included): we count 560.53B, within the Hub's rounding to 1B.
    CHECK(std::fabs(ultra.total_params + ultra.mtp_params - 561e9) <= 0.5e9);
}

TEST_CASE("LatentMoE step: latent projections as replicated GEMMs, routed experts at the latent width") {
    // Super at dp 8 / ep 8 on B200, decode 64 sequences per rank, no micro-batches (one record per op)
    const std::string sc = R"({"model":"nemotron-3-super-120b-a12b","hardware":"b200","parallel":{"tp":1,"dp":8,"ep":8},
        "runtime":{"a2a_backend":"deepep_low_latency","two_batch_overlap":false},
        "precision":{"dispatch":"fp8","combine":"bf16"},"workload":{"phase":"decode","batch":64,"context_len":4096}})";
    moe::Estimate e = moe_test::run(sc);
    const moe::OpRecord* down = moe_test::find_op(e, "moe.latent_down_proj", moe::Phase::decode);
    const moe::OpRecord* up = moe_test::find_op(e, "moe.latent_up_proj", moe::Phase::decode);
    const moe::OpRecord* routed = moe_test::find_op(e, "moe.routed_experts", moe::Phase::decode);
    const moe::OpRecord* router = moe_test::find_op(e, "moe.router", moe::Phase::decode);
    REQUIRE(down != nullptr);
    REQUIRE(up != nullptr);
    REQUIRE(routed != nullptr);
    REQUIRE(router != nullptr);
    // each projection: the rank's 64 tokens x 4096 x 1024 (replicated, so not divided by any TP), FP8 weights
    CHECK(down->flops == 2.0 * 64 * 4096 * 1024);
    CHECK(up->flops == 2.0 * 64 * 1024 * 4096);
    CHECK(down->weight_bytes == doctest::Approx(4096.0 * 1024 * stored_bytes(moe::Dtype::fp8)));
    // the router reads the hidden state, not the latent: 64 x 4096 x 512
    CHECK(router->flops == 2.0 * 64 * 4096 * 512);
    // routed experts: 64 x 8 tokens x 22 picks / 8 ranks = 1408 pairs, each up + down at 1024 x 2688
    CHECK(routed->flops == doctest::Approx(1408.0 * 2 * 2 * 1024 * 2688).epsilon(1e-12));
}

TEST_CASE("LatentMoE all-to-all: dispatch and combine carry moe_latent_size values per token") {
    // The same Super config with and without moe_latent_size (the latter a standard MoE whose experts read 4096):
    // every EP communication record scales by 1024 / 4096.
    json latent = preset_json("nemotron-3-super-120b-a12b");
    json full = latent;
    full.erase("moe_latent_size");
    auto comm = [](const json& model, const char* backend, const char* name, int tp, int dp) {
        json s = {{"model", model},
                  {"hardware", "b200"},
                  {"parallel", {{"tp", tp}, {"dp", dp}, {"ep", tp * dp}}},
                  {"runtime", {{"a2a_backend", backend}, {"two_batch_overlap", false}}},
                  {"precision", {{"dispatch", "fp8"}, {"combine", "bf16"}, {"weights", "nvfp4"}}},
                  {"workload", {{"phase", "decode"}, {"batch", 64}, {"context_len", 4096}}}};
        moe::Estimate e = moe_test::run(s.dump());
        const moe::OpRecord* op = moe_test::find_op(e, name, moe::Phase::decode);
        REQUIRE_MESSAGE(op != nullptr, name);
        return op->comm_bytes;
    };
    // DeepEP low-latency, by hand: 64 tokens x 22 pairs x 1024 x (1 + 4/128) B (FP8 with a scale per 128) dispatched,
    // x 2 B (BF16) combined; at hidden width 4x that.
    const double d_ll = comm(latent, "deepep_low_latency", "comm.dispatch", 1, 8);
    CHECK(d_ll == doctest::Approx(64.0 * 22 * 1024 * (1.0 + 4.0 / 128)).epsilon(1e-12));
    CHECK(comm(latent, "deepep_low_latency", "comm.combine", 1, 8) == doctest::Approx(64.0 * 22 * 1024 * 2).epsilon(1e-12));
    CHECK(comm(full, "deepep_low_latency", "comm.dispatch", 1, 8) == doctest::Approx(4.0 * d_ll).epsilon(1e-12));
    for (const char* backend : {"deepep_normal", "pplx", "allgather"}) {
        const char* d_name = std::string(backend) == "allgather" ? "comm.allgather" : "comm.dispatch";
        const char* c_name = std::string(backend) == "allgather" ? "comm.reduce_scatter" : "comm.combine";
        INFO(backend);
        CHECK(comm(full, backend, d_name, 1, 8) == doctest::Approx(4.0 * comm(latent, backend, d_name, 1, 8)).epsilon(1e-12));
        CHECK(comm(full, backend, c_name, 1, 8) == doctest::Approx(4.0 * comm(latent, backend, c_name, 1, 8)).epsilon(1e-12));
    }
}

TEST_CASE("LatentMoE memory: experts at the latent width, projections replicated, in the checkpoint's formats") {
    const ModelSpec& super = preset_model("nemotron-3-super-120b-a12b");
    // The FP8 checkpoint (its hf_quant_config.json: quant_algo FP8), ep 8 / tp 2: 64 local experts per MoE layer.
    moe::Estimate e = moe_test::run(R"({"model":"nemotron-3-super-120b-a12b","hardware":"h200","parallel":{"tp":2,"dp":4,"ep":8}})");
    CHECK(e.memory.weights_experts_bytes == doctest::Approx(40.0 * 64 * 2 * 1024 * 2688 * stored_bytes(moe::Dtype::fp8)).epsilon(1e-12));
    // the shared expert split over tp 2, the two latent projections whole on every GPU
    CHECK(e.memory.weights_shared_bytes ==
          doctest::Approx(40.0 * (2 * 4096 * 5376 / 2.0 + 2 * 4096 * 1024) * stored_bytes(moe::Dtype::fp8)).epsilon(1e-12));
    CHECK(super.expert_dtype == moe::Dtype::fp8);
    // The NVFP4 checkpoint's card (nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4): "Minimum GPU Requirement 1x B200".
    // With the experts at the latent width it fits one B200 at 8K context; at hidden width (458B) it would not.
    moe::Estimate one = moe_test::run(R"({"model":"nemotron-3-super-120b-a12b","hardware":"b200","parallel":{"tp":1},
        "precision":{"weights":"nvfp4"},"workload":{"batch":8,"prompt_len":4096,"output_len":4096}})");
    INFO("weights ", one.memory.weights_bytes / 1e9, " GB of ", one.memory.usable_bytes / 1e9, " GB usable");
    CHECK(one.memory.fits);
    json full = preset_json("nemotron-3-super-120b-a12b");
    full.erase("moe_latent_size");
    json s = {{"model", full}, {"hardware", "b200"}, {"parallel", {{"tp", 1}}}, {"precision", {{"weights", "nvfp4"}}},
              {"workload", {{"batch", 8}, {"prompt_len", 4096}, {"output_len", 4096}}}};
    moe::Estimate wide = moe::estimate(moe_test::scenario(s.dump()), moe::builtin_tables());
    CHECK_FALSE(wide.memory.fits);
}

TEST_CASE("LatentMoE config checks name their key") {
    moe::Issues errs;
    json j = preset_json("nemotron-3-super-120b-a12b");
    j["moe_latent_size"] = 0;
    moe::parse_hf_config(j, "model", errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.moe_latent_size");
    // a latent without routed experts
    errs.clear();
    json d = {{"model_type", "nemotron_h"}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"num_key_value_heads", 2},
              {"head_dim", 128}, {"vocab_size", 1000}, {"intermediate_size", 512}, {"hybrid_override_pattern", "M*M-"},
              {"moe_latent_size", 256}};
    moe::parse_hf_config(d, "model", errs);
    REQUIRE(!errs.empty());
    CHECK(errs[0].path == "model.moe_latent_size");
    // Ultra's MTP block list is read as Super's "*E"; another one is refused by name
    errs.clear();
    j = preset_json("nemotron-3-ultra-550b-a55b");
    j["mtp_layers_block_type"] = {"mamba", "moe"};
    moe::parse_hf_config(j, "model", errs);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].message.find("mtp_layers_block_type") == 0);
    CHECK(errs[0].message.find("not modelled") != std::string::npos);
}
