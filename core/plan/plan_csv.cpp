// plan_csv.cpp — a plan row as text: the CSV of `moe-roofline plan --format csv` (the CLI and the page's CSV
// export write the same bytes from these functions), the row's formats and its "TTFT mostly queueing" note.
#include <cstdio>

#include "core/plan/plan.h"
#include "core/scenario/codec.h"
#include "core/step/columns.h"

namespace moe {

std::string plan_weights_text(const Scenario& base, const DtypeSel& w) {
    if (!w.is_auto) return dtype_name(w.value);
    const ModelSpec& m = base.model;
    if (m.weight_dtype == m.expert_dtype) return dtype_name(m.weight_dtype);
    return std::string(dtype_name(m.weight_dtype)) + "/" + dtype_name(m.expert_dtype);
}

std::string plan_kv_text(const DtypeSel& kv) { return kv.is_auto ? "bf16" : dtype_name(kv.value); }

bool plan_ttft_mostly_queueing(const PointResult& r) {
    return r.ok && r.ttft_ms > 0 && r.ttft_queue_ms > 0.5 * r.ttft_ms;
}

std::string plan_queue_note(const PointResult& r) {
    if (!plan_ttft_mostly_queueing(r)) return std::string();
    char buf[96];
    std::snprintf(buf, sizeof buf, "TTFT mostly queueing: %.0f%% of it waits for prefill", 100 * r.ttft_queue_ms / r.ttft_ms);
    return buf;
}

std::string plan_row_reason(const PointResult& r, int rank, std::string_view status, const Sla& sla) {
    if (rank > 0) return plan_queue_note(r);
    if (status == "dominated") return "dominated by a point of the front";
    return verdict_reason(r, sla);
}

void plan_row_scenario(const Scenario& base, const PlanPoint& p, Scenario& scratch) {
    scratch.serving = base.serving;  // an aggregated row after a disaggregated one keeps no pools
    apply_point(scratch, p);
}

std::string plan_csv_header() {
    return "rank,status,output_tokens_per_s_per_gpu,tokens_per_s_per_user,ttft_ms,tpot_ms,serving.ttft_ms_p90,"
           "serving.tpot_ms_p90,usd_per_mtok_output,"
           "joules_per_token,hardware,engine,gpus,replicas,tp,dp,ep,pp,batch,concurrency,mtp_draft_tokens,weights,kv_cache,"
           "two_batch_overlap,a2a_backend,mode,prefill_workers,prefill_tp,prefill_dp,prefill_ep,decode_workers,reason,"
           "command,prefill_command,link\n";
}

void append_plan_csv_row(std::string& out, const PlanCsvContext& c, const PlanPoint& p, const PointResult& r, int rank,
                         std::string_view status, double joules_per_token) {
    if (rank > 0) out += std::to_string(rank);
    out += ',';
    out += status;
    for (double v : {r.output_tokens_per_s_per_gpu, r.tokens_per_s_per_user, r.ttft_ms, r.tpot_ms}) {
        out += ',';
        if (r.ok) out += format_number(v);
    }
    // the band's high end (issue 28; eval's serving.ttft_ms_p90 / serving.tpot_ms_p90): empty without the serving
    // layer or for an engine without a band
    for (double v : {r.ttft_ms_p90, r.tpot_ms_p90}) {
        out += ',';
        if (r.ok && v > 0) out += format_number(v);
    }
    out += ',';
    if (r.ok && r.usd_per_mtok > 0) out += format_number(r.usd_per_mtok);
    out += ',';
    if (joules_per_token > 0) out += format_number(joules_per_token);
    out += ',';
    append_csv_cell(out, c.hardware);
    out += ',';
    out += serving_engine_name(c.engine);
    for (int v : {p.world(), p.replicas, p.tp, p.dp, p.ep, p.pp, p.batch, p.clients(), int(p.mtp)}) {
        out += ',';
        out += std::to_string(v);
    }
    out += ',' + plan_weights_text(*c.base, p.weights) + ',' + plan_kv_text(p.kv_cache) + ',' +
           (p.two_batch_overlap ? "true" : "false") + ',' + a2a_backend_name(p.a2a) + ',';
    const bool disagg = p.mode == PlanMode::disaggregated;
    out += disagg ? "disaggregated" : "aggregated";
    for (int v : {int(p.prefill_workers), int(p.prefill_tp), int(p.prefill_dp), int(p.prefill_ep), int(p.decode_workers)}) {
        out += ',';
        if (disagg) out += std::to_string(v);
    }
    out += ',';
    append_csv_cell(out, plan_row_reason(r, rank, status, c.sla));
    plan_row_scenario(*c.base, p, *c.scratch);
    out += ',';
    append_csv_cell(out, launch_command(*c.scratch, p, c.engine));
    out += ',';
    append_csv_cell(out, prefill_launch_command(*c.scratch, p, c.engine));
    out += ',';
    append_csv_cell(out, scenario_url(*c.scratch, c.base_url));
    out += '\n';
}

}  // namespace moe
