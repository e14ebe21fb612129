// values_test.cpp — the sweep VALUES grammar (native/values.h): lists, ranges, and every malformed form.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/step/columns.h"
#include "native/values.h"

namespace {

std::vector<std::string> texts(const char* values, bool numeric = true) {
    std::vector<cli::AxisValue> out;
    std::string error;
    REQUIRE_MESSAGE(cli::parse_values(values, numeric, out, error), error);
    std::vector<std::string> t;
    for (const cli::AxisValue& v : out) t.push_back(v.text);
    return t;
}

std::string error_of(const char* values, bool numeric = true) {
    std::vector<cli::AxisValue> out;
    std::string error;
    CHECK_FALSE(cli::parse_values(values, numeric, out, error));
    return error;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("lists keep their order and duplicates") {
    CHECK(texts("1,2,4,8") == V{"1", "2", "4", "8"});
    CHECK(texts("8,1,1") == V{"8", "1", "1"});
    CHECK(texts("0.5,1e3,+2,-3") == V{"0.5", "1000", "2", "-3"});
    CHECK(texts("42") == V{"42"});
}

TEST_CASE("geometric ranges include the stop and multiply exactly") {
    CHECK(texts("1:1024:x2") == V{"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024"});
    CHECK(texts("1:1000:x2").back() == "512");  // stop not reached exactly: last value below it
    CHECK(texts("3:81:x3") == V{"3", "9", "27", "81"});
    CHECK(texts("0.25:1:x2") == V{"0.25", "0.5", "1"});
    CHECK(texts("5:5:x2") == V{"5"});
}

TEST_CASE("arithmetic ranges step from the start without drift") {
    CHECK(texts("1024:8192:+1024") == V{"1024", "2048", "3072", "4096", "5120", "6144", "7168", "8192"});
    CHECK(texts("1:2:+0.1").size() == 11);  // 1.0 ... 2.0 inclusive despite 0.1 not being exact
    CHECK(texts("1:2:+0.1").back() == "2");
    CHECK(texts("0:10:+3") == V{"0", "3", "6", "9"});
    CHECK(texts("-2:2:+2") == V{"-2", "0", "2"});
}

TEST_CASE("items and ranges mix in one list") {
    CHECK(texts("1,2,4:16:x2,100") == V{"1", "2", "4", "8", "16", "100"});
}

TEST_CASE("strings are split at commas and never read as ranges") {
    CHECK(texts("deepseek-v3,kimi-k2", false) == V{"deepseek-v3", "kimi-k2"});
    CHECK(texts("deepep_normal,pplx", false) == V{"deepep_normal", "pplx"});
    CHECK(texts("./a:b.json", false) == V{"./a:b.json"});
}

TEST_CASE("malformed values are errors that name the item") {
    CHECK(error_of("1:0:x2").find("start 1 is above stop 0") != std::string::npos);
    CHECK(error_of("1:10:x1").find("factor 1 must be greater than 1") != std::string::npos);
    CHECK(error_of("1:10:x0.5").find("must be greater than 1") != std::string::npos);
    CHECK(error_of("a:b").find("malformed range 'a:b'") != std::string::npos);
    CHECK(error_of("1:b:+1").find("stop 'b' is not a number") != std::string::npos);
    CHECK(error_of("1:8").find("expected START:STOP:xFACTOR or START:STOP:+STEP") != std::string::npos);
    CHECK(error_of("1:8:2").find("step '2' must be xFACTOR") != std::string::npos);
    CHECK(error_of("1:8:+0").find("step 0 must be greater than 0") != std::string::npos);
    CHECK(error_of("1:8:+-1").find("must be greater than 0") != std::string::npos);
    CHECK(error_of("0:8:x2").find("start above 0") != std::string::npos);
    CHECK(error_of("1:2:3:4").find("malformed range") != std::string::npos);
    CHECK(error_of("abc").find("'abc' is not a number") != std::string::npos);
    CHECK(error_of("1,,2").find("empty value") != std::string::npos);
    CHECK(error_of("1,2,").find("empty value") != std::string::npos);
    CHECK(error_of("").find("no values") != std::string::npos);
    CHECK(error_of("nan").find("not a number") != std::string::npos);
    CHECK(error_of("inf").find("not a number") != std::string::npos);
    CHECK(error_of("1e400").find("not a number") != std::string::npos);
    CHECK(error_of("0x10").find("not a number") != std::string::npos);
    CHECK(error_of(",", false).find("empty value") != std::string::npos);
}

TEST_CASE("runaway ranges are refused, not allocated") {
    CHECK(error_of("1:1e12:+1").find("the limit is") != std::string::npos);
    CHECK(error_of("1e-300:1e300:x1.000001").find("the limit is") != std::string::npos);
}

TEST_CASE("PATH=VALUE splits at the first '='") {
    std::string path, value;
    CHECK(cli::split_assignment("workload.batch=64", path, value));
    CHECK(path == "workload.batch");
    CHECK(value == "64");
    CHECK(cli::split_assignment("model={\"a\":\"b=c\"}", path, value));
    CHECK(value == "{\"a\":\"b=c\"}");
    CHECK_FALSE(cli::split_assignment("workload.batch", path, value));
    CHECK_FALSE(cli::split_assignment("=64", path, value));
    CHECK_FALSE(cli::split_assignment("workload.batch=", path, value));
}

TEST_CASE("axis cells print numbers exactly as the output columns do") {
    for (double v : {0.0, 1.0, 64.0, 1024.0, 0.1, 0.25, 1e-7, 123456789.0, 1e21, 3.0e15, 2.5e-300, -7.5})
        CHECK(cli::number_text(v) == moe::format_number(v));
}

TEST_CASE("append_number matches moe::format_number on a million varied doubles") {
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    auto next = [&state] {  // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 0x2545F4914F6CDD1Dull;
    };
    int mismatches = 0;
    for (int i = 0; i < 1000000 && mismatches < 5; ++i) {
        const std::uint64_t r = next();
        double v = 0;
        switch (i % 4) {
            case 0: std::memcpy(&v, &r, sizeof v); break;                              // any bit pattern
            case 1: v = double(r >> 11) / double(1ull << 53) * 1e4; break;             // ms-like values
            case 2: v = double(r % 100000000000000000ull); break;                      // large integers
            case 3: v = std::ldexp(double(r >> 40), int(r % 200) - 100); break;        // wide exponents
        }
        if (cli::number_text(v) != moe::format_number(v)) {
            ++mismatches;
            MESSAGE("mismatch for ", v, ": ", cli::number_text(v), " vs ", moe::format_number(v));
        }
    }
    CHECK(mismatches == 0);
    for (double v : {-0.0, 0.5, 1e15, 1e15 - 1, 999999999999999.5, 0.0001, 1e-5, 123456.789e10})
        CHECK(cli::number_text(v) == moe::format_number(v));
}
