// mixed.cpp — a step over requests of mixed lengths (seed 000 §8.1): each request's attention at its own length,
// prefill bucketing. The serving layer can price a step of its queue's requests with it.
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include <map>
#include <string_view>

#include "core/step/estimate_detail.h"
#include "core/step/power.h"

namespace moe {

namespace {

// Attention whose work follows each request's own length: the attention core and the sparse-attention indexer.
bool per_request_op(std::string_view name) { return name == "attn.core" || name == "attn.indexer"; }

// The per-request attention records of phase `ph` in a step (x occurrences, all layers): ms, FLOPs, HBM bytes.
struct AttentionSum {
    double ms = 0, flops = 0, bytes = 0;
};
AttentionSum attention_of(const Estimate& e, Phase ph) {
    AttentionSum a;
    for (const OpRecord& o : e.ops)
        if (o.phase == ph && per_request_op(o.name)) {
            a.ms += o.time_us * o.count / 1000.0;
            a.flops += o.flops * o.count;
            a.bytes += o.activation_bytes * o.count;
        }
    return a;
}

// The longest request these public functions take, in tokens: workload.prompt_len's range (1 to 1e8, scenario.cpp).
constexpr double kMaxRequestTokens = 1e8;
bool bad_length(double v) { return !(v >= 1 && v <= kMaxRequestTokens); }

// The step of the requests of `lens` (their mean `mean`): `at_mean`, the Estimate of the same step at the mean
// length (what estimate() prices), with its attention replaced by the sum over the requests of the attention of a
// step of requests all at that request's length, divided by their number. `at(len, count)` returns that Estimate
// for `count` requests (set by `at`: the requests of the real step where the tokens allow, so the kernel keeps its
// parallelism); only the lengths differ.
template <class At>
MixedStep mixed(const std::vector<double>& lens, Phase ph, const Estimate& at_mean, At&& at) {
    MixedStep r;
    if (!at_mean.ok) {
        r.errors = at_mean.errors;
        return r;
    }
    const PhaseResult& pm = ph == Phase::prefill ? at_mean.prefill : at_mean.decode;
    r.step_ms_at_mean = pm.step_ms;
    const AttentionSum am = attention_of(at_mean, ph);
    r.attention_ms_at_mean = am.ms;
    r.attention_flops_at_mean = am.flops;
    r.attention_bytes_at_mean = am.bytes;
    std::map<double, int> counts;  // distinct lengths: one estimate each
    for (double l : lens) counts[l]++;
    for (const auto& [len, k] : counts) {
        double n = 0;
        const Estimate e = at(len, n);
        if (!e.ok) {
            r.errors = e.errors;
            return r;
        }
        const AttentionSum a = attention_of(e, ph);
        r.attention_ms += a.ms * k / n;
        r.attention_flops += a.flops * k / n;
        r.attention_bytes += a.bytes * k / n;
    }
    r.step_ms = r.step_ms_at_mean - r.attention_ms_at_mean + r.attention_ms;
    r.ok = true;
    return r;
}

// The prompts of a prefill forward after bucketing (bucket_prompts, core/scenario/scenario.h), checked; empty with
// an error in `errors` when bad.
std::vector<double> padded_prompts(const std::vector<double>& prompt_lens, const std::vector<double>& bucket_lens,
                                   Issues& errors) {
    if (prompt_lens.empty() || prompt_lens.size() > 100000) {
        errors.push_back({"prompt_lens", "between 1 and 100000 prompts, got " + std::to_string(prompt_lens.size())});
        return {};
    }
    for (double b : bucket_lens)
        if (bad_length(b)) {
            errors.push_back({"bucket_lens", "bucket lengths are whole tokens from 1 to 1e8"});
            return {};
        }
    BucketedPrompts b = bucket_prompts(prompt_lens, bucket_lens, kMaxRequestTokens);
    switch (b.fault) {
        case BucketedPrompts::Fault::none: return std::move(b.tokens);
        case BucketedPrompts::Fault::bad_length:
            errors.push_back({"prompt_lens", "prompt lengths are whole tokens from 1 to 1e8"});
            break;
        case BucketedPrompts::Fault::no_bucket:
            errors.push_back({"prompt_lens", "a prompt of " + std::to_string(long(std::ceil(prompt_lens[b.at]))) +
                                                 " tokens is longer than the largest bucket"});
            break;
        case BucketedPrompts::Fault::over_one_forward:
            errors.push_back({"prompt_lens", "the prompts come to " + std::to_string(long(b.total_tokens)) +
                                                 " tokens, more than one forward's 10,000,000"});
            break;
    }
    return {};
}

double mean_length(const std::vector<double>& lens) {
    double sum = 0;
    for (double l : lens) sum += l;
    return std::max(1.0, std::round(sum / double(lens.size())));
}

// The scenario without its lists of lengths: every request of a phase at the one length the workload gives.
Scenario uniform_lengths(const Scenario& s) {
    Scenario x = s;
    x.workload.clear_lengths();
    return x;
}
// A prefill forward of prompts all of one length: the scenario with that prompt length and `tokens` prompt tokens.
Scenario prefill_of(const Scenario& s, double len, double tokens) {
    Scenario x = uniform_lengths(s);
    x.workload.phase = PhaseSel::prefill;
    x.workload.prompt_len = int(len);
    x.workload.prefill_tokens = int(tokens);
    x.workload.prefill_tokens_computed = false;
    return x;
}
Scenario decode_of(const Scenario& s, double len, double batch) {
    Scenario x = uniform_lengths(s);
    x.workload.phase = PhaseSel::decode;
    x.workload.batch = int(batch);
    x.workload.context_len = int(len);
    return x;
}

// Prefill: `count` prompts of `len` tokens, as many of the forward's prompts as one forward's kMaxForwardTokens hold.
MixedStep prefill_mixed(const Scenario& s, const Tables& t, const std::vector<double>& lens, const Estimate& at_mean) {
    const double n = double(lens.size());
    MixedStep out = mixed(lens, Phase::prefill, at_mean, [&](double len, double& count) {
        count = std::min(n, std::max(1.0, std::floor(kMaxForwardTokens / len)));
        return estimate(prefill_of(s, len, count * len), t);
    });
    for (double l : lens) out.tokens += l;
    return out;
}
MixedStep decode_mixed(const Scenario& s, const Tables& t, const std::vector<double>& lens, const Estimate& at_mean) {
    const double n = double(lens.size());
    MixedStep out = mixed(lens, Phase::decode, at_mean, [&](double len, double& count) {
        count = n;
        return estimate(decode_of(s, len, n), t);
    });
    out.tokens = n * (1 + s.runtime.speculative.draft_tokens);
    return out;
}

}  // namespace

MixedStep prefill_step_mixed(const Scenario& s, const Tables& t, const std::vector<double>& prompt_lens,
                             const std::vector<double>& bucket_lens) {
    MixedStep r;
    const std::vector<double> lens = padded_prompts(prompt_lens, bucket_lens, r.errors);
    if (lens.empty()) return r;
    double sum = 0;
    for (double l : lens) sum += l;
    // the step at the mean length holds the forward's tokens: the rest of the step follows them
    return prefill_mixed(s, t, lens, estimate(prefill_of(s, mean_length(lens), sum), t));
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
    const double n = double(lens.size());
    return decode_mixed(s, t, lens, estimate(decode_of(s, mean_length(lens), n), t));
}

namespace detail {
namespace {

// Phase `ph` of `e` (the step at the mean length) made the mixed step `m`: its per-request attention records
// scaled to the requests' own lengths (time, FLOPs, bytes; the layer groups' times and the provenance shares with
// them), the step time replaced, and what follows from it (TTFT / TPOT, tokens/s, $ / Mtok, power) rescaled.
// `served_share`: of the tokens the step computes, the share that are the prompts' own (bucket padding is not).
void apply_mixed(const Scenario& s, Estimate& e, Phase ph, const MixedStep& m, double served_share) {
    PhaseResult& out = ph == Phase::prefill ? e.prefill : e.decode;
    if (!out.computed || !(out.step_ms > 0) || !(m.step_ms > 0)) return;
    const double rt = m.attention_ms_at_mean > 0 ? m.attention_ms / m.attention_ms_at_mean : 1;
    const double rf = m.attention_flops_at_mean > 0 ? m.attention_flops / m.attention_flops_at_mean : 1;
    const double rb = m.attention_bytes_at_mean > 0 ? m.attention_bytes / m.attention_bytes_at_mean : 1;
    auto compute = [&](const OpRecord& o) { return o.phase == ph && o.bound != Bound::comm && o.bound != Bound::offload; };
    double denom = 0, by_source[4] = {0, 0, 0, 0};
    for (const OpRecord& o : e.ops)
        if (compute(o)) denom += o.time_us * o.count;
    const double shares[4] = {out.share_measured, out.share_interpolated, out.share_transferred, out.share_analytical};
    for (int i = 0; i < 4; ++i) by_source[i] = shares[i] * denom;
    double new_denom = denom;
    for (OpRecord& o : e.ops) {
        if (o.phase != ph || !per_request_op(o.name)) continue;
        const double dt = o.time_us * (rt - 1);  // the difference added as it is (exposed too: no overlap redone)
        o.time_us += dt;
        o.exposed_us += dt;
        o.flops *= rf;
        o.activation_bytes *= rb;
        if (o.group >= 0 && std::size_t(o.group) < out.groups.size() && out.groups[std::size_t(o.group)].count > 0)
            out.groups[std::size_t(o.group)].time_us += dt * o.count / out.groups[std::size_t(o.group)].count;
        if (compute(o)) {
            const int slot = o.source == Source::measured ? 0 : o.source == Source::interpolated ? 1
                             : o.source == Source::transferred ? 2 : 3;
            by_source[slot] += dt * o.count;
            new_denom += dt * o.count;
        }
    }
    if (denom > 0 && new_denom > 0) {
        out.share_measured = by_source[0] / new_denom;
        out.share_interpolated = by_source[1] / new_denom;
        out.share_transferred = by_source[2] / new_denom;
        out.share_analytical = by_source[3] / new_denom;
    }
    const double k = m.step_ms / out.step_ms;  // new step / the mean's
    out.compute_ms += m.step_ms - out.step_ms;
    out.step_ms = m.step_ms;
    if (ph == Phase::prefill) {
        // one forward holds every prompt: TTFT is the step (with the pipeline's fill), proportional to it
        out.ttft_ms *= k;
        out.pp_bubble_ms *= k;
        out.tokens_per_s_per_gpu *= served_share / k;
        out.tokens_per_s_cluster *= served_share / k;
    } else {
        out.tpot_ms *= k;
        out.tokens_per_s_per_user /= k;
        out.tokens_per_s_per_gpu /= k;
        out.tokens_per_s_cluster /= k;
    }
    out.usd_per_mtok = e.gpu_hour_usd > 0 && out.tokens_per_s_per_gpu > 0 ? usd_per_mtok(e.gpu_hour_usd, out.tokens_per_s_per_gpu) : 0;
    apply_step_power(s.gpu, e.ops, ph, out);
}

}  // namespace

void estimate_mixed_lengths(const Scenario& s, const Tables& t, Estimate& e, bool warnings) {
    const WorkloadConfig& w = s.workload;
    const bool prefill = !w.prompt_lens.empty() && w.phase != PhaseSel::decode;
    const bool decode = !w.context_lens.empty() && w.phase != PhaseSel::prefill;
    Issues errors;
    std::vector<double> prompts, contexts;
    double asked = 0, padded = 0;  // the prompts' own tokens and the tokens computed after bucketing
    if (prefill) {
        const std::vector<double> raw(w.prompt_lens.begin(), w.prompt_lens.end());
        prompts = padded_prompts(raw, std::vector<double>(w.prefill_bucket_lens.begin(), w.prefill_bucket_lens.end()), errors);
        for (double l : raw) asked += l;
        for (double l : prompts) padded += l;
    }
    if (!errors.empty()) {  // (validate_scenario said the same with the field's path; kept for a Scenario built in code)
        e.errors.push_back({"workload.prompt_lens", errors[0].message});
        return;
    }
    if (decode) contexts.assign(w.context_lens.begin(), w.context_lens.end());
    // The step at the mean length: the prompts' tokens in one forward, the batch of the contexts' count. A phase
    // without a list keeps the scenario's own shape (the decode context stays prompt_len + output_len / 2).
    Scenario x = uniform_lengths(s);
    x.workload.context_len = s.context_len();
    if (prefill) {
        x.workload.prompt_len = int(mean_length(prompts));
        x.workload.prefill_tokens = int(padded);
        x.workload.prefill_tokens_computed = false;
    }
    if (decode) {
        x.workload.batch = int(contexts.size());
        x.workload.context_len = int(mean_length(contexts));
    }
    estimate_into(x, t, e, warnings);
    if (!e.ok) return;
    for (Phase ph : {Phase::prefill, Phase::decode}) {
        if (ph == Phase::prefill ? !prefill : !decode) continue;
        const MixedStep m = ph == Phase::prefill ? prefill_mixed(s, t, prompts, e) : decode_mixed(s, t, contexts, e);
        if (!m.ok) {
            e.ok = false;
            e.errors = m.errors;
            return;
        }
        apply_mixed(s, e, ph, m, ph == Phase::prefill ? asked / padded : 1.0);
    }
}

}  // namespace detail

}  // namespace moe
