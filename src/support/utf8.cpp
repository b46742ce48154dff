#include "support/utf8.hpp"

#include <algorithm>
#include <utf8proc.h>

namespace board {

std::size_t valid_utf8_prefix(std::string_view text) {
    const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
    std::size_t at = 0;
    while (at < text.size()) {
        if (bytes[at] < 0x80) {  // ASCII, the common case: no call
            ++at;
            continue;
        }
        utf8proc_int32_t code_point = 0;
        const utf8proc_ssize_t length = utf8proc_iterate(
            bytes + at, static_cast<utf8proc_ssize_t>(text.size() - at), &code_point);
        if (length <= 0) break;
        at += static_cast<std::size_t>(length);
    }
    return at;
}

char* copy_repaired_utf8(char* out, std::string_view text) {
    while (!text.empty()) {
        const std::size_t valid = valid_utf8_prefix(text);
        out = std::copy_n(text.data(), valid, out);
        text.remove_prefix(valid);
        if (text.empty()) break;
        out = std::copy(utf8_replacement.begin(), utf8_replacement.end(), out);
        text.remove_prefix(1);
    }
    return out;
}

std::string repair_utf8(std::string_view text) {
    const std::size_t valid = valid_utf8_prefix(text);
    std::string out{text.substr(0, valid)};
    if (valid == text.size()) return out;
    out.resize(valid + 3 * (text.size() - valid));
    const char* end = copy_repaired_utf8(out.data() + valid, text.substr(valid));
    out.resize(static_cast<std::size_t>(end - out.data()));
    return out;
}

}  // namespace board
