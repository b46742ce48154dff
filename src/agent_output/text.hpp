#pragma once
// Small text helpers shared by the signal and question scanners: trimming, UTF-8 repair,
// quoting for warnings, line numbers and the capped warning list.

#include <board/agent_output.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace board::agent_output {

/// `text` without leading and trailing ASCII whitespace.
std::string_view trim(std::string_view text);

/// Appends `in` to `out` as valid UTF-8: each byte not part of a well-formed character becomes
/// U+FFFD (support/utf8.hpp). Stops before the code point that would make the appended part
/// longer than `max_bytes`. Returns the number of input bytes consumed, so the caller can tell
/// whether everything fitted.
std::size_t append_utf8(std::string& out, std::string_view in, std::size_t max_bytes);

/// `text` for a warning: double-quoted, valid UTF-8, control characters escaped, at most
/// about `max_bytes` of it kept (then `…`), so a warning is always one short line.
std::string quoted(std::string_view text, std::size_t max_bytes = 60);

/// 1-based line numbers of byte offsets. Cheap for increasing offsets (each byte counted
/// once); an earlier offset restarts the count.
class LineCounter {
public:
    explicit LineCounter(std::string_view text)
        : text_(text) {}

    std::size_t line_of(std::size_t offset);

private:
    std::string_view text_;
    std::size_t offset_ = 0;
    std::size_t line_ = 1;
};

/// Collects at most `max_scan_warnings` warnings into a list that starts empty, then counts
/// the rest. `add` takes a callable so a message past the cap is never formatted (nor its
/// line counted).
class Warnings {
public:
    explicit Warnings(std::vector<std::string>& out)
        : out_(out) {}

    template <class MakeMessage>
    void add(MakeMessage&& make) {
        if (out_.size() < max_scan_warnings) {
            out_.push_back(make());
        } else {
            ++dropped_;
        }
    }

    /// Appends the `... and N more warnings` line if any were dropped.
    void finish();

private:
    std::vector<std::string>& out_;
    std::size_t dropped_ = 0;
};

}  // namespace board::agent_output
