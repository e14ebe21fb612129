// embedded.h — files compiled into the binary by cmake/embed.cmake (presets/**, bench_data/**).
// Paths are relative to the repository root: "presets/models/deepseek-v3.json", "bench_data/gemm/h800/data.csv".
#pragma once
#include <cstddef>

namespace moe {
struct EmbeddedFile {
    const char* path;
    const char* data;
    std::size_t size;
};
extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;
}  // namespace moe
