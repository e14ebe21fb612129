// catalog.h — presets: models (HF config.json), hardware (GpuSpec JSON) and scenarios, by id.
//
//   const moe::Catalog& cat = moe::builtin_catalog();        // embedded presets/ (no file I/O)
//   moe::Catalog mine = cat;  mine.add("models", "my-model", text, errs);   // a user's own config (CLI --presets-dir)
//   const moe::ModelSpec* m = mine.model("deepseek-v3");
#pragma once
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario/gpu_spec.h"
#include "core/scenario/model_spec.h"
#include "core/base/types.h"

namespace moe {

struct CatalogEntry {
    std::string id;
    std::string description;
    nlohmann::json json;
};

class Catalog {
public:
    // kind: "models", "hardware" or "scenarios". Parses and checks the text; a model or GPU must resolve.
    bool add(std::string_view kind, std::string_view id, std::string_view text, Issues& errors);
    const std::vector<CatalogEntry>& models() const { return models_; }
    const std::vector<CatalogEntry>& hardware() const { return hardware_; }
    const std::vector<CatalogEntry>& scenarios() const { return scenarios_; }
    const ModelSpec* model(std::string_view id) const;
    const GpuSpec* gpu(std::string_view id) const;
    const CatalogEntry* scenario(std::string_view id) const;

private:
    std::vector<CatalogEntry> models_, hardware_, scenarios_;
    std::vector<ModelSpec> model_specs_;   // parallel to models_
    std::vector<GpuSpec> gpu_specs_;       // parallel to hardware_
};

// The presets compiled into the binary (presets/ directory, via the generated embedded_data.cpp).
const Catalog& builtin_catalog();

}  // namespace moe
