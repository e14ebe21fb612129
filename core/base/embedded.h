// embedded.h — files compiled into the binary by cmake/embed.cmake (presets/**, bench_data/**).
// Paths are relative to the repository root: "presets/models/deepseek-v3.json", "bench_data/gemm/h800/data.csv".
//
// They are stored in a form that compresses better in the page's wasm (embed.cmake): the presets' JSON without its
// line breaks and indentation (the same JSON), and the bench_data tables one column a line (gzip packs a column of
// similar numbers better than rows: 146 -> 124 KB of the page). embedded_files() gives the tables back in rows, as
// the files are on disk, byte for byte.
#pragma once
#include <cstddef>
#include <vector>

namespace moe {
struct EmbeddedFile {
    const char* path;
    const char* data;
    std::size_t size;
};
// Every embedded file, sorted by path: built on the first call (the tables put back in rows).
const std::vector<EmbeddedFile>& embedded_files();

// The stored form (generated/embedded_data.cpp). by_columns: a table stored one column a line, each line the cells of
// one column from the first row to the last, comma-separated, every column with the same count of cells.
struct EmbeddedBlob {
    const char* path;
    const char* data;
    std::size_t size;
    bool by_columns;
};
extern const EmbeddedBlob kEmbeddedBlobs[];
extern const std::size_t kEmbeddedBlobCount;
}  // namespace moe
