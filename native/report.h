// report.h — text the CLI prints for people: the `eval --format table` report and the `presets` listings.
//
//   std::string t = cli::estimate_table(scenario, estimate);     // headline, operators, memory
//   std::string l = cli::presets_listing(catalog, "models");     // "" = models, hardware and scenarios
#pragma once
#include <string>
#include <string_view>

#include "core/scenario/catalog.h"
#include "core/step/estimate.h"
#include "core/scenario/scenario.h"

namespace cli {

std::string estimate_table(const moe::Scenario& s, const moe::Estimate& e);

// kind: "", "models", "hardware", "scenarios", "fields" (settable scenario paths) or "columns" (output columns).
// Returns false for an unknown kind.
bool presets_listing(const moe::Catalog& catalog, std::string_view kind, std::string& out);

}  // namespace cli
