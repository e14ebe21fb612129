// moe.h — the MoE Roofline core in one include.
//
//   #include "core/moe.h"
//   auto r = moe::parse_scenario(text, moe::builtin_catalog());
//   auto e = moe::evaluate(r.scenario, moe::builtin_tables());   // estimate() + the serving layer
//   std::string json = moe::estimate_to_json(e).dump();
#pragma once
#include "core/base/json_text.h"
#include "core/scenario/catalog.h"
#include "core/scenario/codec.h"
#include "core/step/columns.h"
#include "core/serving/engine.h"
#include "core/step/estimate.h"
#include "core/step/power.h"
#include "core/scenario/gpu_spec.h"
#include "core/scenario/model_spec.h"
#include "core/scenario/scenario.h"
#include "core/serving/serving.h"
#include "core/serving/simulate.h"
#include "core/serving/surface.h"
#include "core/data/tables.h"
#include "core/base/types.h"
