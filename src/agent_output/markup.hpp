#pragma once
// Finding `<tag>…</tag>` in agent output outside Markdown fenced code, in one forward pass.
// The rules are the contract of board/agent_output.hpp; this is their single implementation.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace board::agent_output {

/// What the scanner met, in output order.
struct TagEvent {
    enum class Kind {
        tag,           ///< `<tag>body</tag>`
        unterminated,  ///< `<tag>` with no `</tag>` before the end of the output
        nested,        ///< `<tag>` with another `<tag>` before its `</tag>`
        stray_close,   ///< `</tag>` with no `<tag>` before it
    };
    Kind kind = Kind::tag;
    std::size_t at = 0;     ///< offset of the `<` that starts the tag
    std::string_view body;  ///< for `tag`: the text between the tags, untrimmed
};

/// Yields the tags named `name` (`promise`, `question`) that are outside fenced code blocks.
///
/// Each search is done with memchr and remembered until the scan passes it, so the whole
/// pass is linear however the tags nest or break, and allocates nothing.
class TagScanner {
public:
    TagScanner(std::string_view text, std::string_view name);

    /// The next event, or nullopt at the end of the output.
    std::optional<TagEvent> next();

private:
    struct Fence {
        char mark = '`';
        std::size_t length = 0;
    };

    std::size_t next_marker();
    std::size_t next_opening_fence();
    [[nodiscard]] std::size_t line_end(std::size_t offset) const;
    [[nodiscard]] std::size_t line_start_at_or_after(std::size_t offset) const;
    [[nodiscard]] std::size_t candidate_line_from(std::size_t line_start) const;
    bool skip_fenced_block();

    std::string_view text_;
    std::string open_;   ///< `<name>`
    std::string close_;  ///< `</name>`
    std::size_t pos_ = 0;
    std::size_t marker_ = 0;  ///< cached next `<name>` or `</name>` at or after it was sought
    bool marker_valid_ = false;
    std::size_t fence_ = 0;  ///< cached next opening fence line
    bool fence_valid_ = false;
    Fence open_fence_;
};

}  // namespace board::agent_output
