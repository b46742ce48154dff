#include "agent_output/text.hpp"

#include "support/utf8.hpp"

#include <algorithm>
#include <cstdint>

namespace board::agent_output {
namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::string_view trim(std::string_view text) {
    std::size_t begin = 0;
    std::size_t end = text.size();
    while (begin < end && is_space(text[begin])) ++begin;
    while (end > begin && is_space(text[end - 1])) --end;
    return text.substr(begin, end - begin);
}

std::size_t append_utf8(std::string& out, std::string_view in, std::size_t max_bytes) {
    std::size_t used = 0;
    std::size_t at = 0;
    while (at < in.size()) {
        // Only what can fit is checked, and the 4 bytes of a character begun before the cap.
        const std::size_t room = max_bytes - used;
        const std::string_view window = in.substr(at, std::min(room, in.size() - at) + 4);
        const std::size_t valid = valid_utf8_prefix(window);
        if (valid > room) {  // stop before the first character that does not fit
            std::size_t cut = room;
            while (cut > 0 && (static_cast<std::uint8_t>(window[cut]) & 0xC0) == 0x80) --cut;
            out.append(window.substr(0, cut));
            return at + cut;
        }
        out.append(window.substr(0, valid));
        used += valid;
        at += valid;
        if (at == in.size()) break;
        // A byte not part of a character (one that ends within the window would be valid).
        if (max_bytes - used < utf8_replacement.size()) break;
        out.append(utf8_replacement);
        used += utf8_replacement.size();
        ++at;
    }
    return at;
}

std::string quoted(std::string_view text, std::size_t max_bytes) {
    std::string clean;
    const std::size_t consumed = append_utf8(clean, text.substr(0, max_bytes + 4), max_bytes);
    std::string out = "\"";
    for (const char c : clean) {
        const auto u = static_cast<std::uint8_t>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7F) {
            constexpr std::string_view hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xF];
        } else {
            out += c;
        }
    }
    if (consumed < text.size()) out += "…";
    out += '"';
    return out;
}

std::size_t LineCounter::line_of(std::size_t offset) {
    offset = std::min(offset, text_.size());
    if (offset < offset_) {
        offset_ = 0;
        line_ = 1;
    }
    const auto* first = text_.data() + offset_;
    line_ += static_cast<std::size_t>(std::count(first, text_.data() + offset, '\n'));
    offset_ = offset;
    return line_;
}

void Warnings::finish() {
    if (dropped_ == 0) return;
    out_.push_back("... and " + std::to_string(dropped_) + " more warning" +
                   (dropped_ == 1 ? "" : "s"));
}

}  // namespace board::agent_output
