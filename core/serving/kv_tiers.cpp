#include "core/serving/kv_tiers.h"

#include <algorithm>
#include <cmath>

namespace moe {

SessionLengths::SessionLengths(const Scenario& s, int clients)
    : cfg_(s.serving.sessions), spread_(s.serving.length_spread), clients_(std::max(1, clients)),
      history_(std::size_t(std::max(1, clients)), 0.0) {}

int SessionLengths::prompt(std::size_t j, double u, int osl) {
    const std::size_t c = j % std::size_t(clients_);
    const std::size_t round = j / std::size_t(clients_);
    if (round % std::size_t(std::max(1, cfg_.turns)) == 0) history_[c] = 0;  // a new session
    const double user = std::max(1.0, std::round(cfg_.user_len * (1.0 - spread_ * u)));
    const double isl = std::min(2e9, cfg_.system_prompt_len + history_[c] + user);
    history_[c] += user + osl;
    return int(isl);
}

KvTiers::KvTiers(const Scenario& s, double kv_bytes_per_token) {
    const SessionsConfig& ss = s.serving.sessions;
    on_ = (ss.on() || s.serving.trace.on()) && kv_bytes_per_token > 0;
    if (!on_) return;
    if (ss.on()) {
        sys_ = ss.system_prompt_len;
        think_ms_ = ss.think_time_s * 1000.0;
    }
    bytes_per_token_ = kv_bytes_per_token;
    const KvOffloadConfig& kv = s.runtime.kv_offload;
    cap_[host] = kv.host_GB * 1e9 / bytes_per_token_;
    cap_[ssd] = kv.ssd_GB * 1e9 / bytes_per_token_;
    bw_GBps_[host] = kv.host_bandwidth_GBps > 0 ? kv.host_bandwidth_GBps : s.gpu.host_bandwidth_GBps;
    bw_GBps_[ssd] = kv.ssd_bandwidth_GBps > 0 ? kv.ssd_bandwidth_GBps : s.gpu.ssd_bandwidth_GBps;
    if (!(bw_GBps_[host] > 0)) cap_[host] = 0;
    if (!(bw_GBps_[ssd] > 0)) cap_[ssd] = 0;
}

void KvTiers::remove(long long id, Entry& e) {
    lru_[e.tier].erase({e.last, id});
    used_[e.tier] -= e.tokens;
}

void KvTiers::place(long long id, Entry& e, int tier) {
    e.tier = tier;
    lru_[tier].insert({e.last, id});
    used_[tier] += e.tokens;
}

// Each tier down to its capacity, least recently used first: an entry moves to the next tier that exists and can
// hold it, else it is dropped. A move into SSD occupies the SSD's link from `now` (kv_tiers.h).
void KvTiers::rebalance(double gpu_room, double now) {
    cap_[gpu] = std::max(0.0, gpu_room - (sys_cached_ ? sys_ : 0.0));
    for (int tier = gpu; tier <= ssd; ++tier) {
        while (used_[tier] > cap_[tier] + 1e-6 && !lru_[tier].empty()) {
            const long long id = lru_[tier].begin()->second;
            auto it = entries_.find(id);
            Entry& e = it->second;
            remove(id, e);
            int next = tier + 1;
            while (next <= ssd && !(cap_[next] > 0)) ++next;
            if (next > ssd || e.tokens > cap_[next]) {
                entries_.erase(it);
                continue;
            }
            place(id, e, next);
            st_.moved_tokens += e.tokens;  // written out to the slower tier
            if (next == ssd) link_free_[ssd] = std::max(now, link_free_[ssd]) + link_ms(ssd, e.tokens);
        }
    }
}

double KvTiers::arrive(long long id, int isl, int prefix_len, double now, double gpu_room, double& pf_left) {
    rebalance(gpu_room, now);
    st_.prompt_tokens += isl;
    // the system prompt: in HBM once the rank's first request has computed it
    const double sys_hit = sys_cached_ ? std::min(sys_, double(isl) - 1.0) : 0.0;
    sys_cached_ = sys_cached_ || sys_ > 0;
    st_.hit_gpu += std::max(0.0, sys_hit);
    double ready = now, hit = 0;
    auto it = id < 0 ? entries_.end() : entries_.find(id);
    if (it != entries_.end()) {
        Entry& e = it->second;
        hit = std::max(0.0, std::min(e.tokens, double(isl) - 1.0 - std::max(0.0, sys_hit)));
        if (prefix_len > 0) hit = std::min(hit, double(prefix_len));
        if (e.tier == gpu) {
            st_.hit_gpu += hit;
        } else {
            (e.tier == host ? st_.hit_host : st_.hit_ssd) += hit;
            // read back over the tier's link, one reload after another
            const double ms = link_ms(e.tier, hit);
            link_free_[e.tier] = std::max(now, link_free_[e.tier]) + ms;
            ready = link_free_[e.tier];
            st_.moved_tokens += hit;
            st_.reload_ms += ready - now;
        }
        remove(id, e);
        if (prefix_len > 0) {
            // a shared prefix stays cached, in HBM from now (its reload, if any, brought it there)
            e.last = now;
            place(id, e, gpu);
        } else {
            entries_.erase(it);  // the history now belongs to the running request
        }
    }
    pf_left = std::max(1.0, double(isl) - std::max(0.0, sys_hit) - hit);
    return ready;
}

double KvTiers::kept_tokens(int isl, int osl, int prefix_len, bool with_answer) const {
    if (prefix_len > 0) return prefix_len;
    return std::max(0.0, double(isl) - sys_) + (with_answer ? osl : 0);
}

void KvTiers::finish(long long id, double tokens, double now, double gpu_room) {
    if (id < 0) return;
    auto it = entries_.find(id);
    if (it != entries_.end()) {
        remove(id, it->second);
        entries_.erase(it);
    }
    Entry e;
    e.tokens = tokens;
    e.last = now;
    Entry& stored = entries_[id];
    stored = e;
    place(id, stored, gpu);
    rebalance(gpu_room, now);
}

double kv_tier_outputs(const KvTierStats& st, double bytes_per_token, double gpus_per_rank, double requests, double out_tokens,
                       ServingResult& r) {
    if (st.prompt_tokens > 0) {
        r.prefix_hit_rate_gpu = st.hit_gpu / st.prompt_tokens;
        r.prefix_hit_rate_host = st.hit_host / st.prompt_tokens;
        r.prefix_hit_rate_ssd = st.hit_ssd / st.prompt_tokens;
    }
    if (out_tokens > 0) r.kv_bytes_moved_per_token = st.moved_tokens * bytes_per_token * gpus_per_rank / out_tokens;
    return requests > 0 ? st.reload_ms / requests : 0.0;
}

}  // namespace moe
