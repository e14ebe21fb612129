// kv_tiers.h — multi-turn sessions, request traces and the KV cache's tiers in the serving simulation (issue 29;
// docs/serving.md, "Sessions and KV tiers").
//
// Room: core/serving/. The simulation (simulate.cpp) asks three things of it, per rank that holds a prefix cache (an
// aggregated attention-DP rank, or a disaggregated prefill rank):
//
//   SessionLengths len(s, clients);   int isl = len.prompt(j, u, osl);   // request j's prompt: system + history + user
//   KvTiers tiers(s, kv_bytes_per_token);
//   ready = tiers.arrive(key, isl, prefix_len, now, gpu_room, pf_left);  // its prefix found: pf_left shrinks, ready =
//                                                                        // after a reload
//   tiers.finish(key, tokens, prefix_len, now, gpu_room);                // `tokens` of the key's KV stay cached
//
// A key names what requests share: a session (workload.sessions) or a trace's prefix id
// (workload.trace). The cache: the system prompt, shared by every session, stays in HBM. A key's KV is one entry. When
// a request is done its entry goes to HBM; HBM keeps idle entries in what the running requests leave free (gpu_room,
// KV tokens); past that the least recently used entry moves down to host memory, then to SSD, then is dropped (one LRU
// stack over the tiers, as SGLang's HiCache and LMCache demote). A request finds its key's entry in one tier: HBM is
// a hit as is; host and SSD are read back over their link (one transfer at a time per link, at the tier's bandwidth,
// before the prompt's prefill can start); the prefill computes the rest (at least the last token). A session's entry
// (or a trace prefix without prefix_len: a conversation's history) belongs to the request that found it until that one
// is done; a trace prefix with prefix_len is shared: it stays cached (back in HBM after a reload) for every request
// that names it.
#pragma once
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/scenario/scenario.h"
#include "core/serving/surface.h"

namespace moe {

// Request lengths of sessions: client c's requests are c, c + clients, ... in turn order; a session is `turns` of
// them. prompt() must be called for j in increasing order (it carries each client's history).
class SessionLengths {
public:
    SessionLengths(const Scenario& s, int clients);
    // request j's prompt, its user tokens drawn at u in [0, 1) (serving.length_spread), its answer `osl` tokens
    int prompt(std::size_t j, double u, int osl);

private:
    const SessionsConfig& cfg_;
    double spread_;
    int clients_;
    std::vector<double> history_;  // per client: the current session's tokens beyond the system prompt
};

// Tokens (and bytes) per tier, for the outputs.
struct KvTierStats {
    KvTierStats& operator+=(const KvTierStats& o) {
        prompt_tokens += o.prompt_tokens, hit_gpu += o.hit_gpu, hit_host += o.hit_host, hit_ssd += o.hit_ssd;
        moved_tokens += o.moved_tokens, reload_ms += o.reload_ms;
        return *this;
    }
    double prompt_tokens = 0;                       // all prompts looked up
    double hit_gpu = 0, hit_host = 0, hit_ssd = 0;  // prompt tokens found in each tier
    double moved_tokens = 0;                        // KV tokens moved between HBM, host and SSD (reloads + demotions)
    double reload_ms = 0;                           // summed time requests waited for a reload
};

class KvTiers {
public:
    // Off unless the scenario has sessions or a trace and the KV has a size (`kv_bytes_per_token`: one GPU's).
    KvTiers(const Scenario& s, double kv_bytes_per_token);
    bool on() const { return on_; }
    double think_ms() const { return think_ms_; }
    // True the first time request j is asked about (its arrival), false after.
    bool first_look(std::size_t j) {
        if (j >= seen_.size()) seen_.resize(j + 1, 0);
        const bool first = !seen_[j];
        seen_[j] = 1;
        return first;
    }
    // A request (isl prompt tokens, its key: -1 none) reaches the scheduler at `now` with `gpu_room` KV tokens of HBM
    // not held by running requests: sets `pf_left` (tokens to compute) and returns when its prefix is in HBM (now, or
    // after a reload). prefix_len > 0: at most that much is shared, and the entry stays cached for the key's others.
    double arrive(long long key, int isl, int prefix_len, double now, double gpu_room, double& pf_left);
    // KV tokens a finished request leaves cached under its key: prefix_len when given, else its prompt past the system
    // prompt and (with_answer: aggregated, where the answer's KV is on the same GPUs) its answer.
    double kept_tokens(int isl, int osl, int prefix_len, bool with_answer) const;
    // A request is done with its key's KV: `tokens` are cached in HBM, demoting others as needed.
    void finish(long long key, double tokens, double now, double gpu_room);
    const KvTierStats& stats() const { return st_; }
    double bytes_per_token() const { return bytes_per_token_; }

private:
    enum Tier : int { gpu = 0, host = 1, ssd = 2 };
    struct Entry {
        double tokens = 0;
        double last = 0;
        int tier = gpu;
    };
    bool on_ = false;
    double sys_ = 0, think_ms_ = 0, bytes_per_token_ = 0;
    double cap_[3] = {0, 0, 0};   // tokens per tier (HBM: set from gpu_room at each call)
    double bw_GBps_[3] = {0, 0, 0};
    double used_[3] = {0, 0, 0};
    double link_free_[3] = {0, 0, 0};
    bool sys_cached_ = false;
    std::unordered_map<long long, Entry> entries_;
    std::set<std::pair<double, long long>> lru_[3];  // (last use, session) per tier
    KvTierStats st_;
    std::vector<char> seen_;

    // time to move `tokens` of KV over tier's link (a reload, or a write into SSD)
    double link_ms(int tier, double tokens) const { return tokens * bytes_per_token_ / (bw_GBps_[tier] * 1e9) * 1000.0; }
    void remove(long long id, Entry& e);
    void place(long long id, Entry& e, int tier);
    // Each tier down to its capacity at time `now`. A write into SSD takes the SSD's link like a reload does (one
    // drive reads or writes); a write into host memory goes the other way over PCIe / C2C (device to host) from the
    // reloads (host to device) and is not timed.
    void rebalance(double gpu_room, double now);
};

// The tiers' outputs into r: prefix_hit_rate_gpu / _host / _ssd, the KV bytes moved per output token (each of a rank's
// `gpus_per_rank` GPUs moves its share of every token) and the mean wait for a reload, over the ranks whose sums `st`
// holds (aggregated: one rank, which is every rank's; disaggregated: every prefill rank) and the `requests` they
// finished with `out_tokens`. Returns that mean wait (ms).
double kv_tier_outputs(const KvTierStats& st, double bytes_per_token, double gpus_per_rank, double requests, double out_tokens,
                       ServingResult& r);

}  // namespace moe
