// calibrate_cli.h — `moe-roofline calibrate RUNS.csv -o ENGINES.json` and the `--engines FILE` option of eval,
// sweep and plan (issue 28; DESIGN §11.4). The fit itself is native/calibrate.h.
#pragma once
#include <string>

#include "core/scenario/catalog.h"
#include "core/serving/engine.h"

namespace cli {

struct CalibrateCliOptions {
    std::string runs;          // RUNS.csv (reference/serving_public.csv's columns)
    std::string output;        // -o ENGINES.json (written under a temporary name, renamed when complete)
    int bootstrap = 30;        // --bootstrap N
    int folds = 0;             // --folds K (0: leave-one-out up to 10 runs, else 5-fold)
    bool quiet = false;        // no progress lines on stderr
    std::string test;          // --test OTHER.csv: runs kept out of the fit, predicted by the shipped and calibrated constants
};
// Prints the report on standard output; returns the exit status (2: bad runs file, none evaluable). UsageError on
// an unreadable or malformed file (naming the line and column).
int run_calibrate(const moe::Catalog& catalog, const CalibrateCliOptions& o);

// --engines FILE: a calibration (presets/engines.json's format) over the shipped constants; UsageError naming the
// file and the key when it does not parse.
moe::EngineSet load_engines_file(const std::string& path);
// The same from JSON text (`origin` names it in messages: a path, "engines").
moe::EngineSet engines_from_text(const std::string& text, const std::string& origin);

// Uses `set` for every evaluation of this thread while in scope (moe::use_engines is per thread; parallel_chunks and
// sweep hand it to their workers), then the shipped constants again.
class EnginesScope {
public:
    explicit EnginesScope(const moe::EngineSet* set) : active_(set != nullptr) {
        if (active_) moe::use_engines(set);
    }
    ~EnginesScope() {
        if (active_) moe::use_engines(nullptr);
    }
    EnginesScope(const EnginesScope&) = delete;
    EnginesScope& operator=(const EnginesScope&) = delete;

private:
    bool active_;
};

}  // namespace cli
