// speculative.h — speculative decoding (issue 29, DESIGN §11.4): how a decode step drafts tokens and how many of
// them the verify pass keeps.
//
// Room: core/scenario/ (inputs). May include core/base/ only.
//
//   moe::SpeculativeConfig sp;                 // runtime.speculative
//   sp.method = moe::SpecMethod::eagle; sp.draft_tokens = 3;
//   moe::set_acceptance_curve(sp.acceptance, "deepseek-v3-mtp");
//   sp.tokens_per_step();                      // 1 + sum_k prod_{j<=k} a_j
//
// A verify step runs the target on batch x (1 + draft_tokens) tokens; draft k (0-based) is kept when every draft
// before it was kept and it matches: a_k is the conditional acceptance of position k given positions < k. The
// expected tokens a request gets per step are 1 (the verify's own token) + sum_k prod_{j<=k} a_j.
#pragma once
#include <cstdint>
#include <string_view>

namespace moe {

// mtp: the model's own MTP modules draft (DeepSeek-V3 style; needs num_nextn_predict_layers > 0); eagle: an EAGLE-3
// draft head (one decoder layer of the target's width, 2h-wide q/k/v, a 3h x h fusion, a 32,000-token LM head;
// ModelSpec::eagle3_head_params); ngram: prompt-lookup drafting on the host (no draft
// model, ~0 GPU time).
enum class SpecMethod : std::uint8_t { mtp, eagle, ngram };
const char* spec_method_name(SpecMethod m);

constexpr int kMaxDraftTokens = 16;

// The acceptance of each draft position: a named published curve, or rates typed per position. A list shorter than
// the drafts repeats its last rate (one number = the same conditional rate at every position, the older
// runtime.mtp_acceptance_rate).
struct AcceptanceSel {
    int curve = -1;  // index into acceptance_curves(); -1: `rates`
    int n = 1;       // rates given (1..kMaxDraftTokens)
    double rates[kMaxDraftTokens] = {0.8};
    bool operator==(const AcceptanceSel& o) const;
};

// A published per-position acceptance curve. `accepted` holds, per draft position, the share of steps in which that
// position was accepted (vLLM's "per-position acceptance rate": prod_{j<=k} a_j); the conditional rates follow.
struct AcceptanceCurve {
    const char* name;
    int n;
    double accepted[kMaxDraftTokens];
    const char* source;  // where the figures were published, and on what
};
const AcceptanceCurve* acceptance_curves(int* count);
// Index of the curve named `name`, or -1.
int find_acceptance_curve(std::string_view name);

struct SpeculativeConfig {
    SpecMethod method = SpecMethod::mtp;
    int draft_tokens = 0;  // drafts per decode step (0 = off)
    AcceptanceSel acceptance;
    // Conditional acceptance of draft position k (0-based).
    double rate(int k) const;
    // Expected tokens per verify step for one request: 1 + sum_k prod_{j<=k} a_j over the draft_tokens positions.
    double tokens_per_step() const;
};

}  // namespace moe
