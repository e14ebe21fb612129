// main.cpp — the doctest runner of the unit tests (natively and as wasm under node).
// The tests themselves live beside this file, one file per area of the core.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
