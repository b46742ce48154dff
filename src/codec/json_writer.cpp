#include "json_writer.hpp"

#include "support/utf8.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>

namespace board::codec_detail {
namespace {

bool is_continuation(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

/// Bytes copied into a JSON string as they are: printable ASCII but `"` and `\`.
constexpr auto plain_ascii = [] {
    std::array<bool, 256> plain{};
    for (std::size_t c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
    return plain;
}();

/// Writes the escape of an ASCII byte that cannot appear in a JSON string as it is.
char* write_escape(char* o, unsigned char c) {
    const auto two = [&](char second) {
        *o++ = '\\';
        *o++ = second;
        return o;
    };
    switch (c) {
        case '"':
            return two('"');
        case '\\':
            return two('\\');
        case '\n':
            return two('n');
        case '\r':
            return two('r');
        case '\t':
            return two('t');
        case '\b':
            return two('b');
        case '\f':
            return two('f');
        default:
            break;
    }
    constexpr std::string_view hex = "0123456789abcdef";
    constexpr std::string_view prefix = "\\u00";
    o = std::copy(prefix.begin(), prefix.end(), o);
    *o++ = hex[c >> 4];
    *o++ = hex[c & 0xF];
    return o;
}

/// Writes `text` escaped (without quotes) at `o`, which has room for 6 bytes per byte.
/// Well-formed characters are copied as they are, each byte not part of one becomes U+FFFD.
char* write_escaped(char* o, std::string_view text) {
    std::size_t at = 0;
    while (at < text.size()) {
        const auto c = static_cast<unsigned char>(text[at]);
        if (plain_ascii[c]) {
            *o++ = static_cast<char>(c);
            ++at;
        } else if (c < 0x80) {
            o = write_escape(o, c);
            ++at;
        } else {
            // A run of non-ASCII bytes: no character spans an ASCII byte.
            std::size_t end = at + 1;
            while (end < text.size() && static_cast<unsigned char>(text[end]) >= 0x80) ++end;
            o = copy_repaired_utf8(o, text.substr(at, end - at));
            at = end;
        }
    }
    return o;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
    JsonWriter{out}.string(text);
}

char* JsonWriter::room(std::size_t n) {
    // resize() fills what it adds with zeros, so add only in proportion to what this writer
    // has written: appending a line to a long batch must not touch the whole batch. The
    // string's own capacity still grows geometrically.
    if (out_.size() - size_ < n) {
        const std::size_t written = size_ - start_;
        out_.resize(size_ + std::max({n, written, std::size_t{256}}));
    }
    return out_.data() + size_;
}

char* JsonWriter::separated(std::size_t n) {
    char* o = room(n + 1);
    if (need_comma_) *o++ = ',';
    need_comma_ = true;
    return o;
}

void JsonWriter::punctuation(char c, bool value_done) {
    char* o = value_done ? room(1) : separated(1);
    *o++ = c;
    commit(o);
    need_comma_ = value_done;
}

void JsonWriter::key(std::string_view name) {
    char* o = separated(name.size() + 3);
    *o++ = '"';
    o = std::copy(name.begin(), name.end(), o);
    *o++ = '"';
    *o++ = ':';
    commit(o);
    need_comma_ = false;
}

void JsonWriter::string(std::string_view text) {
    // Escaping takes 6 bytes per byte at most (`\u001f`): a long text goes in slices so that
    // the room asked for stays small.
    constexpr std::size_t slice = 1024;
    char* o = separated(6 * std::min(text.size(), slice) + 2);
    *o++ = '"';
    while (text.size() > slice) {
        // Cut before a byte that starts a character, never inside a UTF-8 sequence.
        // If the four bytes up to the cut all continue a sequence, none of them can be part of
        // a well-formed one that crosses the cut, and any cut is as good.
        std::size_t n = slice;
        for (std::size_t back = 0; back < 4; ++back) {
            if (!is_continuation(static_cast<unsigned char>(text[slice - back]))) {
                n = slice - back;
                break;
            }
        }
        commit(write_escaped(o, text.substr(0, n)));
        text.remove_prefix(n);
        o = room(6 * std::min(text.size(), slice) + 1);
    }
    o = write_escaped(o, text);
    *o++ = '"';
    commit(o);
}

void JsonWriter::integer(std::int64_t number) {
    char* o = separated(20);
    commit(std::to_chars(o, o + 20, number).ptr);
}

void JsonWriter::number(double number) {
    // JSON has no NaN or infinity; 0 keeps the line readable (callers keep doubles finite).
    if (!std::isfinite(number)) number = 0.0;
    // Shortest form that reads back to the same double; integral values print without a
    // fraction ("10"), which the decoder accepts for a double.
    char* o = separated(32);
    commit(std::to_chars(o, o + 32, number).ptr);
}

void JsonWriter::boolean(bool value) {
    const std::string_view text = value ? "true" : "false";
    char* o = separated(text.size());
    commit(std::copy(text.begin(), text.end(), o));
}

void JsonWriter::timestamp(UnixMillis at) {
    char* o = separated(timestamp_size + 2);
    *o++ = '"';
    o = write_timestamp(o, at);
    *o++ = '"';
    commit(o);
}

}  // namespace board::codec_detail
