#pragma once
// Shared by the signal scan tests: a table row of what a scan should give, and its check.

#include <board/agent_output.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

namespace Catch {
template <>
struct StringMaker<board::Signal> {
    static std::string convert(board::Signal s) { return std::string{board::to_string(s)}; }
};
}  // namespace Catch

namespace board::signal_scan_test {

/// What a scan should give. Warnings are compared exactly: their wording is what the human
/// reads in the warning note.
struct Row {
    const char* what;
    std::string output;
    std::optional<Signal> signal;
    std::string context;
    std::vector<Signal> distinct;
    std::vector<std::string> warnings;
};

inline void check(const Row& row) {
    CAPTURE(row.what, row.output);
    const SignalScan scan = scan_signals(row.output);
    CHECK(scan.signal == row.signal);
    CHECK(scan.context == row.context);
    CHECK(scan.distinct == row.distinct);
    CHECK(scan.warnings == row.warnings);
}

}  // namespace board::signal_scan_test
