#pragma once
// What an agent prints, read as it arrives, in bounded memory however much it prints.
//
// Every byte goes to the run's log file (the caller writes it); this class splits the stream
// into lines and hands them to the agent's dialect (agent_dialect.hpp), which keeps only what
// the outcome needs: the agent's final message (or, for a text agent, the lines that can hold
// a tag), its cost, tokens, session and error.

#include <board/agent_dialect.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace board::orchestrator {

struct CapturedOutput {
    AgentReport report;
    std::uint64_t bytes = 0;  ///< everything the agent printed
};

class OutputCapture {
public:
    /// `reader`: the dialect's; null reads the output as a `generic` agent with no prompt.
    /// `max_line_bytes`: a longer line is handed over in pieces of this size.
    explicit OutputCapture(std::shared_ptr<OutputReader> reader = nullptr,
                           std::size_t max_line_bytes = 1u << 20);

    void feed(std::string_view bytes);
    /// Processes a last unterminated line and returns what was read. Call once.
    CapturedOutput finish(int exit_code);

    /// The last thing the agent said or did, at most 200 bytes: for a live view.
    const std::string& last_line() const { return reader_->progress(); }

    /// Why the run cannot succeed and must be stopped; empty while it may (OutputReader).
    const std::string& hopeless() const { return reader_->hopeless(); }

private:
    std::shared_ptr<OutputReader> reader_;
    std::size_t max_line_bytes_;
    std::string pending_;  ///< the current partial line
    std::uint64_t bytes_ = 0;
};

}  // namespace board::orchestrator
