// fuzz_fragment.cpp — libFuzzer target: the page's URL fragment codec (#s=<base64url of compact JSON>).
//
// Input: bytes, used three ways: (1) as a fragment as typed or pasted ("#s=...", "s=...&x=y", garbage);
// (2) as the JSON inside a well-formed link ("s=" + base64url(input)), so the mutator reaches the scenario parser
// through the link; (3) as raw bytes for base64url: decode(encode(bytes)) == bytes. A fragment that decodes must
// re-encode to a link that decodes to the same scenario, and its estimate is checked by fuzz::check_estimate.
// A bad fragment gives errors naming the link and the defaults (the page shows them), never a crash.
#include <cctype>
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

namespace {

void check_decoded(const moe::ParseResult& r, const char* where) {
    fuzz::check_issues(r.errors, where);
    if (!r.ok()) {
        if (r.errors.front().path != "link")
            fuzz::fail(std::string(where) + ": a bad link's first error does not name the link: " + r.errors.front().text());
        // The page then shows the defaults: they must be a valid scenario.
        if (moe::scenario_to_json(r.scenario, true) != nlohmann::json::object())
            fuzz::fail(std::string(where) + ": a bad link does not fall back to the defaults");
        return;
    }
    const std::string again = moe::encode_fragment(r.scenario);
    moe::ParseResult r2 = moe::decode_fragment(again, moe::builtin_catalog());
    if (!r2.ok()) fuzz::fail(std::string(where) + ": a decoded scenario's own link does not decode: " + r2.errors[0].text());
    if (moe::scenario_to_json(r2.scenario, true) != moe::scenario_to_json(r.scenario, true))
        fuzz::fail(std::string(where) + ": link round trip changed the scenario");
    if (moe::encode_fragment(r2.scenario) != again) fuzz::fail(std::string(where) + ": link encoding is not stable");
    moe::Estimate e = moe::evaluate(r.scenario, moe::builtin_tables());
    fuzz::check_estimate(e, where);
    fuzz::check_json(e, r.scenario.workload.batch % 16 == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const moe::Catalog& cat = moe::builtin_catalog();

    check_decoded(moe::decode_fragment(bytes, cat), "fragment as given");

    const std::string encoded = moe::base64url_encode(bytes);
    std::string decoded;
    if (!moe::base64url_decode(encoded, decoded) || decoded != bytes) fuzz::fail("base64url does not round-trip");
    for (char c : encoded)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
            fuzz::fail("base64url_encode wrote a character that is not URL-safe");

    check_decoded(moe::decode_fragment("#s=" + encoded, cat), "JSON inside a link");

    // Decoding arbitrary text never writes more than 3/4 of its length.
    if (moe::base64url_decode(bytes, decoded) && decoded.size() > bytes.size() * 3 / 4 + 1)
        fuzz::fail("base64url_decode wrote more bytes than its input holds");
    return 0;
}
