// The helpers every command's declaration shares (command.hpp).

#include "cli/command.hpp"

#include <fmt/format.h>

namespace board::cli {

std::string a_seq(const std::string& text) {
    const bool digits = !text.empty() && text.size() <= 18 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    if (digits && text.find_first_not_of('0') != std::string::npos) return {};
    return fmt::format("\"{}\" is not a seq (1, 2, 3...: board log ID shows them)", text);
}

std::string join_lines(std::initializer_list<std::string_view> lines) {
    std::string out;
    for (const auto line : lines) {
        out += line;
        out += '\n';
    }
    return out;
}

}  // namespace board::cli
