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

int pad_to_bucket(int prompt_len, const std::vector<int>& buckets) {
    if (buckets.empty()) return prompt_len;
    const auto it = std::lower_bound(buckets.begin(), buckets.end(), prompt_len);
    return it == buckets.end() ? 0 : *it;
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
    // (set_token_lengths kept the buckets ascending; a Scenario built in code is sorted here for the lookup)
    std::vector<int> buckets = w.prefill_bucket_lens;
    std::sort(buckets.begin(), buckets.end());
    double tokens = 0;
    for (std::size_t i = 0; i < w.prompt_lens.size(); ++i) {
        const int p = w.prompt_lens[i];
        const std::string at = "workload.prompt_lens[" + std::to_string(i) + "]";
        if (p < 1) {
            e.push_back({at, std::to_string(p) + " is not a positive token count"});
            return;
        }
        const int padded = pad_to_bucket(p, buckets);
        if (padded == 0) {
            e.push_back({at, std::to_string(p) + " tokens is longer than the largest bucket, " + std::to_string(buckets.back()) +
                                 " (workload.prefill_bucket_lens)"});
            return;
        }
        tokens += padded;
    }
    if (tokens > 1e7)
        e.push_back({"workload.prompt_lens", "the prompts come to " + fmt_num(tokens) +
                                                 " tokens" + (buckets.empty() ? "" : " after bucketing") +
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
