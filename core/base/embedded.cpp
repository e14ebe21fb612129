// embedded.cpp — the embedded files as they are on disk (see embedded.h): the tables stored by column put back in rows.
#include "core/base/embedded.h"

#include <memory>
#include <string>
#include <string_view>

namespace moe {
namespace {
// "a,b\n1,2\n" from its columns "a,1\nb,2\n": row r is the r-th cell of every column, joined by commas.
std::string rows_of(std::string_view columns) {
    std::vector<std::size_t> next;  // where each column's next cell starts
    for (std::size_t p = 0; p < columns.size();) {
        next.push_back(p);
        const std::size_t end = columns.find('\n', p);
        p = end == std::string_view::npos ? columns.size() : end + 1;
    }
    std::string out;
    out.reserve(columns.size());
    while (!next.empty() && next[0] < columns.size()) {
        for (std::size_t c = 0; c < next.size(); ++c) {
            std::size_t end = columns.find_first_of(",\n", next[c]);
            if (end == std::string_view::npos) end = columns.size();
            out.append(columns.substr(next[c], end - next[c]));
            out.push_back(c + 1 < next.size() ? ',' : '\n');
            next[c] = end < columns.size() && columns[end] == ',' ? end + 1 : columns.size();  // its last cell: the last row
        }
    }
    return out;
}
}  // namespace

const std::vector<EmbeddedFile>& embedded_files() {
    struct Files {
        std::vector<std::unique_ptr<std::string>> texts;  // the tables in rows (stable addresses)
        std::vector<EmbeddedFile> files;
    };
    static const Files all = [] {
        Files f;
        f.files.reserve(kEmbeddedBlobCount);
        for (std::size_t i = 0; i < kEmbeddedBlobCount; ++i) {
            const EmbeddedBlob& b = kEmbeddedBlobs[i];
            if (!b.by_columns) {
                f.files.push_back({b.path, b.data, b.size});
                continue;
            }
            f.texts.push_back(std::make_unique<std::string>(rows_of(std::string_view(b.data, b.size))));
            f.files.push_back({b.path, f.texts.back()->data(), f.texts.back()->size()});
        }
        return f;
    }();
    return all.files;
}

}  // namespace moe
