#pragma once
// The daemon's check before it takes any ticket (spec/agents.md, "fail fast"): every agent a
// phase may run exists and, where its dialect knows how to ask, reports a version. A board
// whose agent is not installed stops at once with what to do, instead of retrying every
// ticket until each escalates.

#include <board/board_config.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace board::orchestrator {

struct AgentCheck {
    std::string program;  ///< argv[0] as configured
    std::string phases;   ///< the phases that run it, e.g. `research, planning`
    DialectKind dialect = DialectKind::generic;
    bool ok = false;
    std::string version;  ///< what `--version` printed, one line; empty when not asked
    std::string problem;  ///< why not ok, with a hint: one line
};

/// Checks the agent of every phase that can run (review only while enabled), each program
/// once. `timeout` bounds each `--version`.
std::vector<AgentCheck> check_agents(const BoardConfig& config,
                                     std::chrono::milliseconds timeout = std::chrono::seconds{20});

/// Whether agents can be confined: /bin/true launched as an agent is, with empty rules.
/// Empty when it worked, else why not, one sentence.
std::string probe_sandbox();

/// The npm package or another way to get the program of `kind`, for a hint.
std::string install_hint(DialectKind kind);

}  // namespace board::orchestrator
