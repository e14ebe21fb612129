#include "core/scenario/codec.h"

namespace moe {

namespace {
const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::size_t kMaxFragmentChars = 256 * 1024;

int decode_char(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-' || c == '+') return 62;
    if (c == '_' || c == '/') return 63;
    return -1;
}
}  // namespace

std::string base64url_encode(std::string_view in) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += kAlphabet[v >> 6 & 63];
        out += kAlphabet[v & 63];
    }
    if (i + 1 == in.size()) {
        unsigned v = (unsigned char)in[i] << 16;
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
    } else if (i + 2 == in.size()) {
        unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
        out += kAlphabet[v >> 18 & 63];
        out += kAlphabet[v >> 12 & 63];
        out += kAlphabet[v >> 6 & 63];
    }
    return out;  // unpadded
}

bool base64url_decode(std::string_view in, std::string& out) {
    out.clear();
    while (!in.empty() && in.back() == '=') in.remove_suffix(1);
    if (in.size() % 4 == 1) return false;
    out.reserve(in.size() * 3 / 4);
    unsigned acc = 0;
    int bits = 0;
    for (char c : in) {
        int v = decode_char(c);
        if (v < 0) return false;
        acc = (acc << 6) | unsigned(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += char((acc >> bits) & 0xFF);
        }
    }
    return true;
}

std::string encode_fragment(const Scenario& s) {
    return "s=" + base64url_encode(scenario_to_json(s, true).dump());
}

ParseResult decode_fragment(std::string_view frag, const Catalog& catalog) {
    auto fail = [&](const std::string& why) {
        ParseResult r = scenario_from_json(nlohmann::json::object(), catalog);
        r.errors.insert(r.errors.begin(), Issue{"link", why});
        return r;
    };
    if (!frag.empty() && frag.front() == '#') frag.remove_prefix(1);
    if (frag.empty()) return scenario_from_json(nlohmann::json::object(), catalog);
    if (frag.size() > kMaxFragmentChars)
        return fail("the link's scenario is longer than 256 KiB (a workload.trace of more than a few thousand requests does "
                    "not fit in a link: evaluate it from a scenario file with the CLI)");
    // Accept "s=..." possibly among other &-separated parameters.
    std::string_view payload;
    bool found = false;
    while (!frag.empty()) {
        std::size_t amp = frag.find('&');
        std::string_view part = frag.substr(0, amp);
        if (part.substr(0, 2) == "s=") {
            payload = part.substr(2);
            found = true;
        }
        if (amp == std::string_view::npos) break;
        frag.remove_prefix(amp + 1);
    }
    if (!found) return fail("the link has no scenario (expected #s=...)");
    std::string text;
    if (!base64url_decode(payload, text)) return fail("the link's scenario is not valid base64url (truncated?)");
    ParseResult r = parse_scenario(text, catalog);
    if (!r.ok()) {
        ParseResult d = scenario_from_json(nlohmann::json::object(), catalog);
        d.errors = r.errors;
        d.errors.insert(d.errors.begin(), Issue{"link", "the link's scenario is invalid"});
        return d;
    }
    return r;
}

std::string scenario_url(const Scenario& s, std::string_view base) {
    std::string b(base);
    auto hash = b.find('#');
    if (hash != std::string::npos) b.resize(hash);
    return b + "#" + encode_fragment(s);
}

}  // namespace moe
