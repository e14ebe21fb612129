// mixed.cpp — a step over requests of mixed lengths (seed 000 §8.1): each request's attention at its own length,
// prefill bucketing. The serving layer can price a step of its queue's requests with it.
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include <map>

#include "core/step/estimate_detail.h"

namespace moe {

namespace {

// Attention whose work follows each request's own length: the attention core and the sparse-attention indexer.
bool per_request_op(std::string_view name) { return name == "attn.core" || name == "attn.indexer"; }

// Milliseconds (and FLOPs) of the per-request attention records of phase `ph` in a step (x occurrences, all layers).
double attention_ms(const Estimate& e, Phase ph, double* flops = nullptr) {
    double us = 0, f = 0;
    for (const OpRecord& o : e.ops)
        if (o.phase == ph && per_request_op(o.name)) {
            us += o.time_us * o.count;
            f += o.flops * o.count;
        }
    if (flops) *flops = f;
    return us / 1000.0;
}

bool bad_length(double v) { return !(v >= 1 && v <= 1e8); }

// The step of `n` requests at each distinct length of `lens` through `at(len)`, which returns the Estimate of n
// requests all of that length: the requests' own attention is the sum over them of (attention at their length) / n.
// The n requests keep the kernel's parallelism of the real step; only their lengths differ.
template <class At>
MixedStep mixed(const std::vector<double>& lens, Phase ph, At&& at) {
    MixedStep r;
    const double n = double(lens.size());
    double sum = 0;
    for (double l : lens) sum += l;
    const double mean = std::max(1.0, std::round(sum / n));
    const Estimate at_mean = at(mean);
    if (!at_mean.ok) {
        r.errors = at_mean.errors;
        return r;
    }
    const PhaseResult& pm = ph == Phase::prefill ? at_mean.prefill : at_mean.decode;
    r.step_ms_at_mean = pm.step_ms;
    r.attention_ms_at_mean = attention_ms(at_mean, ph, &r.attention_flops_at_mean);
    std::map<double, int> counts;  // distinct lengths: one estimate each
    for (double l : lens) counts[l]++;
    for (const auto& [len, k] : counts) {
        const Estimate e = len == mean ? at_mean : at(len);
        if (!e.ok) {
            r.errors = e.errors;
            return r;
        }
        double f = 0;
        r.attention_ms += attention_ms(e, ph, &f) * k / n;
        r.attention_flops += f * k / n;
    }
    r.step_ms = r.step_ms_at_mean - r.attention_ms_at_mean + r.attention_ms;
    r.ok = true;
    return r;
}

}  // namespace

MixedStep prefill_step_mixed(const Scenario& s, const Tables& t, const std::vector<double>& prompt_lens,
                             const std::vector<double>& bucket_lens) {
    MixedStep r;
    if (prompt_lens.empty() || prompt_lens.size() > 100000) {
        r.errors.push_back({"prompt_lens", "between 1 and 100000 prompts, got " + std::to_string(prompt_lens.size())});
        return r;
    }
    for (double b : bucket_lens)
        if (bad_length(b)) {
            r.errors.push_back({"bucket_lens", "bucket lengths are whole tokens from 1 to 1e8"});
            return r;
        }
    std::vector<double> buckets = bucket_lens;
    std::sort(buckets.begin(), buckets.end());
    std::vector<double> lens;
    lens.reserve(prompt_lens.size());
    for (double l : prompt_lens) {
        if (bad_length(l)) {
            r.errors.push_back({"prompt_lens", "prompt lengths are whole tokens from 1 to 1e8"});
            return r;
        }
        double padded = std::ceil(l);
        if (!buckets.empty()) {
            // an engine that buckets pads each prompt to the smallest bucket that holds it
            auto it = std::lower_bound(buckets.begin(), buckets.end(), padded);
            if (it == buckets.end()) {
                r.errors.push_back({"prompt_lens", "a prompt of " + std::to_string(long(padded)) +
                                                       " tokens is longer than the largest bucket"});
                return r;
            }
            padded = *it;
        }
        lens.push_back(padded);
    }
    const double n = double(lens.size());
    MixedStep out = mixed(lens, Phase::prefill, [&](double len) {
        Scenario x = s;
        x.workload.phase = PhaseSel::prefill;
        x.workload.prompt_len = int(len);
        x.workload.prefill_tokens = int(std::min(1e7, n * len));
        x.workload.prefill_tokens_computed = false;
        return estimate(x, t);
    });
    for (double l : lens) out.tokens += l;
    return out;
}

KvFragmentation kv_fragmentation(double lo, double hi, double block) {
    KvFragmentation f;
    lo = std::ceil(lo);
    hi = std::floor(hi);
    block = std::floor(block);
    if (!(lo >= 1) || !(hi >= lo) || !(block >= 1) || hi > 1e12) return f;
    const double n = hi - lo + 1, full = std::floor(n / block);
    double waste = full * block * (block - 1) / 2;  // each whole run of `block` lengths wastes 0 + 1 + .. + block - 1
    for (double len = lo + full * block; len <= hi; ++len) waste += std::ceil(len / block) * block - len;
    f.waste_tokens = waste / n;
    const double mean = (lo + hi) / 2;
    f.utilisation = mean / (mean + f.waste_tokens);
    return f;
}

MixedStep decode_step_mixed(const Scenario& s, const Tables& t, const std::vector<double>& contexts) {
    MixedStep r;
    if (contexts.empty() || contexts.size() > 1000000) {
        r.errors.push_back({"contexts", "between 1 and 1e6 sequences, got " + std::to_string(contexts.size())});
        return r;
    }
    std::vector<double> lens;
    lens.reserve(contexts.size());
    for (double l : contexts) {
        if (bad_length(l)) {
            r.errors.push_back({"contexts", "KV lengths are whole tokens from 1 to 1e8"});
            return r;
        }
        lens.push_back(std::ceil(l));
    }
    const int n = int(lens.size());
    MixedStep out = mixed(lens, Phase::decode, [&](double len) {
        Scenario x = s;
        x.workload.phase = PhaseSel::decode;
        x.workload.batch = n;
        x.workload.context_len = int(len);
        return estimate(x, t);
    });
    out.tokens = double(n) * (1 + s.runtime.speculative.draft_tokens);
    return out;
}

}  // namespace moe
