#pragma once
// The one UTF-8 check, utf8proc's: well-formed means Unicode table 3-7 (no overlong forms, no
// surrogates, nothing above U+10FFFF), the set Boost.JSON and yaml-cpp accept. Where text
// must be valid, each byte that is not part of a well-formed character becomes U+FFFD.

#include <cstddef>
#include <string>
#include <string_view>

namespace board {

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view utf8_replacement = "\xEF\xBF\xBD";

/// The length of the longest well-formed UTF-8 prefix of `text`: `text.size()` when all of it
/// is valid, else the offset of the first byte that is not part of a well-formed character.
std::size_t valid_utf8_prefix(std::string_view text);

/// `text` with each byte that is not part of a well-formed UTF-8 character replaced by U+FFFD.
std::string repair_utf8(std::string_view text);

/// repair_utf8() written at `out`, which has room for 3 bytes per byte of `text`; returns the
/// end of what it wrote.
char* copy_repaired_utf8(char* out, std::string_view text);

}  // namespace board
