#include "agent_output/text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace board::agent_output {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// A lead byte range: how many continuation bytes follow, and the range of the first one
/// (narrowed to exclude overlongs, surrogates and code points above U+10FFFF).
struct Lead {
    std::uint8_t first;
    std::uint8_t last;
    std::uint8_t tail;
    std::uint8_t lo;
    std::uint8_t hi;
};

// Unicode §3.9, table 3-7 (well-formed UTF-8 byte sequences).
constexpr std::array<Lead, 8> leads{{{0xC2, 0xDF, 1, 0x80, 0xBF},
                                     {0xE0, 0xE0, 2, 0xA0, 0xBF},
                                     {0xE1, 0xEC, 2, 0x80, 0xBF},
                                     {0xED, 0xED, 2, 0x80, 0x9F},
                                     {0xEE, 0xEF, 2, 0x80, 0xBF},
                                     {0xF0, 0xF0, 3, 0x90, 0xBF},
                                     {0xF1, 0xF3, 3, 0x80, 0xBF},
                                     {0xF4, 0xF4, 3, 0x80, 0x8F}}};

struct Sequence {
    std::size_t length;  ///< bytes of the code point, or of the maximal invalid subpart
    bool valid;
};

/// The non-ASCII sequence at the start of `in` (not empty).
Sequence sequence_at(std::string_view in) {
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(in[i]); };
    const auto* lead = std::find_if(leads.begin(), leads.end(), [&](const Lead& l) {
        return byte(0) >= l.first && byte(0) <= l.last;
    });
    if (lead == leads.end()) return {1, false};
    const std::size_t tail = lead->tail;
    std::size_t i = 1;
    while (i <= tail && i < in.size()) {
        const std::uint8_t lo = i == 1 ? lead->lo : 0x80;
        const std::uint8_t hi = i == 1 ? lead->hi : 0xBF;
        if (byte(i) < lo || byte(i) > hi) break;
        ++i;
    }
    return {i, i == tail + 1};
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
    std::size_t i = 0;
    while (i < in.size()) {
        // Runs of ASCII are the common case: copy them in one go.
        std::size_t ascii = i;
        const std::size_t room = max_bytes - used;
        while (ascii < in.size() && ascii - i < room &&
               static_cast<std::uint8_t>(in[ascii]) < 0x80) {
            ++ascii;
        }
        if (ascii > i) {
            out.append(in.substr(i, ascii - i));
            used += ascii - i;
            i = ascii;
            continue;
        }
        const Sequence seq = sequence_at(in.substr(i));
        const std::string_view piece = seq.valid ? in.substr(i, seq.length) : replacement;
        if (piece.size() > max_bytes - used) break;
        out.append(piece);
        used += piece.size();
        i += seq.length;
    }
    return i;
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
