#pragma once
// tests/support/run_cli.hpp, with GCC 12's false -Wrestrict on `"literal" + std::string&&`
// (GCC bug 105329, fires only in optimized builds) silenced for that header alone.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "support/run_cli.hpp"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
