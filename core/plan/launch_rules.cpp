// launch_rules.cpp — the engines' own rules on their launch flags (issue 26): what must divide what, which flags go
// together, which values are allowed, each with its source in the engine's documentation. check_launch_command()
// reads a command line back into its flags and lists every rule it breaks; the planner only emits layouts that pass
// (engine_ok in plan.cpp) and tests/unit/test_plan.cpp feeds every front row of several plans through these rules.
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/plan/plan.h"

namespace moe {

namespace {

// "--flag value" pairs and bare "--flag"s of a command line (the value: the next token unless it is a flag). A
// command may chain several (echo ... > file && mpirun ... trtllm-serve ...): the flags of all of them.
struct Flags {
    std::map<std::string, std::string> v;
    int mpirun_np = 0;
    bool has(const char* f) const { return v.count(f) != 0; }
    long num(const char* f, long otherwise = 0) const {
        auto it = v.find(f);
        if (it == v.end() || it->second.empty()) return otherwise;
        char* end = nullptr;
        const long x = std::strtol(it->second.c_str(), &end, 10);
        return end && *end == 0 ? x : otherwise;
    }
    std::string str(const char* f) const {
        auto it = v.find(f);
        return it == v.end() ? std::string() : it->second;
    }
};

Flags parse_flags(std::string_view cmd) {
    std::vector<std::string> tok;
    std::size_t i = 0;
    while (i < cmd.size()) {
        while (i < cmd.size() && cmd[i] == ' ') ++i;
        std::size_t j = i;
        if (j < cmd.size() && cmd[j] == '\'') {  // a quoted JSON or YAML value: one token
            j = cmd.find('\'', j + 1);
            j = j == std::string_view::npos ? cmd.size() : j + 1;
        } else {
            while (j < cmd.size() && cmd[j] != ' ') ++j;
        }
        if (j > i) tok.emplace_back(cmd.substr(i, j - i));
        i = j;
    }
    Flags f;
    for (std::size_t k = 0; k < tok.size(); ++k) {
        if (tok[k] == "-np" && k + 1 < tok.size()) f.mpirun_np = std::atoi(tok[k + 1].c_str());
        if (tok[k].size() < 3 || tok[k].compare(0, 2, "--") != 0) continue;
        const bool value = k + 1 < tok.size() && tok[k + 1].compare(0, 2, "--") != 0 && tok[k + 1] != "&&";
        f.v[tok[k]] = value ? tok[k + 1] : std::string();
    }
    return f;
}

struct Rule {
    ServingEngine engine;
    const char* id;
    const char* text;
    const char* source;
    bool (*holds)(const Flags&);
};

// (The flag spellings themselves are checked against the same pages in plan_launch.cpp.)
const Rule kRules[] = {
    {ServingEngine::sglang, "sglang.dp_attention", "--dp > 1 needs --enable-dp-attention",
     "https://docs.sglang.io/advanced_features/server_arguments.html (--dp-size, --enable-dp-attention)",
     [](const Flags& f) { return f.num("--dp", 1) <= 1 || f.has("--enable-dp-attention"); }},
    {ServingEngine::sglang, "sglang.dp_divides_tp", "--dp divides --tp (attention TP = tp / dp)",
     "https://docs.sglang.io/advanced_features/server_arguments.html (DP attention: tp_size % dp_size == 0)",
     [](const Flags& f) { return f.num("--tp", 1) % f.num("--dp", 1) == 0; }},
    {ServingEngine::sglang, "sglang.ep_divides_tp", "--ep-size divides --tp (EP subgroups partition the TP ranks)",
     "https://docs.sglang.io/advanced_features/expert_parallelism.html",
     [](const Flags& f) { return f.num("--tp", 1) % f.num("--ep-size", 1) == 0; }},
    {ServingEngine::sglang, "sglang.deepep_ep_equals_tp", "--moe-a2a-backend deepep needs --ep-size equal to --tp",
     "https://docs.sglang.io/advanced_features/expert_parallelism.html (\"deepep ... only support cases where "
     "ep_size = tp_size\"; hybrid EP and TP only with the none backend)",
     [](const Flags& f) { return f.str("--moe-a2a-backend") != "deepep" || f.num("--ep-size", 1) == f.num("--tp", 1); }},
    {ServingEngine::sglang, "sglang.deepep_mode", "--deepep-mode only with --moe-a2a-backend deepep",
     "https://docs.sglang.io/advanced_features/expert_parallelism.html",
     [](const Flags& f) { return !f.has("--deepep-mode") || f.str("--moe-a2a-backend") == "deepep"; }},
    {ServingEngine::sglang, "sglang.mtp_chain", "--speculative-num-draft-tokens = --speculative-num-steps + 1 at --speculative-eagle-topk 1",
     "https://docs.sglang.io/advanced_features/speculative_decoding.html (Multi Token Prediction)",
     [](const Flags& f) {
         return !f.has("--speculative-algorithm") || f.num("--speculative-eagle-topk", 1) != 1 ||
                f.num("--speculative-num-draft-tokens") == f.num("--speculative-num-steps") + 1;
     }},
    {ServingEngine::sglang, "sglang.multi_node", "--nnodes > 1 needs --node-rank and --dist-init-addr",
     "https://docs.sglang.io/advanced_features/server_arguments.html (multi-node)",
     [](const Flags& f) { return f.num("--nnodes", 1) <= 1 || (f.has("--node-rank") && f.has("--dist-init-addr")); }},
    {ServingEngine::vllm, "vllm.a2a_needs_ep", "--all2all-backend needs --enable-expert-parallel",
     "https://docs.vllm.ai/en/latest/serving/expert_parallel_deployment/",
     [](const Flags& f) { return !f.has("--all2all-backend") || f.has("--enable-expert-parallel"); }},
    {ServingEngine::vllm, "vllm.a2a_values",
     "--all2all-backend is one of allgather_reducescatter, pplx, deepep_high_throughput, deepep_low_latency",
     "https://docs.vllm.ai/en/latest/serving/expert_parallel_deployment/",
     [](const Flags& f) {
         const std::string b = f.str("--all2all-backend");
         return !f.has("--all2all-backend") || b == "allgather_reducescatter" || b == "pplx" ||
                b == "deepep_high_throughput" || b == "deepep_low_latency";
     }},
    {ServingEngine::vllm, "vllm.dp_local", "--data-parallel-size-local divides --data-parallel-size",
     "https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html (multi-node)",
     [](const Flags& f) {
         const long local = f.num("--data-parallel-size-local", 0);
         return local == 0 || f.num("--data-parallel-size", 1) % local == 0;
     }},
    {ServingEngine::trtllm, "trtllm.ep_divides_tp", "--ep_size divides --tp_size (moe_tp_size x moe_ep_size = tp_size)",
     "https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html (--tp_size, --ep_size)",
     [](const Flags& f) { return f.num("--tp_size", 1) % f.num("--ep_size", 1) == 0; }},
    {ServingEngine::trtllm, "trtllm.mpi_world", "mpirun -np equals --tp_size x --pp_size",
     "https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html (multi-node with "
     "trtllm-llmapi-launch)",
     [](const Flags& f) { return f.mpirun_np == 0 || f.mpirun_np == f.num("--tp_size", 1) * f.num("--pp_size", 1); }},
};

}  // namespace

std::vector<std::string> check_launch_command(ServingEngine engine, std::string_view command) {
    std::vector<std::string> broken;
    if (command.empty()) return broken;
    const Flags f = parse_flags(command);
    for (const Rule& r : kRules)
        if (r.engine == engine && !r.holds(f)) broken.push_back(std::string(r.id) + ": " + r.text + " (" + r.source + ")");
    return broken;
}

std::size_t launch_rule_count(ServingEngine engine) {
    std::size_t n = 0;
    for (const Rule& r : kRules) n += r.engine == engine;
    return n;
}

}  // namespace moe
