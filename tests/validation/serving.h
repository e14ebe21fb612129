// serving.h — the serving set: the serving layer against 2,538 measured serving runs (issue 12, DESIGN §8.3).
//
//   moe-validate --serving                                     per engine / GPU / mode: rows, median and worst |error|
//                                                              of TTFT and TPOT with each model family left out of
//                                                              the fit; exit 1 if the bar (median <= 15%, >= 90% of
//                                                              rows evaluated) is not met
//   moe-validate --serving --fit-serving [--write-engines presets/engines.json]   refit the engine constants on all
//                                                              rows (what ships), and report the leave-one-family-out
//   moe-validate --serving --write docs/validation.md --readme README.md           regenerate the serving sections
//   moe-validate --serving --check-fit                         the shipped presets/engines.json is what the fit gives
//   moe-validate --serving --rows                              also each row: measured, predicted and the parts
//   moe-validate --serving --per-group                         constants fitted in-sample per (engine, family, GPU):
//                                                              what the model's structure reaches with free constants
//
// Rows come from tests/validation/serving_public.csv (a verbatim copy of ../shared/reference/serving_public.csv:
// AIConfigurator's silicon sample, ai-dynamo/aiconfigurator @095f58a5, Apache-2.0).
#pragma once

namespace val {

// Returns the exit status (0 ok, 1 a check failed, 2 bad usage or unreadable input).
int serving_main(int argc, char** argv);

}  // namespace val
