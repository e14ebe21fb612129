// codec.h — the URL fragment codec shared by the page and `moe-roofline url`.
//
//   std::string frag = moe::encode_fragment(scenario);          // "s=<base64url of compact JSON>"
//   moe::ParseResult r = moe::decode_fragment(frag, catalog);   // accepts "#s=...", "s=..." or ""
//   std::string url = moe::scenario_url(scenario, "http://127.0.0.1:8080/");
#pragma once
#include <string>
#include <string_view>

#include "core/scenario/scenario.h"

namespace moe {

std::string base64url_encode(std::string_view bytes);
bool base64url_decode(std::string_view text, std::string& out);

std::string encode_fragment(const Scenario& s);
// Bad, hostile or truncated fragments give errors (and the default scenario), never a crash.
ParseResult decode_fragment(std::string_view fragment, const Catalog& catalog);
std::string scenario_url(const Scenario& s, std::string_view base);

}  // namespace moe
