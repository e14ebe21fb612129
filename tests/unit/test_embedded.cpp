// The embedded files (core/base/embedded.h) are the repository's files: the bench_data tables, stored one column a
// line (cmake/embed.cmake), come back in rows byte for byte, and the presets, stored without line breaks, are the
// same JSON. Natively the files on disk are the reference; under node the stored form is checked against the rows.
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/embedded.h"
#include "test_helpers.h"

namespace {
// The stored form of a table from its rows: one line per column (the inverse of what embedded_files() does).
std::string embedded_columns_of(std::string_view rows) {
    std::vector<std::string> cols;
    std::size_t line = 0;
    for (std::size_t p = 0; p < rows.size(); ++line) {
        const std::size_t end = rows.find('\n', p);
        REQUIRE(end != std::string_view::npos);
        std::size_t c = 0;
        for (std::size_t q = p; q <= end; ++c) {
            std::size_t e = rows.find_first_of(",\n", q);
            if (c >= cols.size()) {
                REQUIRE(line == 0);  // every row has the first row's count of cells
                cols.emplace_back();
            }
            cols[c] += (line ? "," : "") + std::string(rows.substr(q, e - q));
            q = e + 1;
        }
        REQUIRE(c == cols.size());
        p = end + 1;
    }
    std::string out;
    for (const std::string& c : cols) out += c + "\n";
    return out;
}
}  // namespace

TEST_CASE("embedded tables stored by column come back in rows") {
    REQUIRE(moe::embedded_files().size() == moe::kEmbeddedBlobCount);
    std::size_t by_columns = 0;
    for (std::size_t i = 0; i < moe::kEmbeddedBlobCount; ++i) {
        const moe::EmbeddedBlob& b = moe::kEmbeddedBlobs[i];
        const moe::EmbeddedFile& f = moe::embedded_files()[i];
        INFO(b.path);
        CHECK(std::string_view(f.path) == b.path);
        if (!b.by_columns) {
            CHECK(f.data == b.data);
            continue;
        }
        ++by_columns;
        const std::string_view rows(f.data, f.size);
        CHECK(rows.size() == b.size);
        CHECK(embedded_columns_of(rows) == std::string_view(b.data, b.size));
    }
    CHECK(by_columns > 100);  // the tables (bench_data/**/*.csv, the few with CRLF line ends stay as they are)
}

#ifdef MOE_SOURCE_DIR
TEST_CASE("embedded files are the repository's files") {
    for (const moe::EmbeddedFile& f : moe::embedded_files()) {
        INFO(f.path);
        std::ifstream in(std::string(MOE_SOURCE_DIR) + "/" + f.path, std::ios::binary);
        REQUIRE(in);
        std::ostringstream disk;
        disk << in.rdbuf();
        const std::string text(f.data, f.size);
        const std::string_view path(f.path);
        if (path.size() > 5 && path.substr(path.size() - 5) == ".json") {
            const nlohmann::json a = nlohmann::json::parse(text, nullptr, false), b = nlohmann::json::parse(disk.str(), nullptr, false);
            CHECK_FALSE(a.is_discarded());
            CHECK(a == b);
        } else {
            CHECK(text == disk.str());
        }
    }
}
#endif
