// parallel.cpp — --threads and --shard (see parallel.h).
#include "parallel.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/serving/engine.h"
#include "inputs.h"
#include "values.h"

namespace cli {

std::pair<std::uint64_t, std::uint64_t> Shard::range(std::uint64_t total) const {
    // floor(total * i / n) without overflow: (total / n) * i + floor((total % n) * i / n), both terms small.
    const auto at = [&](std::uint64_t i) { return total / n * i + total % n * i / n; };
    return {at(k - 1), at(k)};
}

Shard parse_shard(const std::string& text, const std::string& flag) {
    const std::size_t slash = text.find('/');
    double k = 0, n = 0;
    if (slash == std::string::npos || !parse_number(text.substr(0, slash), k) || !parse_number(text.substr(slash + 1), n) ||
        k != static_cast<double>(static_cast<std::uint64_t>(k)) || n != static_cast<double>(static_cast<std::uint64_t>(n)) ||
        k < 1 || n < 1 || k > n || n > 1e6)
        throw UsageError(flag + " '" + shown(text, 40) + "': expected K/N with 1 <= K <= N <= 1000000, e.g. " + flag + " 2/4");
    Shard s;
    s.k = static_cast<std::uint64_t>(k);
    s.n = static_cast<std::uint64_t>(n);
    return s;
}

int resolve_threads(int requested) {
    if (requested > 0) return requested;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? int(hw) : 1;
}

void parallel_chunks(std::size_t chunks, int threads, const std::function<void(std::size_t)>& work) {
    if (threads <= 1 || chunks <= 1) {
        for (std::size_t c = 0; c < chunks; ++c) work(c);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto run = [&] {
        for (;;) {
            if (stop.load()) return;
            const std::size_t c = next.fetch_add(1);
            if (c >= chunks) return;
            try {
                work(c);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                stop = true;
            }
        }
    };
    // the workers evaluate with the caller's calibration (moe::use_engines is per thread)
    const moe::EngineSet* engines = moe::engines_in_use();
    std::vector<std::thread> pool;
    const std::size_t extra = std::min<std::size_t>(std::size_t(threads) - 1, chunks - 1);
    for (std::size_t t = 0; t < extra; ++t) pool.emplace_back([&] {
        moe::use_engines(engines);
        run();
    });
    run();
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace cli
