#include "core/scenario/speculative.h"

#include <algorithm>

namespace moe {

namespace {
const char* const kMethodNames[] = {"mtp", "eagle", "ngram"};

// Published per-position acceptance (the share of verify steps that kept draft k; cumulative over positions).
const AcceptanceCurve kCurves[] = {
    // DeepSeek-V3 Technical Report (arXiv:2412.19437) §5.4.3: "the acceptance rate of the second token prediction
    // ranges between 85% and 90%" (one MTP module, D = 1): the middle of that range.
    {"deepseek-v3-mtp", 1, {0.875}, "DeepSeek-V3 Technical Report (arXiv:2412.19437) §5.4.3: second-token acceptance 85-90% (midpoint)"},
    // vLLM pull request #48892 (multi-layer MTP speculator, model runner V2): GSM8K at temperature 0 with 8 MTP
    // drafts, per-position acceptance 76.17, 61.58, 51.25, 42.43, 36.40, 30.94, 27.22, 23.65 %, acceptance length 4.50.
    {"vllm-mtp8-gsm8k", 8, {0.7617, 0.6158, 0.5125, 0.4243, 0.3640, 0.3094, 0.2722, 0.2365},
     "vLLM PR #48892 (multi-layer MTP, GSM8K, temperature 0, 8 drafts): per-position acceptance, acceptance length 4.50"},
    // The EAGLE-3 head yuhuili/EAGLE3-LLaMA3.1-Instruct-8B on MT-bench with K = 7 chain drafts: acceptance length
    // 2.77 (nebius/EAGLE3-Llama-3.3-70B-Instruct model card, comparison table, temperature 1). Only the length is
    // published: one conditional rate a = 0.651 at every position gives 1 + a + ... + a^7 = 2.77; positions a^k.
    {"eagle3-llama3.1-8b-mtbench", 7, {0.651, 0.423801, 0.275894, 0.179607, 0.116924, 0.076118, 0.049553},
     "EAGLE-3 head for Llama-3.1-8B-Instruct on MT-bench, K = 7: acceptance length 2.77 (nebius EAGLE3-Llama-3.3-70B "
     "model card); a constant conditional rate 0.651 matches it"},
};
constexpr int kCurveCount = int(sizeof(kCurves) / sizeof(kCurves[0]));
}  // namespace

const char* spec_method_name(SpecMethod m) { return kMethodNames[int(m)]; }

const AcceptanceCurve* acceptance_curves(int* count) {
    if (count) *count = kCurveCount;
    return kCurves;
}

int find_acceptance_curve(std::string_view name) {
    for (int i = 0; i < kCurveCount; ++i)
        if (name == kCurves[i].name) return i;
    return -1;
}

bool AcceptanceSel::operator==(const AcceptanceSel& o) const {
    if (curve != o.curve) return false;
    if (curve >= 0) return true;
    if (n != o.n) return false;
    for (int i = 0; i < n; ++i)
        if (rates[i] != o.rates[i]) return false;
    return true;
}

double SpeculativeConfig::rate(int k) const {
    const AcceptanceSel& a = acceptance;
    if (a.curve >= 0 && a.curve < kCurveCount) {
        const AcceptanceCurve& c = kCurves[a.curve];
        // past the published positions the last conditional rate repeats
        const int i = std::min(k, c.n - 1);
        const double before = i == 0 ? 1.0 : c.accepted[i - 1];
        return before > 0 ? c.accepted[i] / before : 0.0;
    }
    return a.rates[std::min(k, std::max(1, a.n) - 1)];
}

double SpeculativeConfig::tokens_per_step() const {
    double tokens = 1.0, kept = 1.0;
    for (int k = 0; k < draft_tokens; ++k) {
        kept *= rate(k);
        tokens += kept;
    }
    return tokens;
}

}  // namespace moe
