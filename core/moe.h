// moe.h — the MoE Roofline core in one include.
//
//   #include "core/moe.h"
//   auto r = moe::parse_scenario(text, moe::builtin_catalog());
//   auto e = moe::evaluate(r.scenario, moe::builtin_tables());   // estimate() + the serving layer
//   std::string json = moe::estimate_to_json(e).dump();
#pragma once
#include "catalog.h"
#include "codec.h"
#include "columns.h"
#include "engine.h"
#include "estimate.h"
#include "gpu_spec.h"
#include "model_spec.h"
#include "scenario.h"
#include "serving.h"
#include "tables.h"
#include "types.h"
