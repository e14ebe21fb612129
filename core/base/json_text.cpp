// json_text.cpp — parse_json_text (see json_text.h): the DOM parse, and on failure a SAX pass that knows the path.
#include "core/base/json_text.h"

#include <vector>

#include "core/base/json_util.h"

namespace moe {
using nlohmann::json;
using namespace detail;

namespace {

// Replays the text as events, keeping the path of the value being read, until the parser gives up.
class LocatingSax : public nlohmann::json_sax<json> {
public:
    bool out_of_range = false;
    std::size_t position = 0;  // bytes read when it stopped (just past the offending token)
    std::string token;         // the offending token as read
    std::string what;          // nlohmann's words
    std::string field;         // the path at that point

    explicit LocatingSax(std::string root) : root_(std::move(root)) {}

    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override { return open(true); }
    bool key(string_t& k) override {
        if (!frames_.empty()) frames_.back().key = k, frames_.back().has_key = true;
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t pos, const std::string& last_token, const nlohmann::detail::exception& ex) override {
        out_of_range = ex.id == 406;  // out_of_range.406: "number overflow parsing '1e999'"
        position = pos;
        token = last_token;
        what = ex.what();
        field = path();
        return false;
    }

private:
    struct Frame {
        bool object = false;
        bool has_key = false;
        std::string key;
        std::size_t index = 0;  // arrays: the element being read
    };
    bool open(bool object) {
        if (frames_.size() > 512) return false;  // deeper than any input limit: stop quietly
        frames_.push_back({object, false, {}, 0});
        return true;
    }
    bool close() {
        if (!frames_.empty()) frames_.pop_back();
        return value();
    }
    bool value() {  // one value of the enclosing container is complete
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
        return true;
    }
    std::string path() const {
        std::string p = root_;
        for (const Frame& f : frames_) {
            if (f.object) {
                if (!f.has_key) break;
                if (!p.empty()) p += '.';
                p += shown_text(f.key, 40);
            } else {
                p += '[' + std::to_string(f.index) + ']';
            }
            if (p.size() > 120) return clip_escaped(p, 120);
        }
        return p;
    }

    std::string root_;
    std::vector<Frame> frames_;
};

}  // namespace

bool parse_json_text(std::string_view text, json& out, JsonTextError& error, const std::string& root) {
    out = json::parse(text.begin(), text.end(), nullptr, false);
    if (!out.is_discarded()) return true;
    LocatingSax sax(root);
    json::sax_parse(text.begin(), text.end(), &sax);
    error = JsonTextError();
    error.field = sax.field;
    if (!sax.out_of_range) {
        // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> from "line"
        const std::size_t at = sax.what.find("parse error at ");
        error.message = shown_text(at == std::string::npos ? sax.what : sax.what.substr(at + 15), 160);
        if (error.message.empty()) error.message = "not valid JSON";
        return false;
    }
    // Where the number starts: `position` is just past it.
    const std::size_t end = std::min(sax.position, text.size());
    const std::size_t start = end >= sax.token.size() ? end - sax.token.size() : 0;
    std::size_t line_start = 0;
    int line = 1;
    for (std::size_t i = 0; i < start; ++i)
        if (text[i] == '\n') ++line, line_start = i + 1;
    error.number_out_of_range = true;
    error.line = line;
    error.column = int(start - line_start + 1);
    error.message = "line " + std::to_string(error.line) + ", column " + std::to_string(error.column) + ": " +
                    (error.field.empty() ? "" : error.field + ": ") + shown_text(sax.token, 24) +
                    " is out of range: a number is at most 1.8e308 in magnitude";
    return false;
}

std::string message_text(std::string_view text, std::size_t max) { return shown_text(std::string(text), max); }

}  // namespace moe
