// parallel.h — the CLI's scale-out: --threads N (work spread over cores, output in the one-thread order) and
// --shard K/N (a contiguous K-th of N parts of the rows, so N machines' outputs concatenate to the whole).
//
//   cli::Shard sh = cli::parse_shard("2/4", "--shard");              // UsageError naming the flag when malformed
//   auto [begin, end] = sh.range(total_rows);                        // rows [begin, end) of this shard
//   cli::parallel_chunks(chunks, cli::resolve_threads(n), [&](std::size_t c) { ...chunk c... });
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace cli {

struct Shard {
    std::uint64_t k = 1, n = 1;  // this is part k of n (1-based)
    // Rows [floor((k-1)*total/n), floor(k*total/n)): every row in exactly one shard, in order.
    std::pair<std::uint64_t, std::uint64_t> range(std::uint64_t total) const;
    bool first() const { return k == 1; }
    bool last() const { return k == n; }
};
// "K/N" with 1 <= K <= N <= 1e6; a UsageError naming `flag` otherwise.
Shard parse_shard(const std::string& text, const std::string& flag);

// 0 = every core (std::thread::hardware_concurrency, at least 1).
int resolve_threads(int requested);

// Calls work(c) for every c in [0, chunks), on `threads` threads (the calling thread is one of them), and returns
// when all are done. Chunks are claimed in increasing order. An exception in a worker stops the others from
// claiming more and is rethrown here.
void parallel_chunks(std::size_t chunks, int threads, const std::function<void(std::size_t)>& work);

}  // namespace cli
