#include "agent_output/markup.hpp"

#include <algorithm>
#include <cstring>

namespace board::agent_output {
namespace {

constexpr auto npos = std::string_view::npos;

/// A fence line: at most 3 spaces, then 3 or more backticks or tildes, then `rest`.
struct FenceLine {
    char mark = '`';
    std::size_t length = 0;
    std::string_view rest;
};

std::optional<FenceLine> fence_line(std::string_view line) {
    std::size_t i = 0;
    while (i < 3 && i < line.size() && line[i] == ' ') ++i;
    if (i == line.size() || (line[i] != '`' && line[i] != '~')) return std::nullopt;
    const char mark = line[i];
    std::size_t j = i;
    while (j < line.size() && line[j] == mark) ++j;
    if (j - i < 3) return std::nullopt;
    return FenceLine{mark, j - i, line.substr(j)};
}

bool is_opening(const FenceLine& f) {
    // CommonMark: a backtick fence's info string holds no backtick, so "```x```" on one line
    // is inline code, not a fence.
    return f.mark == '~' || f.rest.find('`') == npos;
}

bool is_blank(std::string_view s) {
    return std::all_of(
        s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

TagScanner::TagScanner(std::string_view text, std::string_view name)
    : text_(text) {
    // Appended piece by piece: `"<" + std::string{name}` trips GCC 12's -Wrestrict at -O3.
    open_.append("<").append(name).append(">");
    close_.append("</").append(name).append(">");
}

std::size_t TagScanner::line_end(std::size_t offset) const {
    if (offset >= text_.size()) return text_.size();
    const void* nl = std::memchr(text_.data() + offset, '\n', text_.size() - offset);
    return nl == nullptr ? text_.size()
                         : static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data());
}

std::size_t TagScanner::line_start_at_or_after(std::size_t offset) const {
    if (offset == 0 || offset >= text_.size() || text_[offset - 1] == '\n') return offset;
    const std::size_t end = line_end(offset);
    return end == text_.size() ? end : end + 1;
}

std::size_t TagScanner::candidate_line_from(std::size_t line_start) const {
    // One memchr per line; the check itself looks at the first few bytes only.
    for (std::size_t s = line_start; s < text_.size();) {
        const std::size_t end = line_end(s);
        if (const auto f = fence_line(text_.substr(s, end - s)); f && is_opening(*f)) return s;
        s = end + 1;
    }
    return npos;
}

std::size_t TagScanner::next_marker() {
    // The cache holds the first marker at or after an earlier position; while it is not
    // behind pos_ it is still the first one at or after pos_.
    if (marker_valid_ && (marker_ == npos || marker_ >= pos_)) return marker_;
    marker_valid_ = true;
    const std::string_view name = std::string_view{open_}.substr(1);  // `name>`
    for (std::size_t from = pos_; from < text_.size();) {
        const void* lt = std::memchr(text_.data() + from, '<', text_.size() - from);
        if (lt == nullptr) break;
        const auto at = static_cast<std::size_t>(static_cast<const char*>(lt) - text_.data());
        const std::string_view after = text_.substr(at + 1);
        if (after.starts_with(name) ||
            (after.starts_with('/') && after.substr(1).starts_with(name))) {
            return marker_ = at;
        }
        from = at + 1;
    }
    return marker_ = npos;
}

std::size_t TagScanner::next_opening_fence() {
    if (fence_valid_ && (fence_ == npos || fence_ >= pos_)) return fence_;
    fence_valid_ = true;
    return fence_ = candidate_line_from(line_start_at_or_after(pos_));
}

bool TagScanner::skip_fenced_block() {
    for (std::size_t s = line_start_at_or_after(pos_); s < text_.size();) {
        const std::size_t end = line_end(s);
        const auto f = fence_line(text_.substr(s, end - s));
        if (f && f->mark == open_fence_.mark && f->length >= open_fence_.length &&
            is_blank(f->rest)) {
            pos_ = end;
            return true;
        }
        s = end + 1;
    }
    pos_ = text_.size();
    return false;
}

std::optional<TagEvent> TagScanner::next() {
    using Kind = TagEvent::Kind;
    while (pos_ < text_.size()) {
        const std::size_t marker = next_marker();
        const std::size_t fence = next_opening_fence();
        if (marker == npos && fence == npos) break;
        if (fence < marker) {
            const std::size_t end = line_end(fence);
            const auto f = fence_line(text_.substr(fence, end - fence));
            open_fence_ = Fence{f->mark, f->length};
            pos_ = end;
            if (!skip_fenced_block()) break;
            continue;
        }
        if (text_[marker + 1] == '/') {
            pos_ = marker + close_.size();
            return TagEvent{Kind::stray_close, marker, {}};
        }
        // On a broken tag, resume right after `<name>` so that fences and tags inside what
        // looked like its body are still seen.
        const std::size_t body = marker + open_.size();
        pos_ = body;
        const std::size_t after = next_marker();
        if (after == npos) return TagEvent{Kind::unterminated, marker, {}};
        if (text_[after + 1] != '/') return TagEvent{Kind::nested, marker, {}};
        pos_ = after + close_.size();
        return TagEvent{Kind::tag, marker, text_.substr(body, after - body)};
    }
    pos_ = text_.size();
    return std::nullopt;
}

}  // namespace board::agent_output
