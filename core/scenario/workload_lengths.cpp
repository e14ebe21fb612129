// workload_lengths.cpp — the scenario's lists of token counts: workload.prompt_lens, workload.context_lens and
// workload.prefill_bucket_lens (a step over requests of mixed lengths, seed 000 §8.1; core/step/mixed.cpp prices it).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/json_util.h"
#include "core/scenario/scenario.h"

namespace moe {
using namespace detail;

bool set_token_lengths(std::vector<int>& out, const FieldDesc& d, const nlohmann::json& v, Issues& errors) {
    const std::string path = d.path;
    const bool buckets = path == "workload.prefill_bucket_lens";
    const std::size_t cap = std::size_t(buckets ? kMaxBuckets : kMaxLengthsListed);
    if (!v.is_array()) {
        errors.push_back({path, "must be a list of token counts (e.g. [1024, 7168]; [] is off), got " + shown(v)});
        return false;
    }
    if (v.size() > cap) {
        errors.push_back({path, "lists " + std::to_string(v.size()) + " entries, more than the " + std::to_string(cap) +
                                    (buckets ? " buckets it takes" : " requests it takes (one estimate per distinct length)")});
        return false;
    }
    std::vector<int> list;
    list.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const nlohmann::json& x = v[i];
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!is_number(x)) {
            errors.push_back({at, "must be a token count, got " + shown(x)});
            return false;
        }
        const double n = x.get<double>();
        if (!std::isfinite(n) || n < d.min) {
            errors.push_back({at, fmt_num(n) + " is not a positive token count"});
            return false;
        }
        if (n != std::floor(n)) {
            errors.push_back({at, fmt_num(n) + " is not a whole number of tokens"});
            return false;
        }
        if (n > d.max) {
            errors.push_back({at, fmt_num(n) + " tokens is more than the " + fmt_num(d.max) + " this field takes"});
            return false;
        }
        if (buckets && !list.empty() && int(n) <= list.back()) {
            errors.push_back({at, fmt_num(n) + " is not above the bucket before it (" + std::to_string(list.back()) +
                                      "): list the buckets in ascending order"});
            return false;
        }
        list.push_back(int(n));
    }
    out = std::move(list);
    return true;
}

BucketedPrompts bucket_prompts(const std::vector<double>& prompt_lens, std::vector<double> buckets, double max_prompt_tokens) {
    using Fault = BucketedPrompts::Fault;
    BucketedPrompts r;
    std::sort(buckets.begin(), buckets.end());
    if (!buckets.empty()) r.largest_bucket = buckets.back();
    r.tokens.reserve(prompt_lens.size());
    for (std::size_t i = 0; i < prompt_lens.size(); ++i) {
        const double l = prompt_lens[i];
        if (!(l >= 1 && l <= max_prompt_tokens)) {
            r.fault = Fault::bad_length;
            r.at = i;
            return r;
        }
        double padded = std::ceil(l);
        if (!buckets.empty()) {
            // an engine that buckets pads each prompt to the smallest bucket that holds it
            const auto it = std::lower_bound(buckets.begin(), buckets.end(), padded);
            if (it == buckets.end()) {
                r.fault = Fault::no_bucket;
                r.at = i;
                return r;
            }
            padded = *it;
        }
        r.tokens.push_back(padded);
        r.total_tokens += padded;
    }
    if (r.total_tokens > kMaxForwardTokens) r.fault = Fault::over_one_forward;
    return r;
}

const char* length_list_replacing(const WorkloadConfig& w, std::string_view path) {
    // the prefill forward holds the prompts of prompt_lens (its tokens their sum); the decode batch is context_lens
    if (!w.prompt_lens.empty() && (path == "workload.prompt_len" || path == "workload.prefill_tokens"))
        return "workload.prompt_lens";
    if (!w.context_lens.empty() && (path == "workload.batch" || path == "workload.context_len"))
        return "workload.context_lens";
    return nullptr;
}

void validate_workload_lengths(const Scenario& s, Issues& e) {
    const WorkloadConfig& w = s.workload;
    if (!w.mixed_lengths() && w.prefill_bucket_lens.empty()) return;
    if (s.serving.mode != ServingMode::off) {
        const char* path = !w.prompt_lens.empty()    ? "workload.prompt_lens"
                           : !w.context_lens.empty() ? "workload.context_lens"
                                                     : "workload.prefill_bucket_lens";
        e.push_back({path, "prices one step (serving.mode off): the serving simulation draws its own requests' lengths "
                           "(serving.isl, serving.length_spread, workload.trace)"});
        return;
    }
    if (!w.prefill_bucket_lens.empty() && w.prompt_lens.empty()) {
        e.push_back({"workload.prefill_bucket_lens", "pads the prompts of workload.prompt_lens: give those too"});
        return;
    }
    // (a prompt's upper bound is its field's: set_token_lengths held it, a Scenario built in code is not held to it)
    const BucketedPrompts b =
        bucket_prompts(std::vector<double>(w.prompt_lens.begin(), w.prompt_lens.end()),
                       std::vector<double>(w.prefill_bucket_lens.begin(), w.prefill_bucket_lens.end()), HUGE_VAL);
    using Fault = BucketedPrompts::Fault;
    if (b.fault == Fault::bad_length || b.fault == Fault::no_bucket) {
        const int p = w.prompt_lens[b.at];
        const std::string at = "workload.prompt_lens[" + std::to_string(b.at) + "]";
        if (b.fault == Fault::bad_length)
            e.push_back({at, std::to_string(p) + " is not a positive token count"});
        else
            e.push_back({at, std::to_string(p) + " tokens is longer than the largest bucket, " +
                                 std::to_string(int(b.largest_bucket)) + " (workload.prefill_bucket_lens)"});
        return;
    }
    if (b.fault == Fault::over_one_forward)
        e.push_back({"workload.prompt_lens", "the prompts come to " + fmt_num(b.total_tokens) + " tokens" +
                                                 (w.prefill_bucket_lens.empty() ? "" : " after bucketing") +
                                                 ", more than one forward's 10,000,000 (workload.prefill_tokens' range)"});
    for (std::size_t i = 0; i < w.context_lens.size(); ++i)
        if (w.context_lens[i] < 1) {
            e.push_back({"workload.context_lens[" + std::to_string(i) + "]", std::to_string(w.context_lens[i]) +
                                                                             " is not a positive token count"});
            return;
        }
    if (w.prompt_lens.size() > std::size_t(kMaxLengthsListed) || w.context_lens.size() > std::size_t(kMaxLengthsListed))
        e.push_back({w.prompt_lens.size() > std::size_t(kMaxLengthsListed) ? "workload.prompt_lens" : "workload.context_lens",
                     "lists more than " + std::to_string(kMaxLengthsListed) + " requests"});
}

}  // namespace moe
