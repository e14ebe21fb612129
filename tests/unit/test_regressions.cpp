// Regressions found by the fuzzers (tests/fuzz, issue 8) and the sanitizer build: each input inline, with the
// fuzz target that found it and what broke. These run everywhere the unit tests run (natively, as wasm, under
// ASan + UBSan), so none may throw: the wasm build has exceptions off, where a throw is an abort.
#include "test_helpers.h"

namespace {

using nlohmann::json;

// A message is valid UTF-8 exactly when replacing and ignoring invalid bytes serialise it the same way (nlohmann's
// default, strict, throws instead — which is the bug these tests guard against).
bool valid_utf8(const std::string& s) {
    const json j = s;
    return j.dump(-1, ' ', false, json::error_handler_t::replace) == j.dump(-1, ' ', false, json::error_handler_t::ignore);
}

void check_messages(const moe::Issues& issues) {
    for (const moe::Issue& i : issues) {
        INFO(i.path);
        CHECK(!i.message.empty());
        CHECK(valid_utf8(i.text()));
        CHECK(i.text().size() < 1000);
    }
}

}  // namespace

// fuzz_scenario: `--set precision.kv_cache=<byte 0xff>` (the CLI passes choice and dtype values as plain strings):
// the message quoted the value with json::dump(), which throws on invalid UTF-8 — "internal error" from the CLI,
// an abort in the wasm build. A valid but long non-ASCII value was cut inside a character by substr(0, 40), and the
// CLI's --format json then threw on the message.
TEST_CASE("regression: values with invalid or cut UTF-8 give messages that print and serialise") {
    const moe::Catalog& cat = moe::builtin_catalog();
    const std::string bad = "\xff\xfe<\x01>";
    std::string long_accents;
    for (int i = 0; i < 30; ++i) long_accents += "\xc3\xa9";  // "é" x 30: 60 bytes of valid UTF-8
    for (const std::string& text : {bad, long_accents}) {
        for (const moe::FieldDesc& f : moe::scenario_fields()) {
            moe::Scenario s = moe_test::scenario("{}");
            moe::Issues errs;
            INFO(f.path);
            CHECK(!moe::set_path(s, f.path, json(text), cat, errs));
            REQUIRE(!errs.empty());
            CHECK(errs[0].path.rfind(f.path, 0) == 0);
            check_messages(errs);
        }
        moe::Issues errs;
        moe::Scenario s = moe_test::scenario("{}");
        CHECK(!moe::set_path(s, "hardware", json{{"base", text}}, cat, errs));
        CHECK(!moe::set_path(s, std::string("workload.") + text, 1, cat, errs));
        json model = json::parse(moe::builtin_catalog().models()[0].json.dump());
        model["quantization_config"] = {{"quant_method", text}};
        CHECK(!moe::set_path(s, "model", model, cat, errs));
        check_messages(errs);
        // The CLI's eval --format json prints the errors of exactly such a scenario.
        moe::ParseResult r = moe::scenario_from_json(json{{"precision", {{"kv_cache", text}}}, {"model", text}}, cat);
        CHECK(!r.ok());
        check_messages(r.errors);
        moe::Estimate e;
        e.errors = r.errors;
        CHECK(valid_utf8(moe::estimate_to_json(e).dump(-1, ' ', false, json::error_handler_t::replace)));
    }
}

// fuzz_csv: a table file with a header and no rows was loaded as an empty table, whose lookups then reported a
// measured hit with utilisation 0 (TableHit promises (0, 1]). Input (path line, then the file):
//   bench_data/mla/prefill/h800/128-128-64.csv
//   dtype,seq_len,latency_us,mf4M-M458batch_size_per_gpudden_size,34,744404720,2f163
TEST_CASE("regression: a table file without data rows is an error naming the file") {
    const char* const files[][2] = {
        {"bench_data/mla/prefill/h800/128-128-64.csv", "dtype,seq_len,latency_us,mf4M-M458batch_size_per_gpudden_size,34,744404720,2f163"},
        {"bench_data/mha/prefill/h20/16-1-256.csv", "dtype,seq_len,latency_us,mfu\n"},
        {"bench_data/mha/decode/h800/16-2-128.csv", "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\n\n"},
        {"bench_data/gemm/h800/data.csv", "m,k,n,latency_us,mfu\n"},
        {"bench_data/grouped_gemm/decode/h800/data.csv",
         "num_experts,num_gpus,num_local_experts,topk,hidden_size,intermediate_size,batch_size_per_gpu,up_proj_us,down_proj_us\n"},
    };
    for (const auto& f : files) {
        moe::Tables t;
        moe::Issues errs;
        INFO(f[0]);
        CHECK(!t.load_csv(f[0], f[1], errs));
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].text() == std::string(f[0]) + ": no data rows");
        CHECK(t.table_count() == 0);
        const moe::TableHit h = t.mla_prefill("h800", 128, 128, 64, 4096);
        CHECK(!h.found);
    }
}

// fuzz_scenario, fuzz_csv: keys and file names are user text too. An unknown key with invalid UTF-8 (a JSON object
// built by a front end, e.g. from a --set path) and a table file whose name is not UTF-8 gave messages that do not
// serialise; the file name also became the `table` of every hit, printed in the estimate's JSON.
TEST_CASE("regression: unknown keys, preset ids and file names that are not UTF-8") {
    const moe::Catalog& cat = moe::builtin_catalog();
    const std::string bad = "\"hbm_bandwidth_GBps\":m\xee" "del";
    moe::ParseResult r = moe::scenario_from_json(json{{bad, 1}, {"workload", {{bad, 2}}}}, cat);
    REQUIRE(r.errors.size() == 2);
    check_messages(r.errors);
    moe::Issues errs;
    moe::Scenario s = moe_test::scenario("{}");
    CHECK(!moe::set_path(s, "hardware", json{{"base", "h100-sxm"}, {bad, 1}}, cat, errs));
    check_messages(errs);

    moe::Catalog mine;
    errs.clear();
    CHECK(!mine.add("models", "my\xff" "model", cat.models()[0].json.dump(), errs));
    check_messages(errs);
    CHECK(mine.models().empty());

    moe::Tables t;
    errs.clear();
    CHECK(!t.load_csv("bench_data/mha/decode/h800/16-2-128\x85\x85.csv", "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\n"
                      "bf16,bf16,1,1024,34.75,0.0\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].message == "file name is not valid UTF-8");
    check_messages(errs);
    CHECK(t.table_count() == 0);
}

// fuzz_csv (UBSan): a GEMM shape of 7e20 was converted to int, which is undefined behaviour (float-cast-overflow).
//   bench_data/gemm/h800/data.csv
//   m,k,n,latency_us,mfu
//   128,711111111111111111168,15.841,0.440924
TEST_CASE("regression: table shapes too large for an int are an error naming the line") {
    moe::Tables t;
    moe::Issues errs;
    CHECK(!t.load_csv("bench_data/gemm/h800/data.csv", "m,k,n,latency_us,mfu\n16,7168,1536,16.4,0.1\n128,711111111111111111168,15.841,0.440924\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "bench_data/gemm/h800/data.csv:3");
    errs.clear();
    CHECK(!t.load_csv("bench_data/grouped_gemm/prefill/h20/data.csv",
                      "num_experts,num_gpus,num_local_experts,topk,hidden_size,intermediate_size,seq_len_per_gpu,up_proj_us,down_proj_us\n"
                      "96,1,96,8,2048,1e300,1024,637.06,332.791\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "bench_data/grouped_gemm/prefill/h20/data.csv:2");
    CHECK(t.table_count() == 0);
}

// fuzz_hf_config (UBSan): every size of this config is within its own range, but the attention projection is
// 65536 heads x 65536 = 4.3e9 wide, converted to int for the GEMM table lookup: undefined behaviour.
TEST_CASE("regression: an attention width that no GEMM dimension can hold is an error naming the field") {
    moe::Issues errs;
    moe::parse_hf_config(json::parse(R"({"hidden_size":1048576,"num_hidden_layers":1,"num_attention_heads":65536,
        "head_dim":65536,"vocab_size":1,"intermediate_size":1})"), "model", errs);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].text() == "model.num_attention_heads: 4294967296 attention width (heads x head dim) exceeds 16777216");
    errs.clear();
    moe::parse_hf_config(json::parse(R"({"hidden_size":4096,"num_hidden_layers":1,"num_attention_heads":4096,
        "kv_lora_rank":512,"qk_nope_head_dim":128,"v_head_dim":8192,"vocab_size":1,"intermediate_size":1})"), "model", errs);
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "model.num_attention_heads");
    // The largest real ones are far below: Llama 3.1 405B 128 x 128, DeepSeek-V3 128 x (128 + 128).
    for (const moe::CatalogEntry& m : moe::builtin_catalog().models()) {
        const moe::ModelSpec* spec = moe::builtin_catalog().model(m.id);
        REQUIRE(spec);
        CHECK(double(spec->num_heads) * spec->head_dim < 1e6);
    }
}

// Found under UBSan with an extreme seed of fuzz_scenario: 1024 shared experts of intermediate 2^20 are a dense FFN
// 2^31 wide, whose GEMM dimension was converted to int for the table lookup (undefined behaviour).
TEST_CASE("regression: GEMMs wider than an int look up the widest measured shapes") {
    moe::Scenario s = moe_test::scenario(R"({"model":{"hidden_size":1024,"num_hidden_layers":1,"num_attention_heads":8,
        "vocab_size":1000,"intermediate_size":1048576,"num_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":1048576,
        "n_shared_experts":1024},"hardware":"h800"})");
    moe::Estimate e = moe::estimate(s, moe::builtin_tables());
    REQUIRE(e.ok);
    moe_test::check_all_finite(e);
    const moe::OpRecord* up = moe_test::find_op(e, "moe.shared_up", moe::Phase::decode);
    REQUIRE(up);
    CHECK(up->flops == doctest::Approx(2.0 * 64 * 1024 * 2.0 * 1024 * 1048576));
}

// Found while checking the CLI's limits (moe-roofline --presets-dir with a deeply nested model file crashed with a
// stack overflow): Catalog::add kept a copy of any JSON object, and copying (or printing) JSON recurses once per
// level. A preset is now refused past 64 levels, as a scenario is.
TEST_CASE("regression: a preset nested deeper than 64 levels is refused, not copied") {
    const std::string deep = "{\"hidden_size\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
    moe::Catalog mine;
    moe::Issues errs;
    CHECK(!mine.add("models", "deep", deep, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].text() == "models/deep: nested deeper than 64 levels");
    CHECK(mine.models().empty());
    errs.clear();
    CHECK(mine.add("scenarios", "ok", "{\"a\":" + std::string(60, '[') + std::string(60, ']') + "}", errs));
}

// Issue 8, "every error names the field or file position": text that is not JSON said only "not valid JSON" (the page
// showed that for a broken link). The position comes from nlohmann's own message, without exceptions (wasm has none).
TEST_CASE("text that is not JSON: the error gives the line and column") {
    moe::ParseResult r = moe::parse_scenario("{\n  \"model\": \"deepseek-v3\",\n  \"hardware\": \n}", moe::builtin_catalog());
    REQUIRE(!r.ok());
    CHECK(r.errors.back().text().rfind("not valid JSON: line 4, column 1: syntax error", 0) == 0);
    r = moe::parse_scenario(std::string("{\"a\":\"\xff\x01\"}"), moe::builtin_catalog());  // the last-read text is escaped
    REQUIRE(!r.ok());
    check_messages(r.errors);
    moe::Catalog mine;
    moe::Issues errs;
    CHECK(!mine.add("models", "broken", "{\"hidden_size\": 12,", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].text().rfind("models/broken: not valid JSON: line 1, column 20:", 0) == 0);
    moe::ParseResult link = moe::decode_fragment("#s=" + moe::base64url_encode("{\"model\":"), moe::builtin_catalog());
    REQUIRE(link.errors.size() == 2);
    CHECK(link.errors[1].text().rfind("not valid JSON: line 1, column 10:", 0) == 0);
}

// fuzz_csv (the one-million-run campaign): a GEMM row measured at 1e308 us made the kernel's utilisation ~1e-310, so
// the operator's time (roofline / utilisation) overflowed to infinity and estimate() failed with "the model produced
// a non-finite number". Latencies above 1e9 us (over 16 minutes for one kernel) are now an error naming the line.
//   bench_data/gemm/h800/data.csv
//   m,k,n,latency_us,mfu
//   32,7168,1536,1e308
TEST_CASE("regression: a kernel latency too long to be a measurement is an error naming the line") {
    const char* const files[][2] = {
        {"bench_data/gemm/h800/data.csv", "m,k,n,latency_us,mfu\n16,7168,1536,16.4,0.1\n32,7168,1536,1e308,0.1\n"},
        {"bench_data/grouped_gemm/decode/h800/data.csv",
         "num_experts,num_gpus,num_local_experts,topk,hidden_size,intermediate_size,batch_size_per_gpu,up_proj_us,down_proj_us\n"
         "256,1,256,8,7168,2048,32,1297.0,1e300\n"},
        {"bench_data/mha/decode/h800/16-2-128.csv", "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\nbf16,bf16,1,1024,2e9,0.0\n"},
        {"bench_data/mla/prefill/h800/128-128-64.csv", "dtype,seq_len,latency_us,mfu\nbf16,1024,1e200,0.372\n"},
    };
    for (const auto& f : files) {
        moe::Tables t;
        moe::Issues errs;
        INFO(f[0]);
        CHECK(!t.load_csv(f[0], f[1], errs));
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].path.rfind(f[0], 0) == 0);
        CHECK(errs[0].path.size() > std::string(f[0]).size());  // ":<line>"
        CHECK(t.table_count() == 0);
    }
    // The scenario the fuzzer ran, on the one good row: finite.
    moe::Tables t;
    t.calibration = moe::builtin_tables().calibration;
    moe::Issues errs;
    CHECK(t.load_csv("bench_data/gemm/h800/data.csv", "m,k,n,latency_us,mfu\n16,7168,1536,16.4,0.1\n32,7168,1536,1e9,0.1\n", errs));
    moe::Estimate e = moe::estimate(moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32},"workload":{"batch":17}})"), t);
    CHECK(e.ok);
    moe_test::check_all_finite(e);
}

// scripts/test.sh's fuzz_csv (20 s, seed 20261126, two targets at once): a grouped-GEMM prefill row of 1e88 tokens
// per GPU was accepted (only the shape columns were bounded) and the lookup's expected-tiles sum over the token count's
// deviations ran for hours. Token and GPU counts above 1e9 are now an error naming the line
// (tests/fuzz/corpus/csv/regress-grouped-tokens-1e88).
TEST_CASE("regression: a grouped-GEMM row of more than 1e9 tokens or GPUs is an error naming the line") {
    const std::string head =
        "num_experts,num_gpus,num_local_experts,topk,hidden_size,intermediate_size,seq_len_per_gpu,tokens_per_expert,"
        "up_proj_us,up_mfu,down_proj_us,down_mfu\n96,1,96,8,2048,1560,4096,341,1938,0.772,1029.000,0.7\n";
    for (const char* row : {"96,1,96,8,2048,1560,1024e85,637.06,0.618,332.791,0.545\n",
                            "96,2e9,96,8,2048,1560,1024,637.06,0.618,332.791,0.545\n",
                            "96,1,2e9,8,2048,1560,1024,637.06,0.618,332.791,0.545\n"}) {
        moe::Tables t;
        moe::Issues errs;
        INFO(row);
        CHECK(!t.load_csv("bench_data/grouped_gemm/prefill/h20/data.csv", head + row, errs));
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].path == "bench_data/grouped_gemm/prefill/h20/data.csv:3");
        CHECK(t.table_count() == 0);
    }
}

// Issue 27 (hostile inputs): a number a double cannot hold (1e999) is not a JSON syntax error to nlohmann but an
// out_of_range exception (406), which the CLI reported as "internal error" (exit 1) and the core as an unlocated
// "not valid JSON". parse_json_text, the one parser of every input path, names the line, the column and the field.
TEST_CASE("regression: a number beyond a double names its line, column and field, on every core path") {
    nlohmann::json j;
    moe::JsonTextError err;
    CHECK(!moe::parse_json_text(R"({"workload":{"batch":1e999}})", j, err));
    CHECK(err.number_out_of_range);
    CHECK(err.field == "workload.batch");
    CHECK(err.line == 1);
    CHECK(err.column == 22);
    CHECK(err.message.rfind("line 1, column 22: workload.batch: 1e999 is out of range", 0) == 0);
    CHECK(!moe::parse_json_text("{\n  \"batch\": [1, 2,\n   -1e400]\n}", j, err, "space"));
    CHECK(err.field == "space.batch[2]");
    CHECK(err.line == 3);
    CHECK(err.column == 4);
    CHECK(!moe::parse_json_text("1e999", j, err));
    CHECK(err.field.empty());
    CHECK(err.message == "line 1, column 1: 1e999 is out of range: a number is at most 1.8e308 in magnitude");
    CHECK(moe::parse_json_text(R"({"a":1e308,"b":1e-999})", j, err));  // the largest double and an underflow to 0 parse
    // A long key and a long number are cut in the message.
    CHECK(!moe::parse_json_text("{\"" + std::string(5000, 'k') + "\":" + std::string(4000, '9') + "}", j, err));
    CHECK(err.message.size() < 300);
    CHECK(err.message.find("...") != std::string::npos);

    moe::ParseResult r = moe::parse_scenario(R"({"model":"deepseek-v3","workload":{"batch":1e999}})", moe::builtin_catalog());
    REQUIRE(!r.ok());
    CHECK(r.errors.back().text().rfind("line 1, column 44: workload.batch: 1e999 is out of range", 0) == 0);
    moe::Catalog mine;
    moe::Issues errs;
    CHECK(!mine.add("models", "huge", R"({"hidden_size": 1e999, "num_hidden_layers": 2})", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].text().rfind("models/huge: line 1, column 17: hidden_size: 1e999 is out of range", 0) == 0);
    moe::ParseResult link = moe::decode_fragment("#s=" + moe::base64url_encode(R"({"parallel":{"ep":1e999}})"), moe::builtin_catalog());
    REQUIRE(!link.ok());
    CHECK(link.errors.back().text().find("parallel.ep: 1e999 is out of range") != std::string::npos);
    check_messages(link.errors);
}
