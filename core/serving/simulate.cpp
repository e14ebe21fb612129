// simulate.cpp — the serving benchmark as a discrete-event simulation (simulate.h).
//
// (requests and clients: lengths, overheads, the results' sums: sim_requests.h)
// [SECTION] aggregated: one attention-DP rank's scheduler (separate prefill or mixed batches)
// [SECTION] disaggregated: the prefill pool's ranks, the KV transfer, the decode pool
// [SECTION] simulate()
#include "core/serving/simulate.h"

#include "core/serving/kv_tiers.h"
#include "core/serving/sim_requests.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <vector>

namespace moe {

double request_overhead_ms(const EngineConstants& k, double isl, double clients) {
    return k.request_overhead_ms + k.request_overhead_per_ktoken_ms * isl / 1000.0 + k.request_overhead_per_client_ms * clients;
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] aggregated
// ---------------------------------------------------------------------------------------------------------------

struct Aggregated {
    const Scenario& s;
    const StepSurface& sf;
    const EngineConstants& k;
    Workload w;
    Sums sum;
    double t = 0;
    long long G = 0;                      // decode steps so far (every running request advances one per step)
    TimeHeap arrivals;                    // (arrive, id)
    std::deque<int> waiting;              // arrived, prompt not through (the head may be part-way)
    std::priority_queue<std::pair<long long, int>, std::vector<std::pair<long long, int>>, std::greater<>> ends;
    std::vector<int> running_order;       // admission order (the newest is preempted first)
    double b = 0, ctx_sum = 0, used = 0;  // running requests, their contexts, KV tokens taken (incl. prompts in flight)
    double sum_g_end = 0;                 // sum of the running requests' finishing step counts
    Frontend frontend;
    double last_decode_ms = 0;
    double od = 0, op = 0, clients_total = 0;
    double tps = 1;                       // output tokens per request per decode step (MTP: 1 + the accepted drafts)
    KvTiers tiers;                        // sessions / trace: the prefix found in HBM / host / SSD (kv_tiers.h)

    Aggregated(const Scenario& s_, const StepSurface& sf_, const EngineConstants& k_)
        : s(s_), sf(sf_), k(k_), tiers(s_, sf_.kv_bytes_per_token) {}

    // KV slots a request takes at admission (kv_slots): its context so far, or with kv_reserve_output its whole
    // prompt + output, in whole pages of sf.kv_block_tokens
    double reserve(const Req& r) const {
        const double gen = double(r.osl - 1 - r.out_left);
        return kv_slots(r.isl + gen, double(r.isl + r.osl), sf.kv_block_tokens, k.kv_reserve_output);
    }
    // its context now (decoding): the context it started decoding with plus the steps since
    double ctx_of(const Req& r) const { return r.ctx + double(G - r.g_start) * tps; }
    double held_of(const Req& r) const { return k.kv_reserve_output ? r.held : r.held + double(G - r.g_start) * tps; }
    void send(int id, double when) {
        Req& r = w.reqs[id];
        r.send = when;
        // the frontend (its queue included), then, while other requests decode, the scheduler's poll (it takes new
        // requests in every few forwards: serving.scheduler_recv_interval, ServingConfig::recv_wait_steps) and with
        // an overlap schedule the forward already launched; an idle scheduler takes a request at once
        const double at_scheduler = frontend.arrive(k, when, r.isl, clients_total);
        r.ovh = at_scheduler - when;
        const double wait_steps = b > 0 ? scheduler_wait_steps(s, k) : 0.0;
        r.arrive = at_scheduler + wait_steps * last_decode_ms;
        arrivals.push({r.arrive, id});
    }
    void leave(Req& r) {
        if (r.out_left > 0 && r.g_end >= 0) sum_g_end -= double(r.g_end);
        r.running = false;
        b -= 1;
        ctx_sum -= ctx_of(r);
        used -= held_of(r);
    }
    void finish(int id) {
        Req& r = w.reqs[id];
        leave(r);
        r.done = true;
        sum.finish(r, t);
        if (tiers.on()) tiers.finish(r.key, tiers.kept_tokens(r.isl, r.osl, r.prefix_len, true), t, sf.kv_tokens_per_rank - used);
        const size_t next = w.next(size_t(id));
        // workload.sessions: the next turn is sent after the think time (an event: -(id + 1) in `arrivals`)
        if (next < w.reqs.size() && tiers.think_ms() > 0) arrivals.push({t + tiers.think_ms(), -int(next) - 1});
        else if (next < w.reqs.size()) send(int(next), t);
    }
    // a request whose prompt is through: its first token now (unless it had one before a preemption), then it decodes
    void start_decoding(int id) {
        Req& r = w.reqs[id];
        if (r.first < 0) r.first = t;
        r.ctx = r.isl + double(r.osl - 1 - r.out_left);
        r.g_start = G;
        r.running = true;
        b += 1;
        ctx_sum += r.ctx;
        running_order.push_back(id);
        if (r.out_left <= 0) {
            finish(id);
            return;
        }
        r.g_end = G + steps_for(r.out_left, tps);
        sum_g_end += double(r.g_end);
        ends.push({r.g_end, id});
    }
    void take_arrivals() {
        while (!arrivals.empty() && arrivals.top().first <= t + 1e-9) {
            const auto [at, id] = arrivals.top();
            arrivals.pop();
            if (id < 0) {
                send(-id - 1, at);  // a turn sent after its think time
                continue;
            }
            if (tiers.on() && tiers.first_look(size_t(id))) {
                // sessions / trace: its prefix looked up as it arrives; one read back from host / SSD delays it
                Req& r = w.reqs[size_t(id)];
                const double ready = tiers.arrive(r.key, r.isl, r.prefix_len, at, sf.kv_tokens_per_rank - used, r.pf_left);
                if (ready > at + 1e-9) {
                    r.arrive = ready;
                    arrivals.push({ready, id});
                    continue;
                }
            }
            waiting.push_back(id);
        }
    }
    // Prompt tokens of a forward, up to `budget`, from the waiting queue in order; prompts whose last token is in it
    // go to `done_out`. A prompt enters only when the cache holds it (admission). fill_attn_ms: the attention of the
    // chunks it took, each at its own prefix and length (seed 000 §8.1; PoolSurface::chunk_attn_ms).
    double fill_attn_ms = 0;
    double fill(double budget, std::vector<int>& done_out) {
        double T = 0;
        fill_attn_ms = 0;
        for (auto it = waiting.begin(); it != waiting.end() && T < budget;) {
            Req& r = w.reqs[*it];
            if (!r.admitted) {
                // engines that do not reserve the output keep room for a share of the running requests' remaining
                // tokens (SGLang's new_token_ratio, at its floor 0.1), so an admission cannot be preempted at once
                // (at least the next step of every running request and this one: a prompt admitted into less would be
                // preempted at once, and re-admitted, without a step ever running)
                const double ahead = k.kv_reserve_output ? 0.0
                                                         : std::max(kGrowthReserve * ((sum_g_end - b * double(G)) * tps + r.out_left),
                                                                    (b + 1.0) * tps);
                if (used + reserve(r) + ahead > sf.kv_tokens_per_rank && b + T > 0) {
                    sum.mem_blocked += 1;
                    break;
                }
                r.admitted = true;
                r.held = reserve(r);
                used += r.held;
            }
            if (r.pf_start < 0) r.pf_start = t;
            const double take = std::min(r.pf_left, budget - T);
            // its computed positions so far: a cached or found prefix, earlier chunks (a recomputed context after
            // a preemption starts at 0)
            const double prefix = std::max(0.0, double(r.isl) + double(r.osl - 1 - r.out_left) - r.pf_left);
            fill_attn_ms += sf.agg.chunk_attn_ms(prefix, take);
            T += take;
            r.pf_left -= take;
            if (r.pf_left <= 0) {
                done_out.push_back(*it);
                it = waiting.erase(it);
            } else {
                ++it;
            }
        }
        return T;
    }
    // the newest running request gives its KV back and waits to compute its context again (engines that do not
    // reserve the output: vLLM's and SGLang's recompute preemption)
    void preempt_one() {
        while (!running_order.empty()) {
            const int id = running_order.back();
            running_order.pop_back();
            Req& r = w.reqs[id];
            if (!r.running) continue;
            r.out_left = std::max(1, int(std::lround(double(r.g_end - G) * tps)));
            r.pf_left = ctx_of(r);
            leave(r);
            r.admitted = false;
            r.g_end = -1;  // its entry in `ends` is stale
            waiting.push_front(id);
            return;
        }
    }
    double decode_step_ms(double extra_ms, double batch, double ctx_mean) const {
        return moe::decode_step_ms(k, sf.agg.decode_ms(batch, ctx_mean) + od + extra_ms, batch);
    }
    // pop the requests whose last step has run
    void pop_ends() {
        while (!ends.empty() && ends.top().first <= G) {
            const int id = ends.top().second;
            const long long g = ends.top().first;
            ends.pop();
            Req& r = w.reqs[id];
            if (r.running && r.g_end == g) finish(id);
        }
    }
    // `steps` decode steps: every running request advances a token per step, contexts grow
    void advance_decode(long long steps) {
        G += steps;
        ctx_sum += double(steps) * b * tps;
        if (!k.kv_reserve_output) used += double(steps) * b * tps;
    }

    // closed-loop clients per attention-DP rank
    static int clients_of(const Scenario& s, const StepSurface& sf) {
        return std::max(1, int(std::lround(double(s.serving.concurrency) / std::max(1, sf.dp))));
    }
    void run() {
        const ServingConfig& sv = s.serving;
        const int clients = clients_of(s, sf);
        clients_total = sv.concurrency;
        w.make(s, clients, sf.dp);
        const int layers = s.model.num_layers;
        od = s.runtime.decode_overhead_ms >= 0 ? s.runtime.decode_overhead_ms : decode_step_overhead_ms(k, layers);
        op = s.runtime.prefill_overhead_ms >= 0 ? s.runtime.prefill_overhead_ms : prefill_step_overhead_ms(k, layers);
        last_decode_ms = sf.agg.decode_ms(1, sf.agg.ctx_lo) + od;
        tps = std::max(1.0, sf.tokens_per_step);
        for (size_t c = 0, n = w.first_sends(); c < n; ++c) send(int(c), 0.0);
        const double C = std::max(1.0, sf.chunk_tokens);
        std::vector<int> done;
        long long guard = 0;
        const long long guard_max = 64LL * (long long)w.reqs.size() + 1000000LL;
        while (sum.n < double(w.reqs.size()) && ++guard < guard_max) {
            take_arrivals();
            const double ctx_mean = b > 0 ? ctx_sum / b : sf.agg.ctx_lo;
            done.clear();
            if (!waiting.empty()) {
                if (!k.mixed_batches) {
                    // SGLang: a prefill forward first, decoding paused
                    const double T = fill(C, done);
                    if (T > 0) {
                        const double dt = sf.agg.forward_ms(T, fill_attn_ms) + op;
                        t += dt;
                        sum.prefill_time += dt;
                        sum.busy_time += dt;
                        for (int id : done) start_decoding(id);
                        continue;
                    }
                } else {
                    // vLLM / TRT-LLM: decode tokens first, the rest of the budget to prompts
                    const double T = b < C ? fill(C - b, done) : 0.0;
                    if (T > 0) {
                        // (nothing decoding: a prefill forward alone, without the decode step's overhead)
                        const double mixed = sf.agg.mixed_ms(b, ctx_mean, T, fill_attn_ms);
                        const double dt = b > 0 ? decode_step_ms(mixed - sf.agg.decode_ms(b, ctx_mean) + op, b, ctx_mean) : mixed + op;
                        t += dt;
                        sum.prefill_time += dt;
                        sum.busy_time += dt;
                        sum.add_batch(b, dt);
                        if (b > 0) sum.decoding_time += dt;
                        if (b > 0) advance_decode(1);
                        pop_ends();
                        for (int id : done) start_decoding(id);
                        continue;
                    }
                }
            }
            if (b > 0) {
                // a stretch of pure decode steps up to the next event: a request finishes, one arrives, the KV
                // cache fills (engines that do not reserve the output)
                const double step = decode_step_ms(0, b, ctx_mean);
                long long n = ends.empty() ? 1 : std::max(1LL, ends.top().first - G);
                if (!arrivals.empty()) n = std::min(n, std::max(1LL, (long long)std::ceil((arrivals.top().first - t) / step)));
                if (!k.kv_reserve_output) {
                    const double room = sf.kv_tokens_per_rank - used;
                    if (room < b * tps) {
                        if (b > 1) {
                            preempt_one();
                            continue;
                        }
                    } else {
                        n = std::min(n, std::max(1LL, (long long)std::floor(room / (b * tps))));
                    }
                }
                const double dt = decode_step_ms(0, b, ctx_mean + 0.5 * double(n - 1) * tps) * double(n);
                last_decode_ms = dt / double(n);
                t += dt;
                sum.decode_time += dt;
                sum.decoding_time += dt;
                sum.decode_steps += double(n);
                sum.add_batch(b, dt);
                sum.busy_time += dt;
                advance_decode(n);
                pop_ends();
                continue;
            }
            if (!arrivals.empty()) {
                t = std::max(t, arrivals.top().first);  // idle until the next request arrives
                continue;
            }
            if (!waiting.empty()) {
                // nothing running and the head cannot enter: the cache cannot hold one prompt; take it anyway
                Req& r = w.reqs[waiting.front()];
                r.admitted = true;
                r.held = reserve(r);
                used += r.held;
                continue;
            }
            break;
        }
    }
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] disaggregated
// ---------------------------------------------------------------------------------------------------------------

struct Disaggregated {
    const Scenario& s;
    const StepSurface& sf;
    const EngineConstants& k;
    Workload w;
    Sums sum;
    double kv_ms = 0;

    // sessions / trace: each prefill rank's prefix cache (its HBM beyond a forward, then the host / SSD tiers)
    std::vector<KvTiers> tiers;

    Disaggregated(const Scenario& s_, const StepSurface& sf_, const EngineConstants& k_) : s(s_), sf(sf_), k(k_) {}

    void run() {
        const ServingConfig& sv = s.serving;
        const int layers = s.model.num_layers;
        const double od = s.runtime.decode_overhead_ms >= 0 ? s.runtime.decode_overhead_ms : decode_step_overhead_ms(k, layers);
        const double op = s.runtime.prefill_overhead_ms >= 0 ? s.runtime.prefill_overhead_ms : prefill_step_overhead_ms(k, layers);
        const double ranks_d = double(sv.decode.workers) * std::max(1, sf.dp);
        const double tps = std::max(1.0, sf.tokens_per_step);
        const int ranks_p = std::max(1, sv.prefill.workers * std::max(1, sf.prefill_dp));
        // the decode slots a rank's KV holds: the mean request in whole pages (kv_slots), half-way through its output
        const double per_request = kv_slots(sv.mean_isl() + 0.5 * sv.mean_osl(), sv.mean_isl() + sv.mean_osl(), sf.kv_block_tokens,
                                            k.kv_reserve_output);
        const double cap_rank = std::max(1.0, std::min<double>(sv.decode.batch, std::floor(sf.kv_tokens_per_rank / std::max(1.0, per_request))));
        const double cap = cap_rank * ranks_d;
        const int clients = std::max(1, sv.concurrency);  // closed-loop clients; the decode slots are cap
        w.make(s, clients, 1);
        kv_ms = kv_transfer_ms(k, sf.kv_bytes_per_request, sf.kv_link_GBps, sf.kv_blocks_per_request);
        // With a prefix cache each prefill rank has its own queue and a request goes to the rank that holds its key
        // (cache-aware routing, as SGLang's router and Dynamo's KV router do); without, one queue feeds every rank.
        const KvTiers probe(s, sf.prefill_kv_bytes_per_token);
        const bool cached = probe.on();
        if (cached) tiers.assign(size_t(ranks_p), probe);
        const size_t queues = cached ? size_t(ranks_p) : 1;
        auto queue_of = [&](int id) -> size_t {
            if (!cached) return 0;
            const Req& r = w.reqs[size_t(id)];
            return size_t((r.key >= 0 ? r.key : (long long)id) % ranks_p);
        };
        // events: (time, id) of prompts reaching a prefill queue, and of KV reaching the decode pool
        std::vector<TimeHeap> to_prefill(queues);
        // a prompt's KV reaching the decode worker: `to_decode` holds (prefill end, id): the decode scheduler
        // sees the request at its next step boundary and starts pulling the KV then (TRT-LLM's transceiver, vLLM's
        // NIXL connector, SGLang's transfer queue), `pulling` holds (pull done, id): the request joins the batch at
        // the first step boundary after its KV is in
        TimeHeap to_decode, pulling;
        std::deque<int> dec_queue;
        // The prefill side's units of work: a rank, or with attention DP over an MoE model a worker's dp ranks in
        // lockstep (every rank joins each forward's MoE, idle ones with no tokens: TensorRT-LLM's dummy requests,
        // SGLang's idle batches, vLLM's dummy runs), each rank then taking its own prompts.
        const int width = std::max(1, sf.prefill.lockstep_dp);
        const int units = std::max(1, ranks_p / width);
        std::vector<double> unit_free(size_t(units), 0.0);  // when each unit is next free
        Frontend frontend, decode_frontend;
        auto send = [&](int id, double when) {
            Req& r = w.reqs[id];
            r.send = when;
            // (disagg_serial_requests: the prefill server answers once, without streaming; the decode server's
            // frontend streams every client's tokens, so the per-client share is its own)
            r.arrive = frontend.arrive(k, when, r.isl, k.disagg_serial_requests ? 0 : clients);
            r.ovh = r.arrive - when;
            to_prefill[queue_of(id)].push({r.arrive, id});
        };
        for (size_t c = 0, n = w.first_sends(); c < n; ++c) send(int(c), 0.0);
        const double budget = std::max(1.0, sf.prefill_forward_tokens);
        const int per_forward = std::max(1, sv.prefill.batch);
        const double room = sf.prefill_cache_tokens_per_rank;
        // The prefill side runs ahead on its own: its forwards depend only on the arrivals. It is advanced up to
        // time `until` (every forward that starts before then).
        std::vector<std::pair<int, int>> batch;  // (request, its rank)
        std::vector<double> rank_T(static_cast<size_t>(width), 0.0), rank_attn(static_cast<size_t>(width), 0.0);  // a unit's ranks' tokens, attention
        std::vector<int> rank_n(static_cast<size_t>(width), 0);
        auto run_prefill = [&](double until) {
            for (;;) {
                // the unit that can start first: free, with a prompt in one of its ranks' queues (ties: the one
                // free longest)
                size_t ui = 0;
                double start = INFINITY;
                for (size_t u = 0; u < size_t(units); ++u) {
                    double first = INFINITY;
                    for (size_t q = u * width; q < (u + 1) * width; ++q) {
                        const TimeHeap& h = to_prefill[cached ? q : 0];
                        if (!h.empty()) first = std::min(first, h.top().first);
                    }
                    if (!std::isfinite(first)) continue;
                    const double at = std::max(unit_free[u], first);
                    if (at < start || (at == start && unit_free[u] < unit_free[ui])) start = at, ui = u;
                }
                if (!std::isfinite(start) || start > until) return;  // nothing queued, or not before `until`
                // the unit's ranks take the prompts that have arrived: each rank its own queue's (prefix cache), or
                // from the one queue one prompt at a time to the rank holding the fewest tokens (the engines'
                // attention-DP schedulers balance their ranks), each up to prefill.batch prompts and the budget
                for (size_t q = 0; q < size_t(width); ++q) rank_T[q] = rank_attn[q] = 0, rank_n[q] = 0;
                batch.clear();
                auto take = [&](size_t q, TimeHeap& h) {  // the head of h onto rank q; false: not taken (a reload)
                    const auto [at, id] = h.top();
                    h.pop();
                    Req& r = w.reqs[size_t(id)];
                    const size_t rank = ui * width + q;
                    if (cached && tiers[rank].first_look(size_t(id))) {
                        // its prefix looked up in the rank's cache; a read back from host / SSD delays it
                        const double ready = tiers[rank].arrive(r.key, r.isl, r.prefix_len, at, room, r.pf_left);
                        if (ready > at + 1e-9) {
                            r.arrive = ready;
                            h.push({ready, id});
                            return false;
                        }
                    }
                    rank_T[q] += r.pf_left;
                    rank_attn[q] += sf.prefill.chunk_attn_ms(r.isl - r.pf_left, r.pf_left);
                    ++rank_n[q];
                    batch.push_back({id, int(rank)});
                    return true;
                };
                auto room_on = [&](size_t q) { return rank_n[q] < per_forward && rank_T[q] < budget; };
                if (cached) {
                    for (size_t q = 0; q < size_t(width); ++q) {
                        TimeHeap& h = to_prefill[ui * width + q];
                        while (!h.empty() && h.top().first <= start + 1e-9 && room_on(q)) take(q, h);
                    }
                } else {
                    TimeHeap& h = to_prefill[0];
                    while (!h.empty() && h.top().first <= start + 1e-9) {
                        size_t best = size_t(width);
                        for (size_t q = 0; q < size_t(width); ++q)
                            if (room_on(q) && (best == size_t(width) || rank_T[q] < rank_T[best])) best = q;
                        if (best == size_t(width)) break;
                        take(best, h);
                    }
                }
                if (batch.empty()) {
                    unit_free[ui] = std::max(unit_free[ui], start);  // its prompts wait for a reload
                    continue;
                }
                // the forward waits for its slowest rank's own part (its attention and all-to-all at its tokens) and
                // runs the routed experts over the ranks' tokens together
                const double dt = sf.prefill.lockstep_ms(rank_T.data(), rank_attn.data(), width) + op;
                unit_free[ui] = start + dt;
                sum.prefill_time += dt * width;
                for (const auto& [id, q] : batch) {
                    Req& r = w.reqs[id];
                    r.pf_start = start;
                    // (disagg_serial_requests: the decode server's own request path starts when the prefill answers)
                    double at_decode = start + dt;
                    if (k.disagg_serial_requests) {
                        at_decode = decode_frontend.arrive(k, at_decode, r.isl, clients);
                        r.ovh += at_decode - (start + dt);
                    }
                    to_decode.push({at_decode, id});
                    // the prompt's KV stays in the prefill rank's cache under its key (the answer is made elsewhere)
                    if (cached) tiers[q].finish(r.key, tiers[q].kept_tokens(r.isl, r.osl, r.prefix_len, false), start + dt, room);
                }
            }
        };
        double t = 0, running = 0, ctx_sum = 0;
        std::priority_queue<std::pair<long long, int>, std::vector<std::pair<long long, int>>, std::greater<>> ends;
        std::vector<int> joined;
        // the next KV hand-over event: a prefill's end reaching the decode worker, or a pull done
        auto next_event = [&] {
            return std::min(to_decode.empty() ? INFINITY : to_decode.top().first, pulling.empty() ? INFINITY : pulling.top().first);
        };
        long long G = 0;
        long long guard = 0;
        const long long guard_max = 64LL * (long long)w.reqs.size() + 1000000LL;
        while (sum.n < double(w.reqs.size()) && ++guard < guard_max) {
            run_prefill(t);
            while (!to_decode.empty() && to_decode.top().first <= t + 1e-9) {
                pulling.push({t + kv_ms, to_decode.top().second});
                to_decode.pop();
            }
            while (!pulling.empty() && pulling.top().first <= t + 1e-9) {
                dec_queue.push_back(pulling.top().second);
                pulling.pop();
            }
            // admission at the step boundary. The decode worker streams the request's tokens (Dynamo's
            // disaggregated flow, docs/design_docs/disagg_serving.md: the prefill worker returns only the transfer
            // metadata; TRT-LLM's and SGLang's decode workers send the prefill's token with the first one they
            // make): the first token reaches the client at the end of the first decode step that carries it.
            joined.clear();
            while (!dec_queue.empty() && running < cap) {
                const int id = dec_queue.front();
                dec_queue.pop_front();
                Req& r = w.reqs[id];
                r.first = t;
                r.ctx = r.isl;
                if (r.out_left <= 0) {
                    sum.finish(r, t);
                    const size_t next = w.next(size_t(id));
                    if (next < w.reqs.size()) send(int(next), t);
                    continue;
                }
                joined.push_back(id);
                r.running = true;
                running += 1;
                ctx_sum += r.ctx;
                r.g_start = G;
                r.g_end = G + steps_for(r.out_left, tps);
                ends.push({r.g_end, id});
            }
            if (running <= 0) {
                // idle: until the next KV arrives (running the prefill side up to then)
                // (an idle decode worker polls at once: a pull starts as its request arrives)
                double next = next_event();
                if (!std::isfinite(next)) {
                    run_prefill(INFINITY);
                    next = next_event();
                    if (!std::isfinite(next)) break;
                }
                t = std::max(t, next);
                continue;
            }
            const double b = std::ceil(running / ranks_d);
            const double ctx_mean = ctx_sum / running;
            const double step = decode_step_ms(k, sf.decode.decode_ms(b, ctx_mean) + od, b);
            for (int id : joined) w.reqs[size_t(id)].first = t + step;
            long long n = std::max(1LL, ends.top().first - G);
            run_prefill(t + n * step);
            if (!(running >= cap && dec_queue.empty())) {
                const double next = next_event();
                if (std::isfinite(next)) n = std::min(n, std::max(1LL, (long long)std::ceil((next - t) / step)));
            }
            const double dt = double(n) * decode_step_ms(k, sf.decode.decode_ms(b, ctx_mean + 0.5 * double(n - 1) * tps) + od, b);
            t += dt;
            G += n;
            ctx_sum += double(n) * running * tps;
            sum.decode_time += dt;
            sum.decoding_time += dt;
            sum.decode_steps += double(n);
            sum.add_batch(b, dt);
            while (!ends.empty() && ends.top().first <= G) {
                const int id = ends.top().second;
                ends.pop();
                Req& r = w.reqs[id];
                r.running = false;
                running -= 1;
                ctx_sum -= r.isl + double(r.g_end - r.g_start) * tps;
                sum.finish(r, t);
                const size_t next = w.next(size_t(id));
                if (next < w.reqs.size()) send(int(next), t);
            }
        }
    }
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] simulate()
// ---------------------------------------------------------------------------------------------------------------

double simulated_requests(const Scenario& s) {
    const ServingConfig& sv = s.serving;
    if (sv.trace.on()) {
        // every request (disaggregated), or the first attention-DP rank's share (aggregated, for_rank_share)
        if (sv.mode == ServingMode::disaggregated) return double(sv.trace.size());
        double n = 0;
        for_rank_share(*sv.trace.data, s.parallel.dp, [&](std::size_t) { n += 1; });
        return n;
    }
    const double rounds = std::max(1, sv.requests_per_client);
    if (sv.mode == ServingMode::disaggregated)
        return rounds * std::max(1.0, double(sv.concurrency));
    return rounds * std::max(1.0, std::round(double(sv.concurrency) / std::max(1, s.parallel.dp)));
}

ServingResult simulate(const Scenario& s, const StepSurface& sf, const EngineConstants& k) {
    ServingResult r;
    if (!sf.ok) return r;
    r.computed = true;
    r.gpus = sf.gpus;
    r.fits = sf.weights_fit && sf.kv_tokens_per_rank >= 1;
    Sums sum;
    // the ranks the run's sums stand for: the disaggregated run holds every client and rank of the deployment; the
    // aggregated one simulates one attention-DP rank, the others alike
    double ranks = 1;
    if (s.serving.mode == ServingMode::disaggregated) {
        Disaggregated d(s, sf, k);
        d.run();
        sum = d.sum;
        r.kv_transfer_ms = d.kv_ms;
        if (!d.tiers.empty()) {
            KvTierStats st;
            for (const KvTiers& t : d.tiers) st += t.stats();
            r.kv_transfer_ms += kv_tier_outputs(st, d.tiers.front().bytes_per_token(),
                                                double(sf.prefill_gpus_per_worker) / std::max(1, sf.prefill_dp), sum.n, sum.out_tokens, r);
        }
        r.prefill_fits = sf.prefill_fits;
        const double prefill_ranks = double(s.serving.prefill.workers) * std::max(1, sf.prefill_dp);
        r.prefill_utilisation = sum.makespan > 0 ? std::min(1.0, sum.prefill_time / (prefill_ranks * sum.makespan)) : 0.0;
    } else {
        Aggregated a(s, sf, k);
        a.run();
        sum = a.sum;
        if (a.tiers.on())
            r.kv_transfer_ms = kv_tier_outputs(a.tiers.stats(), a.tiers.bytes_per_token(), double(std::max(1, sf.gpus)) / std::max(1, sf.dp),
                                               sum.n, sum.out_tokens, r);
        ranks = std::max(1, sf.dp);
        r.prefill_utilisation = sum.makespan > 0 ? std::min(1.0, sum.prefill_time / sum.makespan) : 0.0;
    }
    if (!(sum.n > 0) || !(sum.makespan > 0)) {
        r.computed = false;
        return r;
    }
    r.ttft_ms = sum.ttft / sum.n;
    r.tpot_ms = sum.n_tpot > 0 ? sum.tpot / sum.n_tpot : 0.0;
    r.ttft_overhead_ms = sum.ovh / sum.n;
    r.ttft_queue_ms = sum.queue / sum.n;
    r.ttft_prefill_ms = sum.own_prefill / sum.n;
    r.ttft_first_wave_ms = std::max(0.0, r.ttft_ms - r.ttft_overhead_ms - r.ttft_queue_ms - r.ttft_prefill_ms);
    if (s.serving.mode == ServingMode::aggregated) r.ttft_first_wave_ms = std::max(0.0, r.ttft_first_wave_ms - r.kv_transfer_ms);
    r.tpot_decode_ms = sum.decode_steps > 0 ? std::min(r.tpot_ms, sum.decode_time / sum.decode_steps) : r.tpot_ms;
    r.tpot_prefill_ms = std::max(0.0, r.tpot_ms - r.tpot_decode_ms);
    const double mean_osl = sum.out_tokens / sum.n;
    r.e2e_latency_ms = r.ttft_ms + std::max(0.0, mean_osl - 1.0) * r.tpot_ms;
    r.requests_per_s = sum.n * ranks / (sum.makespan / 1000.0);
    r.output_tokens_per_s_per_gpu = sum.out_tokens * ranks / (sum.makespan / 1000.0) / std::max(1, sf.gpus);
    r.tokens_per_s_per_user = r.tpot_ms > 0 ? 1000.0 / r.tpot_ms : 0.0;
    r.running_batch = sum.decoding_time > 0 ? sum.batch_time / sum.decoding_time : 0.0;
    r.peak_running_batch = sum.peak_batch;
    r.bound = sum.mem_blocked > 0.05 * sum.n ? "memory" : (r.prefill_utilisation > 0.5 ? "prefill" : "decode");
    return r;
}

}  // namespace moe
