#pragma once
// What an agent prints, read as it arrives, in bounded memory however much it prints.
//
// Every byte goes to the run's log file (the caller writes it); this class keeps only what the
// outcome needs: the text that can hold a signal or a question, the cost and session id of
// Claude Code's stream-json, and the last line for the live view.
//
// Stream-json lines (`{"type":"assistant",...}`) are unwrapped to the assistant's text, so a
// signal is read from what the agent said, not from a tool's output it quoted; any other line
// is text as printed. Of that text only the lines that matter to scan_signals() and
// scan_questions() are kept: fence lines, lines with a tag, and the lines inside an open tag.
// Everything else cannot change the scan's result (signals are found by their tags; fences
// are the only multi-line state), so dropping it keeps the scan exact and memory flat.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace board::orchestrator {

struct CapturedOutput {
    std::string scan_text;  ///< the relevant lines, in order, `\n`-terminated
    std::optional<double> cost_usd;
    std::string session;
    std::uint64_t bytes = 0;  ///< everything the agent printed
    std::vector<std::string> warnings;
};

class OutputCapture {
public:
    /// `max_scan_bytes`: a cap on the kept text; past it the oldest half is dropped (the last
    /// signal is the one that counts) with a warning. `max_line_bytes`: a longer line is
    /// processed in pieces of this size.
    explicit OutputCapture(std::size_t max_scan_bytes = 16u << 20,
                           std::size_t max_line_bytes = 1u << 20);

    void feed(std::string_view bytes);
    /// Processes a last unterminated line and returns what was kept. Call once.
    CapturedOutput finish();

    /// The last non-blank line of text seen, at most 200 bytes: for a live view.
    const std::string& last_line() const { return last_line_; }

private:
    void on_line(std::string_view line);
    void on_text(std::string_view text);
    void on_text_line(std::string_view line);

    std::size_t max_scan_bytes_;
    std::size_t max_line_bytes_;
    std::string pending_;  ///< the current partial line
    CapturedOutput out_;
    std::string last_line_;
    bool saw_assistant_text_ = false;
    bool in_promise_ = false;
    bool in_question_ = false;
    bool dropped_ = false;
};

}  // namespace board::orchestrator
