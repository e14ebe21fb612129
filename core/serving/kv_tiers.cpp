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

KvTiers::KvTiers(const Scenario& s, const StepSurface& sf, int clients) {
    const SessionsConfig& ss = s.serving.sessions;
    on_ = ss.on() && s.serving.mode == ServingMode::aggregated && sf.kv_bytes_per_token > 0;
    if (!on_) return;
    clients_ = std::max(1, clients);
    turns_ = std::max(1, ss.turns);
    sys_ = ss.system_prompt_len;
    think_ms_ = ss.think_time_s * 1000.0;
    bytes_per_token_ = sf.kv_bytes_per_token;
    const KvOffloadConfig& kv = s.runtime.kv_offload;
    cap_[host] = kv.host_GB * 1e9 / bytes_per_token_;
    cap_[ssd] = kv.ssd_GB * 1e9 / bytes_per_token_;
    bw_GBps_[host] = kv.host_bandwidth_GBps > 0 ? kv.host_bandwidth_GBps : s.gpu.host_bandwidth_GBps;
    bw_GBps_[ssd] = kv.ssd_bandwidth_GBps > 0 ? kv.ssd_bandwidth_GBps : s.gpu.ssd_bandwidth_GBps;
    if (!(bw_GBps_[host] > 0)) cap_[host] = 0;
    if (!(bw_GBps_[ssd] > 0)) cap_[ssd] = 0;
}

long long KvTiers::session_of(std::size_t j) const {
    const long long c = (long long)(j % std::size_t(clients_));
    const long long round = (long long)(j / std::size_t(clients_));
    return c + (long long)clients_ * (round / turns_);
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
// hold it, else it is dropped.
void KvTiers::rebalance(double gpu_room) {
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
        }
    }
}

double KvTiers::arrive(std::size_t j, int isl, double now, double gpu_room, double& pf_left) {
    rebalance(gpu_room);
    st_.prompt_tokens += isl;
    // the system prompt: in HBM once the rank's first request has computed it
    const double sys_hit = sys_cached_ ? std::min(sys_, double(isl) - 1.0) : 0.0;
    sys_cached_ = sys_cached_ || sys_ > 0;
    st_.hit_gpu += std::max(0.0, sys_hit);
    double ready = now, hit = 0;
    const long long id = session_of(j);
    auto it = entries_.find(id);
    if (it != entries_.end()) {
        Entry& e = it->second;
        hit = std::max(0.0, std::min(e.tokens, double(isl) - 1.0 - std::max(0.0, sys_hit)));
        if (e.tier == gpu) {
            st_.hit_gpu += hit;
        } else {
            (e.tier == host ? st_.hit_host : st_.hit_ssd) += hit;
            // read back over the tier's link, one reload after another
            const double ms = hit * bytes_per_token_ / (bw_GBps_[e.tier] * 1e9) * 1000.0;
            link_free_[e.tier] = std::max(now, link_free_[e.tier]) + ms;
            ready = link_free_[e.tier];
            st_.moved_tokens += hit;
            st_.reload_ms += ready - now;
        }
        remove(id, e);  // the prefix now belongs to the running request
        entries_.erase(it);
    }
    pf_left = std::max(1.0, double(isl) - std::max(0.0, sys_hit) - hit);
    return ready;
}

void KvTiers::finish(std::size_t j, int isl, int osl, double now, double gpu_room) {
    const long long id = session_of(j);
    auto it = entries_.find(id);
    if (it != entries_.end()) {
        remove(id, it->second);
        entries_.erase(it);
    }
    Entry e;
    e.tokens = std::max(0.0, double(isl) - sys_) + osl;
    e.last = now;
    Entry& stored = entries_[id];
    stored = e;
    place(id, stored, gpu);
    rebalance(gpu_room);
}

void kv_tier_outputs(const KvTiers& tiers, const StepSurface& sf, double requests, double out_tokens, ServingResult& r) {
    const KvTierStats& st = tiers.stats();
    if (st.prompt_tokens > 0) {
        r.prefix_hit_rate_gpu = st.hit_gpu / st.prompt_tokens;
        r.prefix_hit_rate_host = st.hit_host / st.prompt_tokens;
        r.prefix_hit_rate_ssd = st.hit_ssd / st.prompt_tokens;
    }
    // the rank's GPUs each move their share of every token
    const double gpus_per_rank = double(std::max(1, sf.gpus)) / std::max(1, sf.dp);
    if (out_tokens > 0) r.kv_bytes_moved_per_token = st.moved_tokens * tiers.bytes_per_token() * gpus_per_rank / out_tokens;
    if (requests > 0) r.kv_transfer_ms = st.reload_ms / requests;
}

}  // namespace moe
