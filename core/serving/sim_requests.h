// sim_requests.h — the serving simulation's requests, clients and sums (simulate.cpp's first section; internal to
// core/serving/). Frontend: the engine's tokeniser queue; Req: one request's state; Workload: the benchmark's requests
// (lengths, sessions, a trace); Sums: what the finished requests add up to. Only simulate.cpp includes it (its types
// are internal to that file: an unnamed namespace).
#pragma once
#include <algorithm>
#include <cmath>
#include <queue>
#include <vector>

#include "core/serving/kv_tiers.h"
#include "core/serving/simulate.h"

namespace moe {
namespace {

// The engine's frontend: one process (vLLM's API server, SGLang's tokenizer manager, TRT-LLM's serve frontend)
// tokenises the requests one after the other, so a burst of sends reaches the scheduler spread by each request's
// tokenisation (request_overhead_per_ktoken_ms x its prompt); the rest of the overhead is per-request latency that
// overlaps. Sends come in time order, so the frontend is a single FIFO server.
struct Frontend {
    double free_at = 0;
    // when a request sent at `send` reaches the scheduler
    double arrive(const EngineConstants& k, double send, double isl, double clients) {
        const double serial = k.request_overhead_per_ktoken_ms * isl / 1000.0;
        const double start = std::max(send + k.request_overhead_ms + k.request_overhead_per_client_ms * clients, free_at);
        free_at = start + serial;
        return free_at;
    }
};

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] requests and clients
// ---------------------------------------------------------------------------------------------------------------

struct Req {
    int client = 0;
    int isl = 1, osl = 1;     // prompt and output tokens
    double pf_left = 0;       // prompt tokens still to compute (the prefix cache's hit is read, not computed)
    int out_left = 0;         // output tokens left after the first
    long long key = -1;       // what it shares KV with (a session, a trace's prefix id; kv_tiers.h); -1: nothing
    int prefix_len = 0;       // a trace's shared prefix tokens (0: the key's whole entry)

    double send = 0, arrive = 0, pf_start = -1, first = -1, ovh = 0;
    double ctx = 0;           // its context when it started decoding (aggregated: grows by one per step since g_start)
    double held = 0;          // aggregated: KV tokens it took at admission
    long long g_start = 0, g_end = 0;  // the decode-step counts at which it started decoding and finishes
    bool admitted = false, running = false, done = false;
};

// The trace requests the first of `stride` attention-DP ranks replays, as a cache-aware router deals them (SGLang's
// router, Dynamo's KV router): every request of a prefix id on the rank the id first went to, ids dealt round-robin
// in order of first appearance (TraceData numbers them so), requests without an id round-robin among themselves.
// f(i) for each, in order.
template <class F>
void for_rank_share(const TraceData& td, int stride, F f) {
    const std::size_t st = std::size_t(std::max(1, stride));
    std::size_t plain = 0;  // requests without an id so far
    for (std::size_t i = 0; i < td.reqs.size(); ++i) {
        const TraceRequest& q = td.reqs[i];
        if (q.prefix >= 0 ? std::size_t(q.prefix) % st == 0 : plain++ % st == 0) f(i);
    }
}

// The benchmark's requests: client c's r-th request is number c + r * clients; lengths drawn from
// [(1 - spread) x, x] by a low-discrepancy sequence (golden and plastic ratios), the same for every run. With a
// trace (workload.trace): its requests in order (with `stride` attention-DP ranks, the first rank's share,
// for_rank_share), each client taking the next one not yet sent when its previous one is done.
struct Workload {
    std::vector<Req> reqs;
    int clients = 1, rounds = 1;
    bool trace = false;
    std::size_t cursor = 0;  // trace: the next request not yet sent
    void make(const Scenario& s, int n_clients, int stride) {
        const ServingConfig& sv = s.serving;
        clients = std::max(1, n_clients);
        trace = sv.trace.on();
        if (trace) {
            const TraceData& td = *sv.trace.data;
            reqs.clear();
            reqs.reserve(td.reqs.size() / std::size_t(std::max(1, stride)) + 1);
            for_rank_share(td, stride, [&](std::size_t i) {
                const TraceRequest& q = td.reqs[i];
                Req r;
                r.isl = q.isl;
                r.osl = q.osl;
                r.key = q.prefix;
                r.prefix_len = q.prefix_len;
                r.pf_left = r.isl - prefix_cached_tokens(r.isl, s.workload.prefix_cache_hit);
                r.out_left = r.osl - 1;
                reqs.push_back(r);
            });
            return;
        }
        rounds = std::max(1, sv.requests_per_client);
        reqs.assign(size_t(clients) * rounds, Req{});
        SessionLengths sessions(s, clients);  // workload.sessions: prompts of system prompt + history + user turn
        const int turns = std::max(1, sv.sessions.turns);
        double u = 0.5, v = 0.5;
        for (size_t j = 0; j < reqs.size(); ++j) {
            Req& r = reqs[j];
            r.client = int(j % clients);
            if (j > 0) {
                u += 0.6180339887498949;
                v += 0.7548776662466927;
                u -= std::floor(u);
                v -= std::floor(v);
            }
            r.osl = std::max(1, int(std::lround(sv.osl * (1.0 - sv.length_spread * v))));
            r.isl = sv.sessions.on() ? sessions.prompt(j, u, r.osl) : std::max(1, int(std::lround(sv.isl * (1.0 - sv.length_spread * u))));
            // a session: client c's requests in groups of `turns`
            if (sv.sessions.on()) r.key = (long long)r.client + (long long)clients * (long long)(j / size_t(clients) / size_t(turns));
            r.pf_left = r.isl - prefix_cached_tokens(r.isl, s.workload.prefix_cache_hit);
            r.out_left = r.osl - 1;
        }
    }
    // the requests the clients send at the start
    std::size_t first_sends() {
        const std::size_t n = std::min(reqs.size(), std::size_t(clients));
        cursor = n;
        return n;
    }
    // the request a client sends after `id` (reqs.size(): none)
    std::size_t next(std::size_t id) {
        if (trace) return cursor < reqs.size() ? cursor++ : reqs.size();
        return std::min(reqs.size(), id + std::size_t(clients));
    }
};

// Sums over the finished requests, and over time, for the means a benchmark reports.
struct Sums {
    double n = 0, ttft = 0, tpot = 0, n_tpot = 0, ovh = 0, queue = 0, own_prefill = 0, kv = 0;
    double out_tokens = 0, makespan = 0;
    double decode_time = 0, decode_steps = 0, batch_time = 0;  // pure decode steps: their time, count, batch x time
    double peak_batch = 0;                                     // the largest batch a rank decoded
    double prefill_time = 0, busy_time = 0;                    // time in forwards that carry prompt tokens; any
    double decoding_time = 0;                                  // time in steps that decode (pure or mixed)
    double mem_blocked = 0;                                    // forwards a waiting prompt could not enter (KV full)
    // a step of dt with b requests decoding on a rank
    void add_batch(double b, double dt) {
        batch_time += b * dt;
        peak_batch = std::max(peak_batch, b);
    }
    void finish(const Req& r, double t) {
        n += 1;
        ttft += r.first - r.send;
        ovh += r.ovh;
        queue += std::max(0.0, r.pf_start - r.arrive);
        own_prefill += std::max(0.0, r.first - r.pf_start);
        if (r.osl > 1) {
            tpot += (t - r.first) / (r.osl - 1);
            n_tpot += 1;
        }
        out_tokens += r.osl;
        makespan = std::max(makespan, t);
    }
};

// Share of the running requests' remaining output an engine without output reservation keeps free when it admits a
// prompt: SGLang's min_new_token_ratio default (python/sglang/srt/server_args.py); vLLM keeps a watermark of blocks.
constexpr double kGrowthReserve = 0.1;

// KV slots a request holds in whole pages of `block` tokens (seed 002 §10's fragmentation, request by request): an
// engine that reserves the output (kv_reserve_output) takes its whole prompt + output rounded up to pages
// (`whole` tokens); else its context `now` plus the half-empty last page a growing context leaves on average.
inline double kv_slots(double now, double whole, double block, bool reserve_output) {
    return reserve_output ? std::ceil(whole / block) * block : now + 0.5 * (block - 1.0);
}

// Decode steps for `tokens` output tokens at `tps` tokens per step (MTP: each step makes 1 + the accepted drafts).
long long steps_for(double tokens, double tps) { return tokens <= 0 ? 0 : (long long)std::ceil(tokens / tps - 1e-9); }

using TimeHeap = std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>;

}  // namespace

}  // namespace moe
